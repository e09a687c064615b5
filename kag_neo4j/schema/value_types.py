"""Values as the schema types them: the one place a value of ``Integer``, ``Float`` or a KAG
standard type (``STD.<Name>``) is parsed and given its canonical form.

Used by the constraint checker (:func:`kag_neo4j.schema.constraints.check_value`), which every
write path calls: text extraction, structured records (a CSV cell is text; the schema says what
it is) and rule-derived properties.

* ``Integer``: an int, an integral float, or an integer numeral (``"58"``, ``"1,234"``, ``"12.0"``),
  written as an int (``"4.5"``, ``"1e3"`` are not integers);
* ``Float``: a finite number or a decimal numeral (``"4.5"``, ``"1,234.5"``, ``".5"``, ``"-1e3"``),
  written as a float (``"1,5"`` is not a number);
* ``STD.<Name>`` (:data:`STANDARD_TYPES`, names case-insensitive): the text in its canonical
  spelling, then checked when kag-neo4j knows the type's shape - phone numbers without spaces,
  dashes, brackets or a ``+86``/``0086`` prefix; identity numbers upper-cased without spaces;
  e-mail addresses lower-cased; dates as ``yyyy-mm-dd`` (from ``20230906``, ``2023/9/6``,
  ``2023年9月6日``...). Masked values (``150****3237``) keep their mask and are held against the
  type's shape with the masked digits unknown. A standard type kag-neo4j does not know is text;
* anything else (``Text``): unchanged.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Any

from kag_neo4j.schema.models import STANDARD_PREFIX

_INTEGER = re.compile(r"[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.0*)?")
_FLOAT = re.compile(r"[+-]?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_PHONE_JUNK = re.compile(r"[\s\-().（）]")
_PHONE_PREFIX = re.compile(r"^(?:\+|00)86(?=\d)")
_DATE = re.compile(r"^(\d{4})[-/.年]?(\d{1,2})[-/.月]?(\d{1,2})日?$")
_MASK = "*"


class ValueTypeMismatch(ValueError):
    """A value that does not fit its value type; ``expected`` says what would."""

    def __init__(self, expected: str) -> None:
        super().__init__(expected)
        self.expected = expected


def value_text(value: Any) -> str:
    """The text form of a scalar: ``42`` for 42 and 42.0, ``true`` for True, strings stripped."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return str(int(value))
    return value.strip() if isinstance(value, str) else str(value)


# --------------------------------------------------------------------------- standard types


def _phone(text: str) -> str:
    return _PHONE_PREFIX.sub("", _PHONE_JUNK.sub("", text))


def _id_number(text: str) -> str:
    return re.sub(r"\s", "", text).upper()


def _iso_date(text: str) -> str:
    match = _DATE.match(text)
    if match is None:
        return text
    year, month, day = match.groups()
    return f"{year}-{int(month):02d}-{int(day):02d}"


def _shape(pattern: str) -> Callable[[str], bool]:
    """Full match of ``pattern``, a masked character standing for any digit."""
    compiled = re.compile(pattern)
    return lambda text: compiled.fullmatch(text.replace(_MASK, "0")) is not None


def _id_card(text: str) -> bool:
    """A mainland China resident id number: 18 characters with its ISO 7064 MOD 11-2 check digit
    (a masked number: its shape only)."""
    if _MASK in text:
        return re.fullmatch(r"[\d*]{17}[\dX*]", text) is not None
    if not re.fullmatch(r"\d{17}[\dX]", text):
        return False
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    total = sum(int(d) * w for d, w in zip(text[:17], weights))
    return "10X98765432"[total % 11] == text[17]


def _calendar_date(text: str) -> bool:
    match = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", text)
    if match is None:
        return False
    try:
        date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class StandardType:
    """A KAG standard type: what its values look like (``valid``; None: not checked) and their canonical text."""

    description: str
    canonical: Callable[[str], str] = str.strip
    valid: Callable[[str], bool] | None = None


_MOBILE = r"1[3-9]\d{9}"
_PHONE_TEXT = StandardType("a phone number", _phone)
_ID_TEXT = StandardType("an identity number", _id_number)

#: the standard types, by name; ``valid`` set: checked, else only normalised
STANDARD_TYPES: dict[str, StandardType] = {
    "ChinaMobile": StandardType("a mainland China mobile number, 1[3-9] and 9 digits (+86 allowed)", _phone,
                                _shape(_MOBILE)),
    "ChinaTelCode": StandardType("a mainland China phone number: a mobile number or an area code and 7-8 digits",
                                 _phone, _shape(rf"{_MOBILE}|0\d{{2,3}}\d{{7,8}}|\d{{7,8}}")),
    "Email": StandardType("an e-mail address, name@domain.tld", lambda t: t.strip().casefold(),
                          lambda t: re.fullmatch(r"[^@\s]+@[^@\s.]+(?:\.[^@\s.]+)+", t) is not None),
    "IdCardNo": StandardType("an 18-character resident id number with a valid check digit", _id_number, _id_card),
    "MacAddress": StandardType("a MAC address, six hex pairs separated by ':' or '-'", str.strip,
                               lambda t: re.fullmatch(r"[0-9A-Fa-f]{2}(?:([:\-])[0-9A-Fa-f]{2})(?:\1[0-9A-Fa-f]{2}){4}",
                                                      t) is not None),
    "Date": StandardType("a calendar date, YYYYMMDD or YYYY-MM-DD (written YYYY-MM-DD)",
                         lambda t: _iso_date(t.strip()), _calendar_date),
    "Timestamp": StandardType("a Unix time in seconds or milliseconds (10 or 13 digits)", str.strip,
                              lambda t: re.fullmatch(r"\d{10}|\d{13}", t) is not None),
    **{name: _PHONE_TEXT for name in ("Mobile", "Phone", "PhoneNumber", "Telephone", "Tel", "CellPhone")},
    **{name: _ID_TEXT for name in ("IdCard", "IdNo", "CertNo", "Passport", "LicenseNo", "CreditCode")},
}
_BY_FOLDED = {name.casefold(): standard for name, standard in STANDARD_TYPES.items()}


def standard_type(value_type: str) -> StandardType | None:
    """The standard type ``STD.<Name>`` denotes (case-insensitive), None when unknown or not ``STD.*``."""
    if not value_type.startswith(STANDARD_PREFIX):
        return None
    return _BY_FOLDED.get(value_type[len(STANDARD_PREFIX):].casefold())


# --------------------------------------------------------------------------- values


def typed(value_type: str, value: str | int | float | bool) -> Any:
    """``value`` as a value of ``value_type`` is written; raises :class:`ValueTypeMismatch`."""
    if value_type == "Integer":
        if isinstance(value, bool):
            raise ValueTypeMismatch("an integer")
        if isinstance(value, int):
            return value
        if isinstance(value, float):
            if math.isfinite(value) and value.is_integer():
                return int(value)
            raise ValueTypeMismatch("an integer")
        text = value.strip()
        if not _INTEGER.fullmatch(text):
            raise ValueTypeMismatch("an integer")
        return int(text.replace(",", "").split(".")[0])
    if value_type == "Float":
        if isinstance(value, bool):
            raise ValueTypeMismatch("a number")
        number = float(value) if isinstance(value, (int, float)) else None
        if number is None:
            text = value.strip()
            if not _FLOAT.fullmatch(text):
                raise ValueTypeMismatch("a number")
            number = float(text.replace(",", ""))
        if not math.isfinite(number):
            raise ValueTypeMismatch("a finite number")
        return number
    if value_type.startswith(STANDARD_PREFIX):
        standard = standard_type(value_type)
        if standard is None:
            return value.strip() if isinstance(value, str) else value
        if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
            raise ValueTypeMismatch(standard.description)
        text = standard.canonical(value_text(value))
        if standard.valid is not None and not standard.valid(text):
            raise ValueTypeMismatch(standard.description)
        return text
    return value  # Text (and any other literal type): unchanged

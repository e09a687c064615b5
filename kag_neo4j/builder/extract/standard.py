"""Values of structured records, normalised as the schema types them.

A CSV cell is text; the schema says what it is. :func:`typed_value` turns one cell into the
value the graph stores for a property of value type ``value_type``:

* ``Integer`` / ``Float``: the number (``"58"`` -> ``58``, ``"1,234.5"`` -> ``1234.5``); a cell
  that is not a number stays text and is reported (the constraint checker decides what then);
* ``Text``: the text as given (``20230906`` stays ``20230906``: a schema that says Text means it);
* ``STD.<Name>``: KAG's standard types, normalised to their canonical spelling - phone numbers
  (``STD.ChinaMobile``, ``STD.Phone``...) without spaces, dashes, brackets or a ``+86``/``0086``
  prefix; identity numbers (``STD.IdCardNo``, ``STD.CertNo``...) upper-cased without spaces;
  ``STD.Email`` lower-cased; ``STD.Date`` as ``yyyy-mm-dd``; masked values (``150****3237``)
  keep their mask characters.

Unknown standard types keep the text (stripped).
"""

from __future__ import annotations

import re

from kag_neo4j.builder.records import PropertyValue

_NUMBER = re.compile(r"^[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][+-]?\d+)?$")
_PHONE_JUNK = re.compile(r"[\s\-().（）]")
_PHONE_PREFIX = re.compile(r"^(?:\+|00)86(?=\d)")
_PHONE_TYPES = frozenset({"chinamobile", "mobile", "phone", "phonenumber", "telephone", "tel", "cellphone"})
_ID_TYPES = frozenset({"idcardno", "idcard", "idno", "certno", "passport", "licenseno", "creditcode"})
_DATE = re.compile(r"^(\d{4})[-/.年]?(\d{1,2})[-/.月]?(\d{1,2})日?$")


class ValueTypeMismatch(ValueError):
    """A cell that does not fit its property's value type."""


def _number(text: str, value_type: str) -> int | float:
    compact = text.replace("_", "")
    if not _NUMBER.match(compact):
        raise ValueTypeMismatch(f"{text!r} is not a number ({value_type})")
    compact = compact.replace(",", "")
    if value_type == "Integer":
        number = float(compact)
        if not number.is_integer():
            raise ValueTypeMismatch(f"{text!r} is not an integer")
        return int(number)
    return float(compact)


def standard_value(name: str, text: str) -> str:
    """``text`` in the canonical spelling of the standard type ``STD.<name>``."""
    kind = name.casefold()
    if kind in _PHONE_TYPES:
        return _PHONE_PREFIX.sub("", _PHONE_JUNK.sub("", text))
    if kind in _ID_TYPES:
        return re.sub(r"\s", "", text).upper()
    if kind == "email":
        return text.strip().casefold()
    if kind == "date":
        match = _DATE.match(text.strip())
        if match:
            year, month, day = match.groups()
            return f"{year}-{int(month):02d}-{int(day):02d}"
    return text


def typed_value(value_type: str | None, text: str) -> PropertyValue:
    """One cell as the schema's ``value_type`` wants it (``None``: no declared type, text kept).
    Raises :class:`ValueTypeMismatch` when a number type gets something else."""
    text = text.strip()
    if value_type in ("Integer", "Float"):
        return _number(text, value_type)
    if value_type is not None and value_type.startswith("STD."):
        return standard_value(value_type[4:], text)
    return text

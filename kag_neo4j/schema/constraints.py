"""The schema's constraints, checked on write: value types, ``NotNull``, ``Enum``, ``Regular``, ``MultiValue``.

One rule set, used by every write path (the builder's alignment of extracted and structured
records, the structured reader's relation cells, rule-derived properties). Pure: no database,
no I/O. A check returns the value to write (possibly in its canonical form) or a
:class:`ConstraintViolation` saying where, which property, which value and which constraint;
the caller leaves the offending value out and writes the rest of the record.

What each constraint means here:

* **value type** - ``Integer``: an int, an integral float or an integer numeral (``"42"``),
  written as an int; ``Float``: a finite number or a decimal numeral, written as a float;
  ``Text``: any scalar, written unchanged; ``STD.<Name>``: a text that matches the standard
  type (:data:`STANDARD_TYPES`), written as that text (stripped; separators removed from phone
  numbers). An ``STD`` type kag-neo4j does not know is stored as text, unchecked.
* **Enum** - the text form of the value is one of the listed values (exact, case-sensitive).
* **Regular** - Python :func:`re.fullmatch` of the pattern on the text form of the value (the
  pattern's own ``^``/``$`` are harmless). A number's text form is ``42`` / ``4.5``.
* **MultiValue** - a list value (from JSON records, or a rule that derives a list) is allowed only
  with ``MultiValue``; each element is checked as a value and the list is written as a Neo4j list.
  Without it a list is a violation (nothing of it is written). For class-valued predicates (edges)
  a structured record's cell that names several targets needs ``MultiValue`` (:func:`check_targets`).
* **NotNull** - a record of the type must carry the property (:func:`missing_required`); the record
  is written without it and the violation is reported.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, computed_field

from kag_neo4j.schema.models import STANDARD_PREFIX, ResolvedProperty, ResolvedRelation, ResolvedType

ConstraintKind = Literal["ValueType", "NotNull", "Enum", "Regular", "MultiValue"]
Scalar = str | int | float | bool

#: longest value text a violation quotes
_SHOWN = 80


class Where(BaseModel):
    """Where a value came from: a file and row (structured records), a chunk (text), or a rule and node."""

    model_config = ConfigDict(frozen=True)

    file: str | None = None
    row: int | None = None
    chunk: str | None = None
    rule: str | None = None
    node: str | None = None

    def __str__(self) -> str:
        parts = []
        if self.file:
            parts.append(self.file + (f" row {self.row}" if self.row is not None else ""))
        if self.chunk and self.row is None:
            parts.append(f"chunk {self.chunk}")
        if self.rule:
            parts.append(f"rule {self.rule}")
        if self.node:
            parts.append(f"node {self.node}")
        return ", ".join(parts) or "(unknown place)"


class ConstraintViolation(BaseModel):
    """One value (or missing value) that breaks the schema; it was not written."""

    model_config = ConfigDict(frozen=True)

    where: Where
    type_name: str
    property: str
    constraint: ConstraintKind
    #: the offending value as text (cut at 80 characters); None for NotNull
    value: str | None = None
    expected: str

    @computed_field  # type: ignore[prop-decorator]
    @property
    def message(self) -> str:
        shown = "" if self.value is None else f" = {self.value!r}"
        action = "written without it" if self.constraint == "NotNull" else "value not written"
        return f"{self.where}: {self.type_name}.{self.property}{shown} breaks {self.constraint} ({self.expected}); {action}"

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class Checked:
    """The outcome of checking one value: ``value`` to write, or ``violation`` (then nothing is written)."""

    value: Any = None
    violation: ConstraintViolation | None = None

    @property
    def ok(self) -> bool:
        return self.violation is None


# --------------------------------------------------------------------------- standard types


def _digits_only(text: str) -> str:
    return re.sub(r"[\s\-]", "", text)


def _id_card(text: str) -> bool:
    """A mainland China resident id number: 18 characters with its ISO 7064 MOD 11-2 check digit."""
    if not re.fullmatch(r"\d{17}[\dXx]", text):
        return False
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    total = sum(int(d) * w for d, w in zip(text[:17], weights))
    return "10X98765432"[total % 11] == text[17].upper()


def _calendar_date(text: str) -> bool:
    match = re.fullmatch(r"(\d{4})-?(\d{2})-?(\d{2})", text) or re.fullmatch(r"(\d{4})/(\d{2})/(\d{2})", text)
    if match is None:
        return False
    try:
        date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class StandardType:
    """A KAG standard type: what its values look like, and their canonical text."""

    description: str
    valid: Callable[[str], bool]
    canonical: Callable[[str], str] = str.strip


STANDARD_TYPES: dict[str, StandardType] = {
    "ChinaMobile": StandardType("a mainland China mobile number, 1[3-9] and 9 digits (+86 allowed)",
                                lambda t: re.fullmatch(r"(?:\+?86)?1[3-9]\d{9}", t) is not None,
                                lambda t: _digits_only(t.strip())),
    "ChinaTelCode": StandardType("a mainland China phone number: a mobile number or an area code and 7-8 digits",
                                 lambda t: re.fullmatch(r"(?:\+?86)?1[3-9]\d{9}|0\d{2,3}\d{7,8}|\d{7,8}", t) is not None,
                                 lambda t: _digits_only(t.strip())),
    "Email": StandardType("an e-mail address, name@domain.tld",
                          lambda t: re.fullmatch(r"[^@\s]+@[^@\s.]+(?:\.[^@\s.]+)+", t) is not None),
    "IdCardNo": StandardType("an 18-character resident id number with a valid check digit", _id_card,
                             lambda t: t.strip().upper()),
    "MacAddress": StandardType("a MAC address, six hex pairs separated by ':' or '-'",
                               lambda t: re.fullmatch(r"[0-9A-Fa-f]{2}(?:([:\-])[0-9A-Fa-f]{2})(?:\1[0-9A-Fa-f]{2}){4}",
                                                      t) is not None),
    "Date": StandardType("a calendar date, YYYYMMDD or YYYY-MM-DD", _calendar_date),
    "Timestamp": StandardType("a Unix time in seconds or milliseconds (10 or 13 digits)",
                              lambda t: re.fullmatch(r"\d{10}|\d{13}", t) is not None),
}


# --------------------------------------------------------------------------- values

_INTEGER = re.compile(r"[+-]?\d+")
_FLOAT = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def value_text(value: Any) -> str:
    """The text form Enum and Regular are held against: ``42`` for 42 and 42.0, ``true`` for True."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return str(int(value))
    return str(value).strip() if isinstance(value, str) else str(value)


def _shown(value: Any) -> str:
    text = value_text(value) if not isinstance(value, (list, tuple)) else str(list(value))
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _typed(value_type: str, value: Scalar) -> tuple[Any, str | None]:
    """``(value to write, None)`` or ``(None, what was expected)``."""
    if value_type == "Integer":
        if isinstance(value, bool):
            return None, "an integer"
        if isinstance(value, int):
            return value, None
        if isinstance(value, float):
            return (int(value), None) if math.isfinite(value) and value.is_integer() else (None, "an integer")
        text = value.strip()
        return (int(text), None) if _INTEGER.fullmatch(text) else (None, "an integer")
    if value_type == "Float":
        if isinstance(value, bool):
            return None, "a number"
        if isinstance(value, (int, float)):
            return (float(value), None) if math.isfinite(value) else (None, "a finite number")
        text = value.strip()
        return (float(text), None) if _FLOAT.fullmatch(text) else (None, "a number")
    if value_type.startswith(STANDARD_PREFIX):
        standard = STANDARD_TYPES.get(value_type[len(STANDARD_PREFIX):])
        if standard is None:
            return value, None
        if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
            return None, standard.description
        text = standard.canonical(value_text(value))
        return (text, None) if standard.valid(text) else (None, standard.description)
    return value, None  # Text (and any other literal type): unchanged


def _is_scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool)) and not (isinstance(value, float) and not math.isfinite(value))


def check_value(prop: ResolvedProperty, value: Any, *, type_name: str, where: Where) -> Checked:
    """``value`` of property ``prop`` of a ``type_name`` record held against the schema."""

    def violation(kind: ConstraintKind, expected: str) -> Checked:
        return Checked(violation=ConstraintViolation(where=where, type_name=type_name, property=prop.name,
                                                     constraint=kind, value=_shown(value), expected=expected))

    constraints = prop.constraints
    if isinstance(value, (list, tuple)):
        if not constraints.multi_value:
            return violation("MultiValue", "one value; the property is not MultiValue")
        written = []
        for item in value:
            checked = check_value(prop.model_copy(update={"constraints": constraints.model_copy(
                update={"multi_value": False})}), item, type_name=type_name, where=where)
            if checked.violation is not None:
                return checked
            written.append(checked.value)
        return Checked(value=written)
    if not _is_scalar(value):
        return violation("ValueType", f"a {prop.value_type} value")
    typed, expected = _typed(prop.value_type, value)
    if expected is not None:
        return violation("ValueType", f"{prop.value_type}: {expected}")
    if constraints.enum is not None and value_text(typed) not in constraints.enum:
        return violation("Enum", "one of " + ", ".join(constraints.enum))
    if constraints.regular is not None and re.fullmatch(constraints.regular, value_text(typed)) is None:
        return violation("Regular", f"text matching {constraints.regular}")
    return Checked(value=typed)


def _declared(owner: ResolvedType | ResolvedRelation | None) -> dict[str, ResolvedProperty]:
    return {prop.name: prop for prop in owner.properties} if owner is not None else {}


def check_properties(
    owner: ResolvedType | ResolvedRelation | None,
    properties: Mapping[str, Any],
    *,
    where: Where,
    type_name: str | None = None,
) -> tuple[dict[str, Any], list[ConstraintViolation]]:
    """The properties of one record of ``owner`` (a type, or a relation for edge properties) to
    write, and the violations; a property the schema does not declare passes unchanged."""
    declared = _declared(owner)
    name = type_name or (owner.name if owner is not None else "")
    kept: dict[str, Any] = {}
    violations: list[ConstraintViolation] = []
    for key, value in properties.items():
        prop = declared.get(key)
        if prop is None:
            kept[key] = value
            continue
        checked = check_value(prop, value, type_name=name, where=where)
        if checked.violation is not None:
            violations.append(checked.violation)
        else:
            kept[key] = checked.value
    return kept, violations


def required(owner: ResolvedType | ResolvedRelation | None) -> tuple[str, ...]:
    """The ``NotNull`` literal properties of ``owner`` (rule-derived ones are the rule's to give)."""
    return tuple(p.name for p in _declared(owner).values() if p.constraints.not_null and not p.rule)


def missing_required(
    type_name: str, required_names: Iterable[str], present: Iterable[str], *, where: Where
) -> list[ConstraintViolation]:
    """A ``NotNull`` violation for each of ``required_names`` (see :func:`required`) not in ``present``."""
    have = set(present)
    return [ConstraintViolation(where=where, type_name=type_name, property=prop, constraint="NotNull",
                                expected="a value is required")
            for prop in required_names if prop not in have]


def check_targets(
    owner: str, predicate: str, multi_value: bool, targets: list[str], *, where: Where
) -> ConstraintViolation | None:
    """A record's cell naming ``targets`` of a class-valued predicate: several need ``MultiValue``."""
    if len(targets) <= 1 or multi_value:
        return None
    return ConstraintViolation(where=where, type_name=owner, property=predicate, constraint="MultiValue",
                               value=_shown(", ".join(targets)),
                               expected="one target; the predicate is not MultiValue")

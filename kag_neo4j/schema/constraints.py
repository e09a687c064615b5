"""The schema's constraints, checked on write: value types, ``NotNull``, ``Enum``, ``Regular``, ``MultiValue``.

One rule set, used by every write path (the builder's alignment of extracted and structured
records, the structured reader's relation cells, rule-derived properties). Pure: no database,
no I/O. A check returns the value to write (possibly in its canonical form) or a
:class:`ConstraintViolation` saying where, which property, which value and which constraint;
the caller leaves the offending value out and writes the rest of the record.

What each constraint means here:

* **value type** - parsed and normalised by :func:`kag_neo4j.schema.value_types.typed` (the one
  implementation): ``Integer`` / ``Float`` numbers and numerals, written as int / float;
  ``Text``: any scalar, written unchanged; ``STD.<Name>``: the standard type's canonical text
  (:data:`~kag_neo4j.schema.value_types.STANDARD_TYPES`), checked against its shape. An ``STD``
  type kag-neo4j does not know is stored as text, unchecked.
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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, computed_field

from kag_neo4j.schema.models import ResolvedProperty, ResolvedRelation, ResolvedType
from kag_neo4j.schema.value_types import STANDARD_TYPES, ValueTypeMismatch, typed, value_text

__all__ = ["STANDARD_TYPES", "Checked", "ConstraintViolation", "Where", "check_properties", "check_targets",
           "check_value", "missing_required", "required", "second_value", "value_text"]

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


def _shown(value: Any) -> str:
    text = value_text(value) if not isinstance(value, (list, tuple)) else str(list(value))
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


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
    try:
        value_typed = typed(prop.value_type, value)
    except ValueTypeMismatch as mismatch:
        return violation("ValueType", f"{prop.value_type}: {mismatch.expected}")
    if constraints.enum is not None and value_text(value_typed) not in constraints.enum:
        return violation("Enum", "one of " + ", ".join(constraints.enum))
    if constraints.regular is not None and re.fullmatch(constraints.regular, value_text(value_typed)) is None:
        return violation("Regular", f"text matching {constraints.regular}")
    return Checked(value=value_typed)


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


def second_value(owner: str, name: str, value: Any, kept: Any, *, where: Where,
                 what: Literal["value", "target"] = "value") -> ConstraintViolation:
    """A second, different value (or target) of a property (or relation) without ``MultiValue``:
    ``kept`` stays, ``value`` is not written."""
    return ConstraintViolation(where=where, type_name=owner, property=name, constraint="MultiValue",
                               value=_shown(value),
                               expected=f"one {what}; {name} is not MultiValue (kept {_shown(kept)!r})")

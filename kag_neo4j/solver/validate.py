"""Standardise a plan's types and predicates against the schema.

The planner writes types and predicates as it likes (``plays for``, ``sports_team``,
``效力于``). Before a plan runs, every one of them is mapped to a name the schema declares:

* exact, case-, space-, ``_``- and ``-``-insensitive matches and declared synonyms are replaced
  by the schema's own spelling (recorded as ``info`` issues);
* an unknown entity type becomes the generic ``Entity`` type (a ``warning``);
* an unknown predicate becomes ``None`` (any relation, a ``warning``) and its text is kept in
  :attr:`ValidatedPlan.open_predicates` so it can be matched against open facts as a
  ``$parameter`` value — never as a relationship type.

Only schema names (each checked by :func:`~kag_neo4j.store.identifiers.check_identifier` when
the schema description is built; a type may not be one of kag-neo4j's own labels,
:func:`~kag_neo4j.store.identifiers.is_reserved_label`) and the generic type can come out of
this module, so text from the model never becomes a label, relationship type or property key.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from kag_neo4j.errors import InvalidIdentifierError, SchemaError
from kag_neo4j.solver.lf.analysis import AliasSite
from kag_neo4j.solver.lf.ast import Action, Element, Plan, RetrievalOp, Step
from kag_neo4j.store.identifiers import check_identifier, is_reserved_label
from kag_neo4j.store.keys import predicate_key as name_key  # the one predicate key, re-exported

__all__ = [
    "GENERIC_TYPE",
    "VALUE_TYPES",
    "PredicateSpec",
    "SchemaDescription",
    "SimpleSchema",
    "ValidatedPlan",
    "ValidationIssue",
    "name_key",
    "validate_plan",
]

GENERIC_TYPE = "Entity"
#: Basic value types an object may have (``o=o2:Year``). They describe literal values and are
#: never used as labels.
VALUE_TYPES = frozenset(
    {"Text", "Integer", "Float", "Number", "Date", "Year", "Time", "Boolean", "Duration", "Money", "Percent"}
)


@dataclass(frozen=True)
class PredicateSpec:
    """A predicate the schema declares, with its subject (domain) and object (range) types."""

    name: str
    domain: str | None = None
    range: str | None = None


@runtime_checkable
class SchemaDescription(Protocol):
    """What plan validation needs to know about a schema (:class:`SimpleSchema` is the plain one)."""

    @property
    def type_names(self) -> Collection[str]: ...

    @property
    def predicates(self) -> Mapping[str, PredicateSpec]: ...

    @property
    def synonyms(self) -> Mapping[str, str]: ...

    @property
    def parents(self) -> Mapping[str, str]:
        """type -> parent type, for domain and range checks through inheritance."""
        ...

    @property
    def value_types(self) -> frozenset[str]:
        """Types whose values are literals (numbers, dates, text), not entities."""
        ...


def _check_type_name(name: str) -> None:
    """A schema type of a plan is a label: a safe identifier and not one of kag-neo4j's own."""
    check_identifier(name, what="schema type")
    if is_reserved_label(name):
        raise InvalidIdentifierError(
            f"schema type {name!r} is a label kag-neo4j uses for its own nodes; a plan may not name it"
        )


@dataclass(frozen=True)
class SimpleSchema:
    """A plain :class:`SchemaDescription`; every name is checked as a Cypher identifier."""

    type_names: frozenset[str]
    predicates: Mapping[str, PredicateSpec]
    synonyms: Mapping[str, str] = field(default_factory=dict)
    parents: Mapping[str, str] = field(default_factory=dict)
    value_types: frozenset[str] = VALUE_TYPES

    def __post_init__(self) -> None:
        for name in self.type_names:
            _check_type_name(name)
        for name in self.value_types:
            check_identifier(name, what="value type")
        for key, spec in self.predicates.items():
            check_identifier(spec.name, what="schema predicate")
            if key != spec.name:
                raise SchemaError(
                    f"predicate entry {key!r} holds a spec named {spec.name!r}; use the same name"
                )
            for end in (spec.domain, spec.range):
                if end is not None and end not in self.type_names and end not in self.value_types:
                    raise SchemaError(
                        f"predicate {spec.name!r} refers to type {end!r}, which the schema does not declare"
                    )
        for child, parent in self.parents.items():
            if child not in self.type_names or parent not in self.type_names:
                raise SchemaError(f"type inheritance {child!r} -> {parent!r} names an undeclared type")
        known = set(self.type_names) | set(self.predicates) | set(self.value_types)
        for surface, canonical in self.synonyms.items():
            if canonical not in known:
                raise SchemaError(
                    f"synonym {surface!r} points to {canonical!r}, which is neither a declared type nor a predicate"
                )

    @classmethod
    def build(
        cls,
        types: Iterable[str],
        predicates: Iterable[PredicateSpec | str | tuple[str, str | None, str | None]] = (),
        *,
        synonyms: Mapping[str, str] | None = None,
        parents: Mapping[str, str] | None = None,
        value_types: Iterable[str] = VALUE_TYPES,
    ) -> SimpleSchema:
        specs: dict[str, PredicateSpec] = {}
        for item in predicates:
            spec = (
                item
                if isinstance(item, PredicateSpec)
                else PredicateSpec(item)
                if isinstance(item, str)
                else PredicateSpec(*item)
            )
            specs[spec.name] = spec
        return cls(
            type_names=frozenset(types),
            predicates=specs,
            synonyms=dict(synonyms or {}),
            parents=dict(parents or {}),
            value_types=frozenset(value_types),
        )


class ValidationIssue(BaseModel):
    """One change or problem found while standardising a plan."""

    level: Literal["info", "warning"]
    step: int
    action: int
    field: str  # e.g. "s.type", "p.predicate"
    original: str | None
    replacement: str | None
    message: str


class ValidatedPlan(BaseModel):
    """A plan whose every type and predicate is a schema name (or the generic type / ``None``)."""

    plan: Plan
    issues: list[ValidationIssue] = Field(default_factory=list)
    open_predicates: dict[str, str] = Field(
        default_factory=dict,
        description="predicate alias -> predicate text the schema does not know (match as a value)",
    )
    value_types: frozenset[str] = VALUE_TYPES

    @property
    def warnings(self) -> list[ValidationIssue]:
        return [issue for issue in self.issues if issue.level == "warning"]

    def is_value_type(self, name: str | None) -> bool:
        return name is not None and name in self.value_types


class _Lookup:
    def __init__(self, schema: SchemaDescription) -> None:
        self.schema = schema
        self.value_types = frozenset(schema.value_types)
        self.parents: Mapping[str, str] = schema.parents
        for name in schema.type_names:
            _check_type_name(name)
        type_names = set(schema.type_names) | set(self.value_types)
        for name in self.value_types:
            check_identifier(name, what="value type")
        for spec in schema.predicates.values():
            check_identifier(spec.name, what="schema predicate")
        self.types = self._index(type_names, {s: c for s, c in schema.synonyms.items() if c in type_names})
        predicate_names = {spec.name for spec in schema.predicates.values()}
        self.predicates = self._index(
            predicate_names, {s: c for s, c in schema.synonyms.items() if c in predicate_names}
        )
        self.specs = {spec.name: spec for spec in schema.predicates.values()}

    @staticmethod
    def _index(names: Iterable[str], synonyms: Mapping[str, str]) -> dict[str, set[str]]:
        index: dict[str, set[str]] = {}
        for name in names:
            index.setdefault(name_key(name), set()).add(name)
        for surface, canonical in synonyms.items():
            index.setdefault(name_key(surface), set()).add(canonical)
        return index

    @staticmethod
    def resolve(index: Mapping[str, set[str]], text: str) -> tuple[str | None, bool]:
        """(canonical name or None, ambiguous?)"""
        candidates = index.get(name_key(text), set())
        if text in candidates:
            return text, False
        if len(candidates) == 1:
            return next(iter(candidates)), False
        return None, len(candidates) > 1

    def is_a(self, type_name: str, ancestor: str) -> bool:
        seen: set[str] = set()
        current: str | None = type_name
        while current is not None and current not in seen:
            if current == ancestor:
                return True
            seen.add(current)
            current = self.parents.get(current)
        return False


def validate_plan(
    plan: Plan, schema: SchemaDescription, *, generic_type: str = GENERIC_TYPE
) -> ValidatedPlan:
    """Standardise ``plan``'s types and predicates against ``schema``.

    Never raises for unknown names (they fall back as described in the module docstring);
    raises :class:`~kag_neo4j.errors.InvalidIdentifierError` when the *schema* holds an unsafe
    name.
    """
    check_identifier(generic_type, what="generic type")
    lookup = _Lookup(schema)
    definitions = plan.definitions()
    issues: list[ValidationIssue] = []
    open_predicates: dict[str, str] = {}
    new_steps: list[Step] = []
    for step in plan.steps:
        new_actions: list[Action] = []
        for action in step.actions:
            op = action.operator
            if isinstance(op, RetrievalOp):
                op = _validate_retrieval(
                    op, step.number, action.number, lookup, generic_type, definitions, issues, open_predicates
                )
                action = action.model_copy(update={"operator": op})
            new_actions.append(action)
        new_steps.append(step.model_copy(update={"actions": new_actions}))
    checked = Plan(steps=new_steps, pos=plan.pos)
    _assert_safe(checked, generic_type)
    return ValidatedPlan(
        plan=checked, issues=issues, open_predicates=open_predicates, value_types=lookup.value_types
    )


@dataclass
class _Recorder:
    step: int
    action: int
    issues: list[ValidationIssue]

    def add(
        self,
        level: Literal["info", "warning"],
        field_name: str,
        original: str | None,
        replacement: str | None,
        message: str,
    ) -> None:
        self.issues.append(
            ValidationIssue(
                level=level,
                step=self.step,
                action=self.action,
                field=field_name,
                original=original,
                replacement=replacement,
                message=f"Action{self.action}: {message}",
            )
        )


def _validate_retrieval(
    op: RetrievalOp,
    step: int,
    action: int,
    lookup: _Lookup,
    generic_type: str,
    definitions: Mapping[str, AliasSite],
    issues: list[ValidationIssue],
    open_predicates: dict[str, str],
) -> RetrievalOp:
    record = _Recorder(step, action, issues)

    def entity(role: str, element: Element) -> Element:
        if element.type is None:
            return element
        canonical, ambiguous = lookup.resolve(lookup.types, element.type)
        if canonical is None:
            why = "matches several schema types" if ambiguous else "is not a schema type"
            record.add(
                "warning",
                f"{role}.type",
                element.type,
                generic_type,
                f"type {element.type!r} of {role}={element.alias} {why}; using {generic_type}",
            )
            return element.model_copy(update={"type": generic_type})
        if canonical != element.type:
            record.add(
                "info",
                f"{role}.type",
                element.type,
                canonical,
                f"type {element.type!r} of {role}={element.alias} standardised to {canonical!r}",
            )
        return element.model_copy(update={"type": canonical})

    def bare(element: Element, names: Mapping[str, set[str]]) -> Element:
        """KAG's ``p=belongTo, o=TaxOfRiskUser``: an element defined here by a bare name that is a
        schema predicate (for p) or type (for s, o) takes it as its predicate or type."""
        site = definitions.get(element.alias)
        if element.type is not None or element.name is not None or element.ref is not None \
                or site is None or (site.step, site.action) != (step, action):
            return element
        canonical, _ = lookup.resolve(names, element.alias)
        return element if canonical is None else element.model_copy(update={"type": canonical})

    s = entity("s", bare(op.s, lookup.types))
    o = entity("o", bare(op.o, lookup.types))
    p = bare(op.p, lookup.predicates)
    spec = None
    if p.type is not None:
        canonical, ambiguous = lookup.resolve(lookup.predicates, p.type)
        if canonical is None:
            why = "matches several schema predicates" if ambiguous else "is not a schema predicate"
            record.add(
                "warning",
                "p.predicate",
                p.type,
                None,
                f"predicate {p.type!r} {why}; matching any relation and open facts by text",
            )
            open_predicates[p.alias] = p.type
            p = p.model_copy(update={"type": None})
        else:
            if canonical != p.type:
                record.add(
                    "info",
                    "p.predicate",
                    p.type,
                    canonical,
                    f"predicate {p.type!r} standardised to {canonical!r}",
                )
            p = p.model_copy(update={"type": canonical})
            spec = lookup.specs[canonical]
    if spec is not None:
        defines = {
            role: definitions[el.alias].step == step and definitions[el.alias].action == action
            for role, el in (("s", s), ("o", o))
        }
        s = _check_end(s, "s", spec.domain, "subject", defines["s"], lookup, generic_type, record)
        o = _check_end(o, "o", spec.range, "object", defines["o"], lookup, generic_type, record)
    return op.model_copy(update={"s": s, "p": p, "o": o})


def _check_end(
    element: Element,
    role: str,
    expected: str | None,
    label: str,
    defines_here: bool,
    lookup: _Lookup,
    generic_type: str,
    record: _Recorder,
) -> Element:
    if expected is None:
        return element
    if element.type is None:
        if defines_here:
            record.add(
                "info",
                f"{role}.type",
                None,
                expected,
                f"{role}={element.alias} takes the predicate's {label} type {expected!r}",
            )
            return element.model_copy(update={"type": expected})
        return element
    if element.type == generic_type:
        return element
    both_values = element.type in lookup.value_types and expected in lookup.value_types
    if not both_values and not lookup.is_a(element.type, expected):
        record.add(
            "warning",
            f"{role}.type",
            element.type,
            None,
            f"the predicate expects a {label} of type {expected!r}, but {role}={element.alias} "
            f"is {element.type!r}",
        )
    return element


def _assert_safe(plan: Plan, generic_type: str) -> None:
    """Every name that may reach Cypher passes the identifier check (defence in depth)."""
    for _, action in plan.actions():
        op = action.operator
        if isinstance(op, RetrievalOp):
            for role, element in op.elements():
                if element.type is not None:
                    check_identifier(element.type, what=f"{role} type")
            for constraint in op.constraints:
                check_identifier(constraint.prop, what="constraint property")

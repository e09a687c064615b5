"""Rule-derived properties held against the schema's constraints (:mod:`kag_neo4j.schema.constraints`).

A property rule computes its values in Cypher; inside the same write transaction, right after
the rule's derive statement, :func:`check_derived` reads what the rule wrote, checks each value
against the property's declaration (value type, ``Enum``, ``Regular``, ``MultiValue`` for list
values) and removes the ones that break it, with their provenance. The transaction commits only
checked values, so no reader ever sees an invalid one. Each removal is a
:class:`~kag_neo4j.schema.constraints.ConstraintViolation` naming the rule and the node (its ``id``).
"""

from __future__ import annotations

from kag_neo4j.rules.compile import CompiledRule, RuleKind
from kag_neo4j.rules.render import ident, render
from kag_neo4j.schema.constraints import ConstraintViolation, Where, check_value
from kag_neo4j.schema.models import ResolvedProperty, ResolvedSchema
from kag_neo4j.store.database import Transaction

_SUFFIXES = ("", "_derived_by", "_rule_version", "_as_of")


def declared_property(rule: CompiledRule, schema: ResolvedSchema | None) -> tuple[str, str | None, ResolvedProperty] | None:
    """``(type name, subject label, declaration)`` of the property ``rule`` derives, if the schema declares it."""
    if schema is None or rule.kind != RuleKind.PROPERTY:
        return None
    written = next((fact for fact in rule.writes if fact.kind == "property" and fact.key), None)
    if written is None or written.key is None:
        return None
    labels = written.a.labels if written.a is not None else frozenset()
    for spg_type in schema.types:
        if labels and spg_type.label not in labels:
            continue
        prop = next((p for p in spg_type.properties if p.name == written.key), None)
        if prop is not None:
            return spg_type.name, (next(iter(sorted(labels))) if labels else None), prop
    return None


def check_derived(tx: Transaction, rule: CompiledRule, schema: ResolvedSchema | None) -> list[ConstraintViolation]:
    """Check, in ``tx``, the values ``rule`` just derived; remove and return the invalid ones."""
    found = declared_property(rule, schema)
    if found is None:
        return []
    type_name, label, prop = found
    keys = {suffix: ident(f"{prop.name}{suffix}", what="property key") for suffix in _SUFFIXES}
    rows = tx.run(render("derived_values", label=ident(label, what="label") if label else None, key=keys[""],
                         by_key=keys["_derived_by"]), rule_id=rule.id).data()
    violations: list[ConstraintViolation] = []
    elements: list[str] = []
    for row in rows:
        checked = check_value(prop, row["value"], type_name=type_name, where=Where(rule=rule.id, node=str(row["node"])))
        if checked.violation is not None:
            violations.append(checked.violation)
            elements.append(row["element"])
    if elements:
        tx.run(render("drop_derived_values", key=keys[""], by_key=keys["_derived_by"], version_key=keys["_rule_version"],
                      as_of_key=keys["_as_of"]), elements=elements, rule_id=rule.id).consume()
    return violations

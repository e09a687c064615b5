"""What the planner is told about the graph, and what plans are validated against.

The vocabulary comes from the data (entity labels, relationship types, the most frequent open
predicates) and from any SPG schema applied with ``kag-neo4j schema apply`` (types, relations
with their domain and range, literal properties). The planner sees a short summary — long
prompts are slow on a local model; of more types than it shows, those the relations connect
come first — and :func:`kag_neo4j.solver.validate.validate_plan` gets a
:class:`~kag_neo4j.solver.validate.SimpleSchema` built from the same names. Only names that pass
:func:`~kag_neo4j.store.identifiers.check_identifier` enter that schema, and never the labels
or relationship types kag-neo4j uses itself (:func:`~kag_neo4j.store.identifiers.is_reserved_label`,
:func:`~kag_neo4j.store.identifiers.is_reserved_relationship_type`: chunks, documents, runs, ``CITES``, ...).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from kag_neo4j.errors import InvalidIdentifierError, KagError
from kag_neo4j.solver.validate import VALUE_TYPES, PredicateSpec, SimpleSchema
from kag_neo4j.store import cypher
from kag_neo4j.store.database import Database
from kag_neo4j.store.identifiers import check_identifier, is_reserved_label, is_reserved_relationship_type

__all__ = ["GraphSchema", "read_graph_schema"]

log = logging.getLogger(__name__)

def _safe(name: object, what: str) -> str | None:
    if not isinstance(name, str):
        return None
    try:
        return check_identifier(name, what=what)
    except InvalidIdentifierError:
        return None


@dataclass
class GraphSchema:
    """Types and predicates the graph (and its applied SPG schemas) knows."""

    types: list[str] = field(default_factory=list)
    relations: dict[str, PredicateSpec] = field(default_factory=dict)
    properties: dict[str, PredicateSpec] = field(default_factory=dict)
    open_predicates: list[str] = field(default_factory=list)
    parents: dict[str, str] = field(default_factory=dict)
    #: concept classes the registered rules classify into, by concept type (``TaxOfRiskUser``:
    #: ``["赌博App开发者", "赌博App老板"]``)
    classes: dict[str, list[str]] = field(default_factory=dict)
    #: causal relations the SPG schemas declare (``CAU#leadTo`` → ``leadTo``), in order of declaration
    causal: list[str] = field(default_factory=list)

    def simple_schema(self) -> SimpleSchema:
        types = set(self.types)
        predicates: dict[str, PredicateSpec] = {}
        for spec in [*self.properties.values(), *self.relations.values()]:
            domain = spec.domain if spec.domain in types or spec.domain in VALUE_TYPES else None
            range_ = spec.range if spec.range in types or spec.range in VALUE_TYPES else None
            predicates[spec.name] = PredicateSpec(spec.name, domain, range_)
        parents = {c: p for c, p in self.parents.items() if c in types and p in types}
        return SimpleSchema.build(types, predicates.values(), parents=parents)

    def summary(self, max_items: int = 16) -> str:
        """A few lines for the planner prompt (empty when the graph has no vocabulary yet). Of more
        than ``max_items`` types, those the relations shown connect come first."""
        lines = []
        specs = list(self.relations.values())[:max_items]
        if self.types:
            types = self.types
            if len(types) > max_items:
                connected = {t for spec in specs for t in (spec.domain, spec.range) if t}
                types = [t for t in types if t in connected] + [t for t in types if t not in connected]
            lines.append("Entity types: " + ", ".join(types[:max_items]))
        relations = []
        for spec in specs:
            if spec.domain and spec.range:
                relations.append(f"{spec.name}({spec.domain}->{spec.range})")
            else:
                relations.append(spec.name)
        if relations:
            lines.append("Relations: " + ", ".join(relations))
        if self.properties:
            lines.append("Properties: " + ", ".join(list(self.properties)[:max_items]))
        if self.open_predicates:
            lines.append("Other predicates: " + ", ".join(self.open_predicates[:max_items]))
        if self.classes:
            shown = [f"{kind} = {' | '.join(names[:max_items])}" for kind, names in list(self.classes.items())[:max_items]]
            lines.append("Classes (ask with p=belongTo, o=<type>): " + "; ".join(shown))
        return "\n".join(lines)


def _add_spg_schemas(db: Database, schema: GraphSchema) -> None:
    from kag_neo4j.schema.metagraph import read_schema, stored_namespaces
    from kag_neo4j.schema.models import Semantic

    for namespace in stored_namespaces(db):
        resolved = read_schema(db, namespace)
        if resolved is None:
            continue
        for spg_type in resolved.types:
            label = _safe(spg_type.label, "schema type")
            if label is None:
                continue
            if label not in schema.types:
                schema.types.append(label)
            if spg_type.parent:
                parent = _safe(spg_type.parent, "schema type")
                if parent:
                    schema.parents[label] = parent
            for prop in spg_type.own_properties:
                name = _safe(prop.name, "schema property")
                if name:
                    value_type = str(prop.value_type)
                    schema.properties.setdefault(
                        name, PredicateSpec(name, label, value_type if value_type in VALUE_TYPES else None)
                    )
            for relation in spg_type.own_relations:
                name = _safe(relation.rel_type, "schema relation")
                if name:
                    schema.relations[name] = PredicateSpec(name, relation.source, relation.target)
                    if relation.semantic is Semantic.CAU and name not in schema.causal:
                        schema.causal.append(name)


def _add_rule_heads(db: Database, schema: GraphSchema) -> None:
    """What the registered rules derive (``kag-neo4j rules apply``): relations (a concept
    membership is ``belongTo``) and properties, offered like stored ones."""
    from kag_neo4j.rules.load import rule_head

    for identifier in db.read(cypher.query("solver/rule_heads"))[0]["ids"]:
        subject, predicate, obj = rule_head(str(identifier))
        name = _safe(predicate, "rule predicate")
        if name is None:
            continue
        concept = str(identifier).rpartition("->")[2].partition("/")[2].strip()
        kind = _safe(obj, "rule type")
        if name == "belongTo" and concept and kind and concept not in schema.classes.setdefault(kind, []):
            schema.classes[kind].append(concept)
        domain = _safe(subject, "rule type")
        if obj in VALUE_TYPES or obj.startswith("STD."):
            schema.properties.setdefault(name, PredicateSpec(name, domain, obj if obj in VALUE_TYPES else "Text"))
        elif name not in schema.relations:
            schema.relations[name] = PredicateSpec(name, domain, _safe(obj, "rule type"))


def read_graph_schema(db: Database, *, max_predicates: int = 16) -> GraphSchema:
    """The vocabulary of the graph in ``db`` (read transactions only)."""
    schema = GraphSchema()
    try:
        _add_spg_schemas(db, schema)
    except KagError as exc:  # a broken stored schema must not stop question answering
        log.warning("ignoring the stored SPG schema: %s", exc)
    _add_rule_heads(db, schema)
    row = db.read(cypher.query("solver/graph_vocabulary"), k=max_predicates)[0]
    for label in sorted(row["labels"]):
        if not isinstance(label, str) or is_reserved_label(label):
            continue
        safe = _safe(label, "label")
        if safe and safe not in schema.types:
            schema.types.append(safe)
    for rel_type in sorted(row["types"]):
        if not isinstance(rel_type, str) or is_reserved_relationship_type(rel_type):
            continue
        safe = _safe(rel_type, "relationship type")
        if safe and safe not in schema.relations:
            schema.relations[safe] = PredicateSpec(safe)
    schema.open_predicates = [p for p in row["predicates"] if isinstance(p, str) and p.strip()]
    return schema

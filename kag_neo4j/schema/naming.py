"""How schema names become Neo4j names: labels, constraint, index and property names.

Type names become labels unchanged, except names kag-neo4j already uses for its own graph
(``Chunk``, ``Concept``, ``Event``, ``Entity``, ``Document``, the meta-graph labels, ...): those
get the prefix ``Spg`` (a KAG ``Concept(概念): EntityType`` is stored under ``:SpgConcept``), so a
schema can never make its instances look like chunks or concept nodes. Predicate names become
relationship types and property keys unchanged. Every derived name is checked with
:func:`~kag_neo4j.store.identifiers.check_identifier` before it is used.
"""

from __future__ import annotations

from kag_neo4j.store.identifiers import RESERVED_LABELS, check_identifier

#: Labels of the schema meta-graph that are not (yet) in the shared reserved set.
META_LABELS = frozenset({"SchemaNamespace", "SchemaType", "SchemaProperty", "SchemaRelation"})

#: Relationship types kag-neo4j uses itself; schema predicates may not take them.
RESERVED_RELATIONSHIP_TYPES = frozenset(
    {
        "PART_OF", "NEXT", "MENTIONED_IN", "RELATED", "IS_A", "CONTAINS", "SYNONYM", "CAUSES",
        "BELONGS_TO", "HAS_STEP", "USED", "DEPENDS_ON", "DECLARES", "HAS_PROPERTY", "HAS_RELATION",
        "INHERITS", "RANGE",
    }
)

LABEL_PREFIX = "Spg"
VECTOR_SUFFIX = "_embedding"


def label_for(type_name: str) -> str:
    """The Neo4j label of instances of ``type_name``."""
    check_identifier(type_name, what="type name")
    if type_name in RESERVED_LABELS or type_name in META_LABELS:
        return LABEL_PREFIX + type_name
    return type_name


def vector_property(property_name: str) -> str:
    """The node property that holds the embedding of a vector-indexed property."""
    return check_identifier(property_name + VECTOR_SUFFIX, what="vector property name")


def constraint_name(label: str) -> str:
    """Name of the uniqueness constraint on ``(:label).id``."""
    return check_identifier(f"spg_{label}_id", what="constraint name")


def fulltext_index_name(label: str) -> str:
    """Name of the fulltext index over the text-indexed properties of ``label``."""
    return check_identifier(f"spg_{label}_text", what="fulltext index name")


def vector_index_name(label: str, property_name: str) -> str:
    """Name of the vector index on ``(:label).<property>_embedding``."""
    return check_identifier(f"spg_{label}_{property_name}_vector", what="vector index name")

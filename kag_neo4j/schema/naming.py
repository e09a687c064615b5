"""How schema names become Neo4j names: labels, constraint, index and property names.

Type names become labels unchanged, except names kag-neo4j already uses for its own graph
(:data:`~kag_neo4j.store.identifiers.RESERVED_LABELS`: ``Chunk``, ``Concept``, ``Event``,
``Entity``, ``Document``, the meta-graph and run labels, in any case): those get the prefix
``Spg`` (a KAG ``Concept(概念): EntityType`` is stored under ``:SpgConcept``, ``chunk`` under
``:Spgchunk``), so a schema can never make its instances look like chunks or concept nodes.
Predicate names become relationship types and property keys unchanged; the validator refuses
the reserved relationship types. Every derived name is checked with
:func:`~kag_neo4j.store.identifiers.check_identifier` before it is used.
"""

from __future__ import annotations

from kag_neo4j.errors import InvalidIdentifierError
from kag_neo4j.store.identifiers import check_identifier, is_reserved_label

LABEL_PREFIX = "Spg"
VECTOR_SUFFIX = "_embedding"


def label_for(type_name: str) -> str:
    """The Neo4j label of instances of ``type_name``."""
    check_identifier(type_name, what="type name")
    if "__" in type_name:
        raise InvalidIdentifierError(
            f"type name {type_name!r} contains '__', which separates a knowledge base's name from its labels "
            "(kag_neo4j.store.knowledge_base); rename the type without a double underscore"
        )
    if is_reserved_label(type_name):
        return check_identifier(LABEL_PREFIX + type_name, what="type name")
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

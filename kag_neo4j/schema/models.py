"""Pydantic models of an SPG schema: what the parser reads, and what validation resolves.

Two layers:

* *Declarations* (:class:`SchemaDocument`, :class:`TypeDecl`, :class:`PredicateDecl`) mirror the
  file as written, with the location of every declaration. Names are checked with
  :func:`~kag_neo4j.store.identifiers.check_identifier` when a model is built, so a hostile name
  can never sit in a model.
* *Resolved* models (:class:`ResolvedSchema`, :class:`ResolvedType`, :class:`ResolvedProperty`,
  :class:`ResolvedRelation`) are produced by :func:`kag_neo4j.schema.validate.validate_schema`:
  inheritance applied, value types resolved to literals or relations, Neo4j labels chosen.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from kag_neo4j.errors import InvalidIdentifierError
from kag_neo4j.schema.issues import Location
from kag_neo4j.store.identifiers import check_identifier, is_reserved_label, is_reserved_relationship_type

BASIC_TYPES: tuple[str, ...] = ("Text", "Integer", "Float")
"""Literal value types; every other value type names a class (and makes an edge)."""

STANDARD_PREFIX = "STD."
"""``STD.<Name>`` value types are KAG standard types: literals stored as text."""


class TypeKind(str, Enum):
    ENTITY = "EntityType"
    CONCEPT = "ConceptType"
    EVENT = "EventType"
    INDEX = "IndexType"
    STANDARD = "StandardType"


class IndexKind(str, Enum):
    TEXT = "Text"
    VECTOR = "Vector"
    TEXT_AND_VECTOR = "TextAndVector"

    @property
    def fulltext(self) -> bool:
        return self in (IndexKind.TEXT, IndexKind.TEXT_AND_VECTOR)

    @property
    def vector(self) -> bool:
        return self in (IndexKind.VECTOR, IndexKind.TEXT_AND_VECTOR)


class Semantic(str, Enum):
    """Prefix of a semantic predicate: ``IND#`` (induction, e.g. belongTo) or ``CAU#`` (causal)."""

    IND = "IND"
    CAU = "CAU"


HYPERNYM_PREDICATES: tuple[str, ...] = ("isA", "locateAt")


def _identifier(what: str) -> AfterValidator:
    return AfterValidator(lambda value: check_identifier(value, what=what))


def _check_label(value: str) -> str:
    check_identifier(value, what="label")
    if is_reserved_label(value):
        raise InvalidIdentifierError(
            f"label {value!r} is reserved by kag-neo4j for its own nodes; schema types that take it are "
            f"stored under {'Spg' + value!r}"
        )
    return value


def _check_relationship_type(value: str) -> str:
    check_identifier(value, what="relation name")
    if is_reserved_relationship_type(value):
        raise InvalidIdentifierError(f"relation name {value!r} is a relationship type kag-neo4j uses itself; rename it")
    return value


def _check_value_type(value: str) -> str:
    if value.startswith(STANDARD_PREFIX):
        check_identifier(value[len(STANDARD_PREFIX) :], what="standard type name")
        return value
    return check_identifier(value, what="value type")


TypeName = Annotated[str, _identifier("type name")]
PredicateName = Annotated[str, _identifier("property or relation name")]
Namespace = Annotated[str, _identifier("namespace")]
Label = Annotated[str, AfterValidator(_check_label)]
RelationName = Annotated[str, AfterValidator(_check_relationship_type)]
ValueType = Annotated[str, AfterValidator(_check_value_type)]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Constraints(_Model):
    """``constraint: NotNull, MultiValue, Enum="a,b", Regular="^x+$"``."""

    not_null: bool = False
    multi_value: bool = False
    enum: tuple[str, ...] | None = None
    regular: str | None = None

    @property
    def empty(self) -> bool:
        return not (self.not_null or self.multi_value or self.enum is not None or self.regular is not None)

    def describe(self) -> str:
        parts = []
        if self.not_null:
            parts.append("NotNull")
        if self.multi_value:
            parts.append("MultiValue")
        if self.enum is not None:
            parts.append(f'Enum="{",".join(self.enum)}"')
        if self.regular is not None:
            parts.append(f'Regular="{self.regular}"')
        return ", ".join(parts)


# --------------------------------------------------------------------------- declarations


class PredicateDecl(_Model):
    """A line ``[IND#|CAU#]name(Display): ValueType`` with its nested meta lines."""

    name: PredicateName
    semantic: Semantic | None = None
    display_name: str | None = None
    value_type: ValueType
    description: str | None = None
    constraints: Constraints = Constraints()
    index: IndexKind | None = None
    rule: str | None = None
    properties: tuple[PredicateDecl, ...] = ()
    location: Location | None = None
    value_type_location: Location | None = None


class TypeDecl(_Model):
    """``Name(Display): Kind`` or ``Name(Display) -> Parent:`` with its meta lines."""

    name: TypeName
    display_name: str | None = None
    kind: TypeKind | None = None
    parent: TypeName | None = None
    description: str | None = None
    hypernym_predicate: str | None = None
    properties: tuple[PredicateDecl, ...] = ()
    relations: tuple[PredicateDecl, ...] = ()
    extras: dict[str, str] = Field(default_factory=dict)
    location: Location | None = None
    parent_location: Location | None = None
    hypernym_location: Location | None = None


class SchemaDocument(_Model):
    """A parsed ``.schema`` file.

    ``namespace`` is ``None`` when the file says ``namespace {{namespace}}`` (KAG's project
    template) and no namespace was supplied; validation then asks for one.
    """

    source: str
    namespace: Namespace | None
    namespace_location: Location | None = None
    types: tuple[TypeDecl, ...] = ()


# --------------------------------------------------------------------------- resolved


class ResolvedProperty(_Model):
    """A literal-valued property (basic or standard type), or a sub-property of a predicate."""

    name: PredicateName
    display_name: str | None = None
    description: str | None = None
    value_type: ValueType
    constraints: Constraints = Constraints()
    index: IndexKind | None = None
    vector_property: PredicateName | None = None
    rule: str | None = None
    properties: tuple[ResolvedProperty, ...] = ()
    inherited_from: TypeName | None = None
    location: Location | None = None


class ResolvedRelation(_Model):
    """A class-valued predicate: an edge ``(:source)-[:rel_type]->(:target)``.

    ``declared_in`` says whether it was written under ``properties:`` (KAG object property)
    or ``relations:``; both become edges.
    """

    name: RelationName
    source: TypeName
    target: TypeName
    semantic: Semantic | None = None
    declared_in: Literal["properties", "relations"] = "relations"
    display_name: str | None = None
    description: str | None = None
    constraints: Constraints = Constraints()
    rule: str | None = None
    properties: tuple[ResolvedProperty, ...] = ()
    inherited_from: TypeName | None = None
    location: Location | None = None

    @property
    def rel_type(self) -> str:
        """The relationship type instances use: the predicate name without its prefix."""
        return self.name


class ResolvedType(_Model):
    """A type with inheritance applied: ``properties``/``relations`` include inherited ones."""

    name: TypeName
    label: Label
    labels: tuple[Label, ...]
    kind: TypeKind
    display_name: str | None = None
    description: str | None = None
    parent: TypeName | None = None
    ancestors: tuple[TypeName, ...] = ()
    hypernym_predicate: str | None = None
    properties: tuple[ResolvedProperty, ...] = ()
    relations: tuple[ResolvedRelation, ...] = ()
    extras: dict[str, str] = Field(default_factory=dict)
    location: Location | None = None

    @property
    def own_properties(self) -> tuple[ResolvedProperty, ...]:
        return tuple(p for p in self.properties if p.inherited_from is None)

    @property
    def own_relations(self) -> tuple[ResolvedRelation, ...]:
        return tuple(r for r in self.relations if r.inherited_from is None)


class ResolvedSchema(_Model):
    """A validated schema, ready to apply. ``warnings`` are non-fatal remarks."""

    namespace: Namespace
    source: str
    types: tuple[ResolvedType, ...]
    warnings: tuple[str, ...] = ()

    def get_type(self, name: str) -> ResolvedType:
        for spg_type in self.types:
            if spg_type.name == name:
                return spg_type
        raise KeyError(f"schema {self.namespace} has no type {name!r}")

    def relations(self) -> list[ResolvedRelation]:
        """Every relation as declared (inherited copies left out)."""
        return [rel for spg_type in self.types for rel in spg_type.own_relations]

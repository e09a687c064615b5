"""Hostile names never reach Cypher: the parser, the models and the query builders all refuse them."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from kag_neo4j.errors import InvalidIdentifierError
from kag_neo4j.schema import SchemaFileError, TypeDecl, TypeKind, naming, parse_schema, validate_schema
from kag_neo4j.schema.apply import constraint_statement, fulltext_statement, schema_statements, vector_statement
from kag_neo4j.schema.models import ResolvedSchema, ResolvedType
from kag_neo4j.store.cypher import render

HOSTILE = [
    "Foo`) DETACH DELETE n //",
    "Foo` DETACH DELETE n",
    "x`y",
    "A}B",
    "My Type",
    "a//b",
    "Robert'); MATCH (n) DETACH DELETE n; //",
    "Company`:Admin",
    "n.id",
    "",
    "1abc",
]


@pytest.mark.parametrize("name", HOSTILE)
@pytest.mark.parametrize(
    "template",
    [
        "namespace D\n{name}: EntityType\n",
        "namespace D\n{name}(Display): EntityType\n",
        "namespace D\nA: EntityType\nB -> {name}:\n",
        "namespace D\nA: EntityType\n  properties:\n    {name}: Text\n",
        "namespace D\nA: EntityType\n  relations:\n    {name}(R): A\n",
        "namespace D\nA: EntityType\n  properties:\n    p: {name}\n",
        "namespace D\nA: EntityType\n  relations:\n    r: A\n      properties:\n        {name}: Text\n",
        "namespace {name}\nA: EntityType\n",
    ],
    ids=["type", "type+display", "parent", "property", "relation", "value type", "sub-property", "namespace"],
)
def test_hostile_names_are_rejected_at_parse_or_validate_time(template: str, name: str) -> None:
    text = template.format(name=name)
    with pytest.raises(SchemaFileError) as caught:
        validate_schema(parse_schema(text, source="evil.schema"))
    assert str(caught.value).startswith("evil.schema:")
    assert " expected " in str(caught.value)


def test_hostile_display_names_stay_display_names() -> None:
    schema = validate_schema(parse_schema(
        "namespace D\nA(`}] DETACH DELETE n //): EntityType\n  relations:\n    r(} MATCH (m) //): A\n"))
    spg_type = schema.get_type("A")
    assert spg_type.label == "A" and spg_type.display_name == "`}] DETACH DELETE n //"
    assert spg_type.relations[0].rel_type == "r"
    assert all("DETACH" not in s.cypher for s in schema_statements(schema, None))


def test_namespace_override_is_checked() -> None:
    with pytest.raises(InvalidIdentifierError):
        parse_schema("namespace D\n", namespace="D` DETACH DELETE n")


@pytest.mark.parametrize("name", HOSTILE)
def test_models_refuse_hostile_names(name: str) -> None:
    with pytest.raises(ValidationError):
        TypeDecl(name=name, kind=TypeKind.ENTITY)
    with pytest.raises(ValidationError):
        ResolvedType(name="A", label=name, labels=(name,), kind=TypeKind.ENTITY)


@pytest.mark.parametrize("name", HOSTILE)
def test_query_builders_refuse_hostile_names(name: str) -> None:
    with pytest.raises(InvalidIdentifierError):
        constraint_statement(name)
    with pytest.raises(InvalidIdentifierError):
        fulltext_statement(name, ["desc"])
    with pytest.raises(InvalidIdentifierError):
        fulltext_statement("Company", ["desc", name])
    with pytest.raises(InvalidIdentifierError):
        vector_statement(name, "desc", "desc_embedding", 8)
    with pytest.raises(InvalidIdentifierError):
        vector_statement("Company", "desc", name, 8)
    with pytest.raises(InvalidIdentifierError):
        render("schema/create_constraint", constraint="ok_name", label=name, property="id")
    with pytest.raises(InvalidIdentifierError):
        render("schema/drop_index", index=name)
    with pytest.raises(InvalidIdentifierError):
        naming.label_for(name)


def test_statements_for_an_unvalidated_model_are_refused() -> None:
    evil = ResolvedType.model_construct(name="Evil", label="Evil` DETACH DELETE n //", labels=(),
                                        kind=TypeKind.ENTITY, properties=(), relations=())
    schema = ResolvedSchema.model_construct(namespace="D", source="x", types=(evil,), warnings=())
    with pytest.raises(InvalidIdentifierError):
        schema_statements(schema, None)


@pytest.mark.parametrize("predicate", ["CITES", "cites", "Part_Of", "ＲＥＬＡＴＥＤ", "mentioned_in"])
def test_predicates_that_kag_neo4j_uses_itself_are_refused_in_any_case(predicate: str) -> None:
    text = f"namespace D\nA: EntityType\n  relations:\n    {predicate}: A\n"
    with pytest.raises(SchemaFileError, match="not used by kag-neo4j itself|look"):
        validate_schema(parse_schema(text, source="evil.schema"))


@pytest.mark.parametrize(("name", "label"), [("Chunk", "SpgChunk"), ("chunk", "Spgchunk"), ("DOCUMENT", "SpgDOCUMENT"),
                                             ("KagRun", "SpgKagRun"), ("SchemaThing", "SpgSchemaThing"),
                                             ("Kagura", "Kagura")])
def test_types_named_like_kag_neo4j_labels_get_the_prefix(name: str, label: str) -> None:
    schema = validate_schema(parse_schema(f"namespace D\n{name}: EntityType\n"))
    assert schema.get_type(name).label == label


@pytest.mark.parametrize("name", ["Ｃｈｕｎｋ", "Сhunk", "Dοcument", "Area²"])
def test_look_alike_type_and_predicate_names_are_refused(name: str) -> None:
    for text in (f"namespace D\n{name}: EntityType\n", f"namespace D\nA: EntityType\n  relations:\n    {name}: A\n",
                 f"namespace D\nA: EntityType\n  properties:\n    {name}: Text\n"):
        with pytest.raises(SchemaFileError, match="look-alike|look alike"):
            validate_schema(parse_schema(text, source="evil.schema"))


def test_resolved_models_refuse_kag_neo4j_labels_and_relationship_types() -> None:
    from kag_neo4j.schema.models import ResolvedRelation

    for label in ("Chunk", "document", "KagRun"):
        with pytest.raises(ValidationError, match="reserved"):
            ResolvedType(name="A", label=label, labels=(label,), kind=TypeKind.ENTITY)
    with pytest.raises(ValidationError, match="uses itself"):
        ResolvedRelation(name="CITES", source="A", target="A")

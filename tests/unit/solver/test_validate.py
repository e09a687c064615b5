"""Standardising a plan's types and predicates against a schema description."""

from __future__ import annotations

import pytest

from kag_neo4j.errors import InvalidIdentifierError, SchemaError
from kag_neo4j.solver.lf.ast import Plan, RetrievalOp
from kag_neo4j.solver.lf.parse import parse_plan
from kag_neo4j.solver.validate import (
    VALUE_TYPES,
    PredicateSpec,
    SchemaDescription,
    SimpleSchema,
    name_key,
    validate_plan,
)
from kag_neo4j.store.identifiers import check_identifier

SCHEMA = SimpleSchema.build(
    ["Person", "Organization", "SportsTeam", "City"],
    [
        ("playsFor", "Person", "SportsTeam"),
        ("foundedIn", "Organization", "Year"),
        ("bornIn", "Person", "City"),
        PredicateSpec("knows"),
    ],
    synonyms={"效力于": "playsFor", "club": "SportsTeam", "人物": "Person"},
    parents={"SportsTeam": "Organization"},
)

HOSTILE = [
    "Person`) DETACH DELETE (n",
    "Person` // comment",
    "x]->(y) DETACH DELETE y //",
    "Person:Admin",
    "`Person`",
    "Person\nMATCH (n) DETACH DELETE n",
]


def retrieval(plan: Plan, action: int) -> RetrievalOp:
    for _, a in plan.actions():
        if a.number == action:
            assert isinstance(a.operator, RetrievalOp)
            return a.operator
    raise KeyError(action)


def names_reaching_cypher(plan: Plan) -> list[str]:
    names = []
    for _, action in plan.actions():
        op = action.operator
        if isinstance(op, RetrievalOp):
            names += [el.type for _, el in op.elements() if el.type is not None]
            names += [c.prop for c in op.constraints]
    return names


def test_simple_schema_is_a_schema_description() -> None:
    assert isinstance(SCHEMA, SchemaDescription)


@pytest.mark.parametrize(
    ("written", "key"),
    [
        ("plays for", "playsfor"),
        ("plays_for", "playsfor"),
        ("PLAYS-FOR", "playsfor"),
        ("Ｓports Team", "sportsteam"),
    ],
)
def test_name_key(written: str, key: str) -> None:
    assert name_key(written) == key


def test_standardises_case_spaces_and_synonyms() -> None:
    plan = parse_plan(
        "Step1: q\n"
        "Action1: Retrieval(s=s1:person[`Cristiano Ronaldo`], p=p1:`plays for`, o=o1:club, p.year=2011)\n"
        "Step2: r\n"
        "Action2: Retrieval(s=s2:人物[`C罗`], p=p2:效力于, o=o2:sports_team)\n"
        "Action3: Output(o1, o2)"
    )
    result = validate_plan(plan, SCHEMA)
    first, second = retrieval(result.plan, 1), retrieval(result.plan, 2)
    assert (first.s.type, first.p.type, first.o.type) == ("Person", "playsFor", "SportsTeam")
    assert (second.s.type, second.p.type, second.o.type) == ("Person", "playsFor", "SportsTeam")
    assert result.warnings == []
    changes = {(i.action, i.field, i.original, i.replacement) for i in result.issues}
    assert (1, "p.predicate", "plays for", "playsFor") in changes
    assert (2, "o.type", "sports_team", "SportsTeam") in changes
    assert all(i.level == "info" for i in result.issues)
    # the standardised plan prints and parses again
    assert parse_plan(result.plan.to_text()) == result.plan


def test_unknown_type_falls_back_to_entity_with_a_warning() -> None:
    plan = parse_plan(
        "Step1: q\nAction1: Retrieval(s=s1:Spaceship[`Enterprise`], p=p1:knows, o=o1)\nAction2: Output(o1)"
    )
    result = validate_plan(plan, SCHEMA)
    assert retrieval(result.plan, 1).s.type == "Entity"
    [warning] = result.warnings
    assert (warning.field, warning.original, warning.replacement) == ("s.type", "Spaceship", "Entity")
    assert "Spaceship" in warning.message and "Entity" in warning.message


def test_generic_type_is_configurable_but_checked() -> None:
    plan = parse_plan("Step1: q\nAction1: Retrieval(s=s1:Spaceship, p=p1, o=o1)\nAction2: Output(o1)")
    assert retrieval(validate_plan(plan, SCHEMA, generic_type="Thing").plan, 1).s.type == "Thing"
    with pytest.raises(InvalidIdentifierError):
        validate_plan(plan, SCHEMA, generic_type="Thing`) DETACH DELETE (n")


def test_unknown_predicate_becomes_any_relation_and_keeps_its_text_as_a_value() -> None:
    plan = parse_plan(
        "Step1: q\nAction1: Retrieval(s=s1:Person[`Ada`], p=p1:collaboratedWith, o=o1:Person)\nAction2: Output(o1)"
    )
    result = validate_plan(plan, SCHEMA)
    assert retrieval(result.plan, 1).p.type is None
    assert result.open_predicates == {"p1": "collaboratedWith"}
    assert [w.field for w in result.warnings] == ["p.predicate"]


def test_value_types_are_kept_and_marked() -> None:
    plan = parse_plan(
        "Step1: q\nAction1: Retrieval(s=s1:SportsTeam[`Real Madrid`], p=p1:foundedIn, o=o1:year)\nAction2: Output(o1)"
    )
    result = validate_plan(plan, SCHEMA)
    assert retrieval(result.plan, 1).o.type == "Year"
    assert result.is_value_type("Year") and not result.is_value_type("Person")
    assert result.warnings == []  # SportsTeam is an Organization, so the domain fits


def test_domain_and_range_mismatch_is_a_warning() -> None:
    plan = parse_plan(
        "Step1: q\nAction1: Retrieval(s=s1:City[`Lisbon`], p=p1:playsFor, o=o1:Person)\nAction2: Output(o1)"
    )
    result = validate_plan(plan, SCHEMA)
    messages = [w.message for w in result.warnings]
    assert any("subject of type 'Person'" in m and "'City'" in m for m in messages)
    assert any("object of type 'SportsTeam'" in m for m in messages)
    op = retrieval(result.plan, 1)
    assert (op.s.type, op.o.type) == ("City", "Person")  # warned, not rewritten


def test_untyped_definitions_take_the_predicate_types_but_reads_do_not() -> None:
    plan = parse_plan(
        "Step1: q\nAction1: Retrieval(s=s1[`Ronaldo`], p=p1:playsFor, o=o1)\n"
        "Step2: r\nAction2: Retrieval(s=o1, p=p2:foundedIn, o=o2)\nAction3: Output(o2)"
    )
    result = validate_plan(plan, SCHEMA)
    first, second = retrieval(result.plan, 1), retrieval(result.plan, 2)
    assert (first.s.type, first.o.type) == ("Person", "SportsTeam")
    assert second.s.type is None and second.s.is_bare  # still reads o1
    assert second.o.type == "Year"
    assert result.plan.dependencies() == plan.dependencies()


def test_ambiguous_spelling_is_not_guessed() -> None:
    schema = SimpleSchema.build(["Person", "PERSON"], [])
    plan = parse_plan("Step1: q\nAction1: Retrieval(s=s1:person, p=p1, o=o1)\nAction2: Output(o1)")
    result = validate_plan(plan, schema)
    assert retrieval(result.plan, 1).s.type == "Entity"
    assert "several schema types" in result.warnings[0].message
    exact = parse_plan("Step1: q\nAction1: Retrieval(s=s1:PERSON, p=p1, o=o1)\nAction2: Output(o1)")
    assert retrieval(validate_plan(exact, schema).plan, 1).s.type == "PERSON"


@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_type_and_predicate_names_never_survive(hostile: str) -> None:
    text = (
        "Step1: q\n"
        f"Action1: Retrieval(s=s1:{_quoted(hostile)}[`x`], p=p1:{_quoted(hostile)}, o=o1:{_quoted(hostile)})\n"
        "Action2: Output(o1)"
    )
    plan = parse_plan(text)
    assert retrieval(plan, 1).s.type == hostile.strip()  # the parser keeps the text ...
    result = validate_plan(plan, SCHEMA)
    op = retrieval(result.plan, 1)
    assert (op.s.type, op.p.type, op.o.type) == ("Entity", None, "Entity")  # ... validation does not
    assert result.open_predicates["p1"] == hostile.strip()
    for name in names_reaching_cypher(result.plan):
        assert check_identifier(name) == name
    assert hostile.strip() not in result.plan.to_text()


def _quoted(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_names_in_the_schema_are_rejected(hostile: str) -> None:
    with pytest.raises(InvalidIdentifierError):
        SimpleSchema.build(["Person", hostile], [])
    with pytest.raises(InvalidIdentifierError):
        SimpleSchema.build(["Person"], [PredicateSpec(hostile)])


def test_hostile_names_in_a_protocol_schema_are_rejected_at_validation() -> None:
    class Loose:
        type_names = ["Person", "Person`) DETACH DELETE (n"]
        predicates: dict[str, PredicateSpec] = {}
        synonyms: dict[str, str] = {}
        parents: dict[str, str] = {}
        value_types = VALUE_TYPES

    plan = parse_plan("Step1: q\nAction1: Retrieval(s=s1:Person, p=p1, o=o1)\nAction2: Output(o1)")
    with pytest.raises(InvalidIdentifierError):
        validate_plan(plan, Loose())


def test_hostile_synonym_cannot_smuggle_a_name() -> None:
    # a synonym's *surface* may be anything (it is only compared); its target must be declared
    schema = SimpleSchema.build(["Person"], [], synonyms={"Person`) DETACH DELETE (n": "Person"})
    plan = parse_plan(
        'Step1: q\nAction1: Retrieval(s=s1:"Person`) DETACH DELETE (n", p=p1, o=o1)\nAction2: Output(o1)'
    )
    assert retrieval(validate_plan(plan, schema).plan, 1).s.type == "Person"
    with pytest.raises(SchemaError):
        SimpleSchema.build(["Person"], [], synonyms={"x": "Person`) DETACH DELETE (n"})


def test_schema_consistency_errors() -> None:
    with pytest.raises(SchemaError, match="does not declare"):
        SimpleSchema.build(["Person"], [("worksFor", "Person", "Company")])
    with pytest.raises(SchemaError, match="undeclared type"):
        SimpleSchema.build(["Person"], [], parents={"Person": "Agent"})


@pytest.mark.parametrize("name", ["Chunk", "Document", "KagRun", "chunk", "SchemaType"])
def test_a_schema_of_plans_may_not_name_kag_neo4j_labels(name: str) -> None:
    with pytest.raises(InvalidIdentifierError, match="kag-neo4j uses"):
        SimpleSchema.build(["Person", name], [])

    class Loose:
        type_names = ["Person", name]
        predicates: dict[str, PredicateSpec] = {}
        synonyms: dict[str, str] = {}
        parents: dict[str, str] = {}
        value_types = VALUE_TYPES

    plan = parse_plan("Step1: q\nAction1: Retrieval(s=s1:Person, p=p1, o=o1)\nAction2: Output(o1)")
    with pytest.raises(InvalidIdentifierError, match="kag-neo4j uses"):
        validate_plan(plan, Loose())


def test_plan_types_naming_kag_neo4j_labels_become_the_generic_type() -> None:
    plan = parse_plan("Step1: q\nAction1: Retrieval(s=s1:Chunk[`x`], p=p1:CITES, o=o1:KagRun)\nAction2: Output(o1)")
    op = retrieval(validate_plan(plan, SCHEMA).plan, 1)
    assert (op.s.type, op.p.type, op.o.type) == ("Entity", None, "Entity")

"""Validation resolves inheritance, value types and labels, and reports every problem with its location."""

from __future__ import annotations

from pathlib import Path

import pytest

from kag_neo4j.schema import (
    IndexKind,
    SchemaFileError,
    Semantic,
    TypeKind,
    load_schema,
    parse_schema,
    validate_schema,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "schemas"
SAMPLE_SCHEMAS = sorted(FIXTURES.glob("*.schema"))
EXAMPLE = Path(__file__).resolve().parents[3] / "schema" / "CompanyFinance.schema"


def _validate(text: str):  # noqa: ANN202 - test helper
    return validate_schema(parse_schema(text, source="t.schema"))


@pytest.mark.parametrize("path", SAMPLE_SCHEMAS, ids=lambda p: p.stem)
def test_every_sample_schema_validates(path: Path) -> None:
    schema = load_schema(path, namespace="Demo" if path.stem == "default_template" else None)
    assert len(schema.types) == len(parse_schema(path.read_text(encoding="utf-8"), namespace="X").types)


def test_supply_chain_resolved() -> None:
    schema = load_schema(FIXTURES / "SupplyChain.schema")
    assert schema.warnings == ()
    company = schema.get_type("Company")
    assert company.label == "Company" and company.labels == ("Company",)
    literal = {p.name: p.value_type for p in company.properties}
    assert literal["totalTransInAmt"] == "Float"
    edges = {r.name: r for r in company.relations}
    assert edges["product"].declared_in == "properties" and edges["product"].target == "Product"
    assert edges["product"].constraints.multi_value
    assert [p.name for p in edges["fundTrans"].properties] == ["transDate", "transAmt"]
    assert edges["fundTrans"].declared_in == "relations"
    belong = schema.get_type("Product").relations[-1]
    assert (belong.name, belong.rel_type, belong.semantic, belong.target) == ("belongTo", "belongTo", Semantic.IND,
                                                                             "TaxOfProduct")
    assert len(schema.relations()) == 20
    assert schema.get_type("TaxOfProdEvent").hypernym_predicate == "isA"


def test_inheritance_is_resolved() -> None:
    schema = load_schema(EXAMPLE)
    company = schema.get_type("Company")
    assert company.kind is TypeKind.ENTITY
    assert company.parent == "Organization" and company.ancestors == ("Organization",)
    assert company.labels == ("Company", "Organization")
    inherited = {p.name: p.inherited_from for p in company.properties}
    assert inherited["desc"] == "Organization" and inherited["ticker"] is None
    acquisition = schema.get_type("Acquisition")
    assert acquisition.kind is TypeKind.EVENT
    relations = {r.name: r for r in acquisition.relations}
    assert relations["subject"].inherited_from == "CorporateEvent"
    assert relations["subject"].source == "Acquisition"
    assert relations["target"].inherited_from is None
    # inherited copies are not listed twice among the schema's relations
    assert sum(1 for r in schema.relations() if r.name == "subject") == 1


def test_grandchild_inherits_through_the_chain() -> None:
    schema = _validate("namespace D\nC -> B:\nB -> A:\nA: ConceptType\n  hypernymPredicate: locateAt\n"
                       "  properties:\n    p: Text\n      index: Vector\n")
    c = schema.get_type("C")
    assert c.ancestors == ("B", "A") and c.labels == ("C", "B", "A")
    assert c.kind is TypeKind.CONCEPT and c.hypernym_predicate == "locateAt"
    (p,) = c.properties
    assert (p.inherited_from, p.index, p.vector_property) == ("A", IndexKind.VECTOR, "p_embedding")


def test_concept_hypernym_defaults_to_is_a() -> None:
    assert _validate("namespace D\nA: ConceptType\n").get_type("A").hypernym_predicate == "isA"
    assert _validate("namespace D\nA: EntityType\n").get_type("A").hypernym_predicate is None


def test_reserved_names_get_a_prefixed_label_and_a_warning() -> None:
    schema = load_schema(FIXTURES / "HotpotQA.schema")
    concept = schema.get_type("Concept")
    assert (concept.name, concept.label, concept.display_name) == ("Concept", "SpgConcept", "概念")
    assert schema.get_type("Event").label == "SpgEvent"
    assert any("'Concept' is stored under the label 'SpgConcept'" in w for w in schema.warnings)
    assert load_schema(FIXTURES / "AffairQA.schema").get_type("Chunk").label == "SpgChunk"


def test_display_names_are_never_labels() -> None:
    schema = load_schema(FIXTURES / "RiskMining.schema")
    assert {t.label for t in schema.types} == {"TaxOfRiskUser", "TaxOfRiskApp", "Cert", "App", "Company", "Device",
                                             "Person"}


def test_event_without_subject_warns() -> None:
    schema = _validate("namespace D\nE: EventType\n")
    assert schema.warnings == ("t.schema:2:1: event type 'E' declares no 'subject' (KAG expects one)",)


def test_template_needs_a_namespace() -> None:
    with pytest.raises(SchemaFileError, match=r"default_template.schema:1:11: expected a namespace name, found the "
                                              r"template placeholder \{\{namespace\}\}"):
        load_schema(FIXTURES / "default_template.schema")
    assert load_schema(FIXTURES / "default_template.schema", namespace="Demo").namespace == "Demo"


H = "namespace D\n"
INVALID = [
    ("unknown parent", H + "A -> B:\n", "2:6: expected a declared parent type, found unknown type 'B'"),
    ("parent is a kind", H + "A -> EntityType:\n", "write 'A: EntityType'"),
    ("cycle", H + "A -> B:\nB -> C:\nC -> A:\n", "2:1: expected an acyclic inheritance chain, found the cycle "
     "A -> B -> C -> A"),
    ("duplicate type", H + "A: EntityType\nA: ConceptType\n", "3:1: expected a new type name, found 'A' again "
     "(first declared on line 2)"),
    ("relation to a literal", H + "A: EntityType\n  relations:\n    r: Text\n", "4:8: expected a type as the "
     "target of relation 'r'"),
    ("semantic literal", H + "A: EntityType\n  properties:\n    IND#r: Text\n", "4:5: expected a type as the "
     "target of the semantic predicate IND#r"),
    ("hypernym on entity", H + "A: EntityType\n  hypernymPredicate: isA\n", "3:22: expected hypernymPredicate only "
     "on a ConceptType"),
    ("unknown hypernym", H + "A: ConceptType\n  hypernymPredicate: partOf\n", "3:22: expected a hypernym predicate "
     "(isA, locateAt), found 'partOf'"),
    ("id predicate", H + "A: EntityType\n  properties:\n    id: Text\n", "4:5: expected a predicate name other "
     "than 'id'"),
    ("duplicate predicate", H + "A: EntityType\n  properties:\n    p: Text\n  relations:\n    p: A\n",
     "6:5: expected a new predicate name in type 'A', found 'p' again (first on line 4)"),
    ("redeclared inherited", H + "A: EntityType\n  properties:\n    p: Text\nB -> A:\n  properties:\n    p: Integer\n",
     "7:5: expected a new predicate name, found 'p', which 'B' already inherits from 'A'"),
    ("bad regex", H + "A: EntityType\n  properties:\n    p: Text\n      constraint: Regular=\"([a-z\"\n",
     "4:5: expected a valid regular expression in Regular"),
    ("regex on integer", H + "A: EntityType\n  properties:\n    p: Integer\n      constraint: Regular=\"^1$\"\n",
     "4:5: expected Regular only on Text properties"),
    ("index on integer", H + "A: EntityType\n  properties:\n    p: Integer\n      index: Text\n",
     "4:5: expected index only on Text properties"),
    ("index on relation", H + "A: EntityType\n  properties:\n    p: A\n      index: Text\n",
     "which points to the type 'A'"),
    ("enum on relation", H + "A: EntityType\n  properties:\n    p: A\n      constraint: Enum=\"x\"\n",
     "4:5: expected only NotNull and MultiValue on 'p'"),
    ("class sub-property", H + "A: EntityType\n  relations:\n    r: A\n      properties:\n        s: A\n",
     "6:12: expected Text, Integer, Float or STD.<Name> as a sub-property type"),
    ("indexed sub-property", H + "A: EntityType\n  relations:\n    r: A\n      properties:\n        s: Text\n"
     "          index: Text\n", "6:9: expected index only on type properties"),
    ("reserved relationship type", H + "A: EntityType\n  relations:\n    RELATED: A\n",
     "4:5: expected a predicate name not used by kag-neo4j itself, found 'RELATED'"),
    ("label clash", H + "Concept: EntityType\nSpgConcept: EntityType\n", "3:1: expected distinct labels"),
    ("name too long", H + "A" * 120 + ": EntityType\n", "2:1: type name 'AAAA"),
]


@pytest.mark.parametrize(("text", "message"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID])
def test_invalid_schema(text: str, message: str) -> None:
    with pytest.raises(SchemaFileError) as caught:
        _validate(text)
    assert f"t.schema:{message}" in str(caught.value) or message in str(caught.value)
    assert str(caught.value).startswith("t.schema:")


def test_all_problems_are_reported_in_line_order() -> None:
    with pytest.raises(SchemaFileError) as caught:
        _validate(H + "B -> Nope:\nA: EntityType\n  properties:\n    p: Compani\n    q: Bar\n")
    assert [(i.location.line, i.location.column) for i in caught.value.issues if i.location] == [(2, 6), (5, 8), (6, 8)]
    assert str(caught.value).count("\n") == 2


def test_unknown_type_suggests_a_close_name() -> None:
    with pytest.raises(SchemaFileError, match=r"found unknown type 'Txt' \(did you mean 'Text'\?\)"):
        _validate(H + "A: EntityType\n  properties:\n    p: Txt\n")

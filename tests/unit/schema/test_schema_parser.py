"""The parser reads KAG's sample schemas and every construct of the language."""

from __future__ import annotations

from pathlib import Path

import pytest

from kag_neo4j.schema import IndexKind, Semantic, TypeKind, parse_file, parse_schema

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "schemas"
SAMPLE_SCHEMAS = sorted(FIXTURES.glob("*.schema"))


def test_there_are_twelve_sample_schemas() -> None:
    assert len(SAMPLE_SCHEMAS) == 12


@pytest.mark.parametrize("path", SAMPLE_SCHEMAS, ids=lambda p: p.stem)
def test_every_sample_schema_parses(path: Path) -> None:
    doc = parse_file(path)
    assert doc.types, f"{path.name} parsed to no types"
    first_type_line = next(i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                           if line and not line[0].isspace() and not line.startswith("namespace"))
    assert doc.types[0].location is not None and doc.types[0].location.line == first_type_line


def test_supply_chain_structure() -> None:
    doc = parse_file(FIXTURES / "SupplyChain.schema")
    assert doc.namespace == "SupplyChain"
    names = [t.name for t in doc.types]
    assert names == ["Industry", "TaxOfProduct", "Product", "Company", "Person", "Index", "Trend",
                     "TaxOfCompanyEvent", "CompanyEvent", "TaxOfProdEvent", "ProductChainEvent"]
    by_name = {t.name: t for t in doc.types}
    assert by_name["Industry"].kind is TypeKind.CONCEPT
    assert by_name["Industry"].hypernym_predicate == "isA"
    assert by_name["Industry"].display_name == "产业"
    assert by_name["CompanyEvent"].kind is TypeKind.EVENT

    product = {p.name: p for p in by_name["Product"].properties}
    # "\t\t    constraint" under "\t\thasSupplyChain": tabs and spaces mixed
    assert product["hasSupplyChain"].constraints.multi_value
    assert product["belongTo"].semantic is Semantic.IND
    assert product["belongTo"].value_type == "TaxOfProduct"

    person = {p.name: p for p in by_name["Person"].properties}
    # "    \t\tconstraint" (spaces then tabs) under "\t\tlegalRepresentative"
    assert person["legalRepresentative"].constraints.multi_value

    company = by_name["Company"]
    fund_trans = next(r for r in company.relations if r.name == "fundTrans")
    assert [(p.name, p.value_type) for p in fund_trans.properties] == [("transDate", "Text"), ("transAmt", "Integer")]
    main_supply = next(r for r in company.relations if r.name == "mainSupply")
    assert main_supply.rule is not None
    assert main_supply.rule.startswith("Define (s:Company)-[p:mainSupply]->(o:Company) {")
    assert "R1(\"占比必须超过50%\"): targetTransSum*1.0/s.totalTransInAmt > 0.5" in main_supply.rule
    assert main_supply.rule.rstrip().endswith("}")
    lead_to = by_name["ProductChainEvent"].relations[0]
    assert (lead_to.semantic, lead_to.name, lead_to.value_type) == (Semantic.CAU, "leadTo", "CompanyEvent")


def test_rule_text_keeps_comments_and_is_dedented() -> None:
    doc = parse_file(FIXTURES / "SupplyChain.schema")
    company = next(t for t in doc.types if t.name == "Company")
    diff = next(p for p in company.properties if p.name == "cashflowDiff1Month")
    assert diff.rule is not None
    assert "// 此处引用特征3中的规则" in diff.rule
    assert diff.rule.splitlines()[0] == "Define (s:Company)-[p:cashflowDiff1Month]->(o:Float) {"


def test_namespace_template_placeholder() -> None:
    doc = parse_file(FIXTURES / "default_template.schema")
    assert doc.namespace is None
    location = doc.namespace_location
    assert location is not None and (location.line, location.column) == (1, 11)
    assert parse_file(FIXTURES / "default_template.schema", namespace="Demo").namespace == "Demo"


SMALL = """\
# a comment before the namespace
namespace Demo

Thing(Display (with parens)): EntityType
    desc: A thing: with a colon.
    properties:
        # a comment inside a block
        code(Code): Text
            desc: The code.
            constraint: NotNull, MultiValue, Enum="a, b ,c", Regular="^[a-z]+\\"x\\",y$"
            index: TextAndVector
        size: Integer
        label(标签): STD.ChinaMobile
        rated: Float
            rule: [[ Define (s:Thing)-[p:rated]->(o:Float) { } ]]
            properties:
                confidence(Confidence): Float
    relations:
        partOf(Part of): Thing
            properties:
                since: Text
                    constraint: Regular='^\\d{4}$'
            rule: [[
            ]]

Special(Special thing)->Thing:

Other -> Thing:
    desc: no display name
"""


def test_all_constructs() -> None:
    doc = parse_schema(SMALL, source="small.schema")
    thing, special, other = doc.types
    assert thing.display_name == "Display (with parens)"
    assert thing.description == "A thing: with a colon."
    code, size, label, rated = thing.properties
    assert code.description == "The code."
    assert code.constraints.not_null and code.constraints.multi_value
    assert code.constraints.enum == ("a", "b", "c")
    assert code.constraints.regular == '^[a-z]+"x",y$'
    assert code.index is IndexKind.TEXT_AND_VECTOR
    assert size.display_name is None and size.value_type == "Integer"
    assert label.value_type == "STD.ChinaMobile"
    assert rated.rule == "Define (s:Thing)-[p:rated]->(o:Float) { }"
    assert [(p.name, p.value_type) for p in rated.properties] == [("confidence", "Float")]
    (part_of,) = thing.relations
    assert part_of.properties[0].constraints.regular == "^\\d{4}$"
    assert part_of.rule is None  # an empty rule block
    assert (special.name, special.parent, special.kind) == ("Special", "Thing", None)
    assert special.display_name == "Special thing"
    assert (other.name, other.parent, other.description) == ("Other", "Thing", "no display name")
    assert code.location is not None and (code.location.line, code.location.column) == (8, 9)
    assert code.value_type_location is not None and code.value_type_location.column == 21


def test_chinese_names_are_identifiers_but_display_names_are_free_text() -> None:
    doc = parse_schema("namespace 演示\n\n人物(Person / 人): EntityType\n")
    assert doc.namespace == "演示"
    assert (doc.types[0].name, doc.types[0].display_name) == ("人物", "Person / 人")


def test_windows_line_endings_and_bom() -> None:
    doc = parse_schema("\ufeffnamespace Demo\r\n\r\nA: EntityType\r\n\tproperties:\r\n\t\tx: Text\r\n")
    assert doc.types[0].properties[0].name == "x"


def test_empty_types_blocks() -> None:
    doc = parse_schema("namespace Demo\nA: EntityType\n  properties:\n  relations:\nB: EntityType\n")
    assert [t.name for t in doc.types] == ["A", "B"]
    assert doc.types[0].properties == () and doc.types[0].relations == ()

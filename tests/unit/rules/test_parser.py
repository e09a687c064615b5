"""The rule parser reads every KAG example rule (demo files and schema rule blocks) and
reports malformed rules at their exact place."""

from __future__ import annotations

from pathlib import Path

import pytest

from kag_neo4j.rules import ast
from kag_neo4j.rules.errors import RuleSyntaxError
from kag_neo4j.rules.load import load_rules, schema_rule_regions
from kag_neo4j.rules.parser import parse_rules

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
SCHEMAS = sorted((FIXTURES / "schemas").glob("*.schema"))
DEMOS = sorted((FIXTURES / "rules" / "kag").iterdir())


def test_every_schema_rule_block_parses() -> None:
    counts = {}
    for path in SCHEMAS:
        text = path.read_text(encoding="utf-8")
        rules = load_rules([path]).rules
        assert len(rules) == len(schema_rule_regions(text)) == text.count("rule: [[")
        counts[path.stem] = len(rules)
    assert counts["RiskMining"] == 2 and counts["SupplyChain"] == 13
    assert sum(counts.values()) == 15


def test_every_demo_rule_file_parses() -> None:
    parsed = {path.name: load_rules([path]) for path in DEMOS}
    assert [r.id for r in parsed["riskmining_concept.rule"].rules] == [
        "RiskMining:App-belongTo->TaxOfRiskApp/赌博应用",
        "RiskMining:Person-belongTo->TaxOfRiskUser/赌博App开发者",
        "RiskMining:Person-belongTo->TaxOfRiskUser/赌博App老板",
    ]
    supply = parsed["supplychain_concept.rule"].rules
    assert len(supply) == 5 and supply[3].rule.action is not None and len(supply[3].rule.action) == 2
    assert supply[3].id == "SupplyChain:TaxOfProdEvent/价格上涨-leadTo->TaxOfCompanyEvent/成本上涨"
    medicine = parsed["medicine_rule.dsl"]
    assert medicine.rules == () and len(medicine.queries) == 1
    (query,) = medicine.queries
    assert query.match[0].nodes[0].types[0].namespace == "Medicine"
    assert query.match[0].nodes[0].types[0].name == "HospitalDepartment"


def test_schema_rule_locations_are_the_schema_files_own() -> None:
    path = FIXTURES / "schemas" / "RiskMining.schema"
    rules = load_rules([path]).rules
    lines = path.read_text(encoding="utf-8").splitlines()
    for loaded in rules:
        where = loaded.rule.location
        assert lines[where.line - 1][where.column - 1 :].startswith("Define")


def test_constructs_of_the_demo_rules() -> None:
    supply = load_rules([FIXTURES / "schemas" / "SupplyChain.schema"])
    by_id = {r.id: r.rule for r in supply.rules}
    month = by_id["SupplyChain:Company-fundTrans1Month->Float"]
    condition, total, output = month.constraint
    assert isinstance(condition, ast.Condition) and condition.name == "R1" and condition.description == "近1个月的流出资金"
    assert isinstance(condition.expr, ast.Binary) and condition.expr.op == "<"
    diff = condition.expr.left
    assert isinstance(diff, ast.Call) and diff.name == "date_diff"
    assert isinstance(diff.args[0], ast.Call) and diff.args[0].name == "from_unix_time"
    assert isinstance(total, ast.Assignment) and isinstance(total.expr, ast.Aggregate)
    assert total.expr.keys == ("s",) and total.expr.func == "sum"
    assert isinstance(output, ast.Assignment) and output.name == "o"
    release = load_rules([FIXTURES / "schemas" / "RiskMining.schema"]).get("Person-release->App").rule
    second = release.structure[1]
    assert [e.direction for e in second.edges] == ["out", "in"]
    assert second.edges[1].var == "useCert" and second.edges[1].types == ()


def test_expression_precedence() -> None:
    rule = parse_rules(
        "Define (s:A)-[p:q]->(o:B) { Constraint { R1: not s.x == 1 or s.y in [1, 2] and s.z like 'a%' } }"
    ).rules[0]
    expr = rule.constraint[0].expr
    assert isinstance(expr, ast.Binary) and expr.op == "or"
    assert isinstance(expr.left, ast.Unary) and expr.left.op == "not"
    assert isinstance(expr.right, ast.Binary) and expr.right.op == "and"
    assert expr.right.left.op == "in" and isinstance(expr.right.left.right, ast.ListExpr)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("text", "line", "column", "message"),
    [
        ("Define (s:A)-[p:q]->(o:B) {\n  Structure {\n    (s)-[:r]->(o\n  }\n}", 4, 3,
         "expected ')' closing the node pattern, found '}'"),
        ("Define (s:A)-[p:q]-(o:B) {}", 1, 19, "expected '->': a rule defines a directed predicate, found '-'"),
        ("Define (s:A)-[p:q]->(o:B) {\n  Constraint {\n    R1: s.x == \n  }\n}", 4, 3,
         "expected a value, a name or '(', found '}'"),
        ("Define (s:A)-[p:q]->(o:B) { Structure {} Structure {} }", 1, 42,
         "expected one Structure block per rule, found a second one"),
        ("Define (s:A)-[p:q]->(o:B) { Constraint { x = 'open } }", 1, 46,
         "expected ' closing this string, found the end of the line"),
        ("Define (s:A)-[p:q]->(o:B) { Action { make(x) } }", 1, 38,
         "expected createNodeInstance(…) or createEdgeInstance(…), found 'make'"),
        ("Define (s:A)-[p:q]->(o:B) { Constraint { n = group().count(s) } }", 1, 46,
         "expected at least one variable in group(…), found none"),
    ],
)
def test_errors_name_file_line_and_column(text: str, line: int, column: int, message: str) -> None:
    with pytest.raises(RuleSyntaxError) as caught:
        parse_rules(text, "bad.rule")
    assert str(caught.value) == f"bad.rule:{line}:{column}: {message}"


def test_own_fixture_parses() -> None:
    rules = load_rules([FIXTURES / "rules" / "fraud.rule"]).rules
    assert [r.id for r in rules] == [
        "Fraud:Shop-belongTo->ShopKind/Gambling", "Fraud:Member-runs->Shop",
        "Fraud:Member-belongTo->MemberKind/GamblingOperator", "Fraud:Member-paidLast30Days->Integer",
    ]


def test_duplicate_heads_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "twice.rule"
    path.write_text("Define (s:A)-[p:q]->(o:B) {}\nDefine (s:A)-[p:q]->(o:B) {}\n", encoding="utf-8")
    with pytest.raises(Exception, match=r"twice.rule:2:1: expected one rule per head, found a second A-q->B"):
        load_rules([path])

"""The compiler: each construct's Cypher shape and parameters, the errors it refuses with, and
that no name or value of a rule reaches the query text unchecked."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from kag_neo4j.rules.apply import bind, compile_all, explain
from kag_neo4j.rules.compile import CompiledRule, RuleKind, compile_rule
from kag_neo4j.rules.errors import RuleCompileError, RuleCycleError
from kag_neo4j.rules.expressions import like_parts
from kag_neo4j.rules.load import load_rules

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def compiled(tmp_path: Path, text: str, *extra: Path) -> list[CompiledRule]:
    path = tmp_path / "case.rule"
    path.write_text(text, encoding="utf-8")
    rules = load_rules([*extra, path])
    return [compile_rule(rule, rules) for rule in rules.rules]


def one(tmp_path: Path, text: str, *extra: Path) -> CompiledRule:
    return compiled(tmp_path, text, *extra)[-1]


def lines(rule: CompiledRule) -> list[str]:
    return [line.strip() for line in rule.derive.cypher.splitlines()]


def test_relation_with_group_count() -> None:
    rules = load_rules([FIXTURES / "schemas" / "RiskMining.schema"])
    rule = compile_rule(rules.get("Person-developed->App"), rules)
    assert rule.kind == RuleKind.RELATION
    assert lines(rule) == [
        "MATCH (`s`:`Person`)-[:`hasDevice`]->(`d`:`Device`)-[:`install`]->(`o`:`App`)",
        "WITH DISTINCT `s`, `o`, `d`",
        "WITH `s`, `o`, count(`d`) AS `deviceNum`",
        "WHERE (`deviceNum` > $p1)",
        "WITH DISTINCT `s`, `o`",
        "MERGE (`s`)-[__derived:`developed` {derived_by: $rule_id}]->(`o`)",
        "SET __derived.rule_version = $rule_version, __derived.as_of = $as_of",
        "RETURN count(__derived) AS derived",
    ]
    assert rule.derive.parameters["p1"] == 5
    assert rule.derive.parameters["rule_id"] == "RiskMining:Person-developed->App"
    assert len(rule.derive.parameters["rule_version"]) == 16
    (retract,) = rule.retract
    assert retract.cypher.splitlines()[0] == (
        "MATCH (:Entity|Event|Concept)-[__r:`developed` {derived_by: $rule_id}]->()")


def test_untyped_edge_and_incoming_direction() -> None:
    rules = load_rules([FIXTURES / "schemas" / "RiskMining.schema"])
    rule = compile_rule(rules.get("Person-release->App"), rules)
    assert lines(rule)[0] == ("MATCH (`s`:`Person`)-[:`holdShare`]->(`c`:`Company`), "
                              "(`c`)-[:`hasCert`]->(`cert`:`Cert`)<-[`useCert`]-(`o`:`App`)")


def test_membership_with_like_and_concept_reads() -> None:
    rules = load_rules([FIXTURES / "rules" / "kag" / "riskmining_concept.rule"])
    app, developer, _ = (compile_rule(r, rules) for r in rules.rules)
    assert app.kind == RuleKind.MEMBERSHIP
    assert lines(app)[:2] == ["MATCH (`s`:`App`)", "WHERE (`s`.`riskMark` CONTAINS $p1)"]
    assert "MERGE (`s`)-[__derived:`BELONGS_TO` {derived_by: $rule_id}]->(__concept)" in lines(app)
    assert "SET __concept:`TaxOfRiskApp`" in lines(app)
    assert app.derive.parameters.items() >= {"p1": "赌博", "concept_id": "concept:赌博应用", "concept_name": "赌博应用"}.items()
    assert lines(developer)[1] == "WHERE EXISTS { (`app`)-[:BELONGS_TO]->(:Concept)-[:IS_A*0..]->(:Concept {id: $p1}) }"
    assert developer.derive.parameters["p1"] == "concept:赌博应用"


@pytest.mark.parametrize(("pattern", "operator", "operand"), [
    ("%赌博%", "CONTAINS", "赌博"), ("ab%", "STARTS WITH", "ab"), ("%ab", "ENDS WITH", "ab"), ("ab", "=", "ab"),
    ("a_b%", "=~", "(?s)a.b.*"), ("%50.5%x", "=~", "(?s).*50\\.5.*x"),
])
def test_like_patterns(pattern: str, operator: str, operand: str) -> None:
    assert like_parts(pattern) == (operator, operand)


def test_boolean_operators_in_and_null(tmp_path: Path) -> None:
    rule = one(tmp_path, """Define (s:A)-[p:q]->(o:B) {
        Structure { (s)-[:r]->(o) }
        Constraint { R1: s.k in ['x', 'y'] and not s.z == null or s.n <= 3
                     R2: s.m != null }
    }""")
    assert lines(rule)[1] == ("WHERE (((`s`.`k` IN $p1) AND (NOT (`s`.`z` IS NULL))) OR (`s`.`n` <= $p2)) "
                              "AND (`s`.`m` IS NOT NULL)")
    assert rule.derive.parameters["p1"] == ["x", "y"] and rule.derive.parameters["p2"] == 3


def test_derived_property_with_rule_value() -> None:
    rules = load_rules([FIXTURES / "schemas" / "SupplyChain.schema"])
    rule = compile_rule(rules.get("Company-cashflowDiff1Month->Float"), rules)
    assert rule.kind == RuleKind.PROPERTY
    assert lines(rule)[:6] == [
        "MATCH (`s`:`Company`)",
        "WITH *, CASE WHEN (`s`.`fundTrans1Month` IS NULL) THEN $p1 ELSE `s`.`fundTrans1Month` END AS `fundTrans1Month`",
        "WITH *, CASE WHEN (`s`.`fundTrans1MonthIn` IS NULL) THEN $p2 ELSE `s`.`fundTrans1MonthIn` END AS `fundTrans1MonthIn`",
        "WITH *, (`fundTrans1Month` - `fundTrans1MonthIn`) AS `o`",
        "WITH *, `o` AS __value",
        "WITH `s`, collect(DISTINCT __value) AS __values",
    ]
    assert "SET `s`.`cashflowDiff1Month` = __values[0], `s`.`cashflowDiff1Month_derived_by` = $rule_id," in lines(rule)
    assert rule.retract[0].cypher.splitlines()[:2] == ["MATCH (__n:`Company`)", "WHERE __n.`cashflowDiff1Month_derived_by` = $rule_id"]


def test_dates_use_the_as_of_instant() -> None:
    rules = load_rules([FIXTURES / "schemas" / "SupplyChain.schema"])
    rule = compile_rule(rules.get("Company-fundTrans1Month->Float"), rules)
    assert rule.uses_now
    where = lines(rule)[1]
    assert where.startswith("WHERE (duration.inDays(date(toString(`f`.`transDate`)), date(toString(toString(date(datetime({epochSeconds: toInteger($now)})).year * 10000")
    assert where.endswith(".days < $p1)")
    # the filter comes before the aggregate, which ranges over distinct edges
    assert lines(rule)[2:4] == ["WITH DISTINCT `s`, `f`", "WITH `s`, sum(`f`.`transAmt`) AS `totalOut`"]
    as_of = datetime(2023, 9, 30, tzinfo=timezone.utc)
    params = bind(rule.derive, rule, as_of)
    assert params["now"] == 1696032000 and params["as_of"] == "2023-09-30T00:00:00+00:00"
    other = compile_rule(rules.get("Company-totalTransInAmt->Float"), rules)
    assert bind(other.derive, other, as_of)["as_of"] is None


def test_concat_and_actions_with_schema() -> None:
    rules = load_rules([FIXTURES / "schemas" / "SupplyChain.schema", FIXTURES / "rules" / "kag" / "supplychain_concept.rule"])
    rule = compile_rule(rules.get("TaxOfProdEvent/价格上涨-leadTo->TaxOfCompanyEvent/成本上涨"), rules)
    assert rule.kind == RuleKind.ACTION
    text = lines(rule)
    assert "WITH *, (toString(`c`.`name`) + toString($p2)) AS `eventName`" in text
    assert "WITH DISTINCT `c`, `eventName`, `s`" in text
    merge = next(line for line in text if line.startswith("MERGE (`downEvent`"))
    assert merge.startswith("MERGE (`downEvent`:`Event` {id: reduce(__acc = $p3, __k IN [coalesce(toString(`c`.id), elementId(`c`)), ")
    assert "MERGE (`downEvent`)-[__e1_1:`subject` {derived_by: $rule_id}]->(`c`)" in text  # subject is a relation
    assert "MERGE (`s`)-[__e2:`leadTo` {derived_by: $rule_id}]->(`downEvent`)" in text
    params = rule.derive.parameters
    assert params["p2"] == "成本上升事件" and params["p4"] == "上涨" and params["p5"] == "成本"
    assert [s.cypher.splitlines()[0] for s in rule.retract] == [
        "MATCH (__n:`Event` {derived_by: $rule_id})",
        "MATCH (:Entity|Event|Concept)-[__r:`leadTo` {derived_by: $rule_id}]->()"]


def test_actions_without_schema_keep_values_as_properties() -> None:
    rules = load_rules([FIXTURES / "rules" / "kag" / "supplychain_concept.rule"])
    rule = compile_rule(rules.rules[3], rules)
    assert any("`downEvent`.`subject` = `c`.`id`" in line for line in lines(rule))
    assert any(line.startswith("MERGE (`downEvent`:`Entity` {id:") for line in lines(rule))


def test_explain_prints_params_for_the_browser() -> None:
    rules = load_rules([FIXTURES / "schemas" / "RiskMining.schema"])
    rule = compile_rule(rules.get("Person-developed->App"), rules)
    text = explain(rule, datetime(2024, 1, 1, tzinfo=timezone.utc))
    assert ":param rule_id => 'RiskMining:Person-developed->App';" in text.splitlines()
    assert ":param p1 => 5;" in text.splitlines()
    assert text.count("// retract") == 1 and text.count("// derive") == 1


@pytest.mark.parametrize(("body", "message"), [
    ("Constraint { R1: frobnicate(s.x) }", "found unknown function 'frobnicate'"),
    ("Structure { (s)-[:r]->(o) } Constraint { a = group(s).count(o) b = group(s, o).count(o) }",
     "expected every aggregate of a rule to group by the same variables (s), found group(s, o)"),
    ("Structure { (s)-[:r]->(x:C) } Constraint { n = group(s, o).count(x) R1: x.k > n }",
     "'x' is not known after the aggregate; only n, o, s are (group by it to keep it)"),
    ("Constraint { R1: s.name like s.other }", "expected a constant text after like"),
    ("Constraint { R1: ghost.k == 1 }", "found unknown name 'ghost'"),
    ("Constraint { R1: from_unix_time(now(), 'dd/MM') == 1 }", "expected a date format yyyyMMdd or yyyy-MM-dd, found 'dd/MM'"),
    ("Constraint { a = group(s).sum(s.k) * 2 }", "expected an aggregate only as a whole assignment"),
])
def test_compile_errors_are_located(tmp_path: Path, body: str, message: str) -> None:
    with pytest.raises(RuleCompileError) as caught:
        one(tmp_path, f"Define (s:A)-[p:q]->(o:B) {{ {body} }}")
    assert str(caught.value).startswith(str(tmp_path / "case.rule") + ":1:")
    assert message in str(caught.value)


def test_property_rules_need_o(tmp_path: Path) -> None:
    with pytest.raises(RuleCompileError, match="expected 'o = …' in the Constraint block: it gives the value of total"):
        one(tmp_path, "Define (s:A)-[p:total]->(o:Integer) { Constraint { x = 1 } }")


def test_types_are_checked_against_the_schema(tmp_path: Path) -> None:
    with pytest.raises(RuleCompileError, match=r"case.rule:1:11: expected a type of schema RiskMining .*found unknown type 'Persn'"):
        one(tmp_path, "Define (s:Persn)-[p:q]->(o:App) {}", FIXTURES / "schemas" / "RiskMining.schema")


def test_cycles_are_refused_with_the_cycle_named(tmp_path: Path) -> None:
    path = tmp_path / "cycle.rule"
    path.write_text("""
Define (s:A)-[p:x]->(o:B) { Structure { (s)-[:y]->(o) } }
Define (s:A)-[p:y]->(o:B) { Structure { (s)-[:x]->(o) } }
""", encoding="utf-8")
    with pytest.raises(RuleCycleError) as caught:
        compile_all(load_rules([path]))
    assert caught.value.cycle == ["A-x->B", "A-y->B", "A-x->B"]
    assert "rules depend on each other in a cycle: A-x->B -> A-y->B -> A-x->B (A-x->B reads relation y from A-y->B" in str(caught.value)


def test_a_rule_reading_its_own_result_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "self.rule"
    path.write_text("Define (s:A)-[p:near]->(o:A) { Structure { (s)-[:near]->(m:A)-[:near]->(o) } }", encoding="utf-8")
    with pytest.raises(RuleCycleError, match=r"self.rule:1:1: rule A-near->A reads its own result \(relation near\)"):
        compile_all(load_rules([path]))


def test_dependency_order_follows_reads_not_file_order(tmp_path: Path) -> None:
    path = tmp_path / "order.rule"
    path.write_text("""
Define (s:A)-[p:belongTo]->(o:`K`/`big`) { Constraint { R1: s.size > 10 } }
Define (s:A)-[p:size]->(o:Integer) { Structure { (s)-[:has]->(x:B) } Constraint { n = group(s).count(x) o = n } }
""", encoding="utf-8")
    assert [r.id for r in compile_all(load_rules([path]))] == ["A-size->Integer", "A-belongTo->K/big"]


def test_every_demo_rule_compiles_and_orders() -> None:
    sets = [
        [FIXTURES / "schemas" / "RiskMining.schema", FIXTURES / "rules" / "kag" / "riskmining_concept.rule"],
        [FIXTURES / "schemas" / "SupplyChain.schema", FIXTURES / "rules" / "kag" / "supplychain_concept.rule"],
        [FIXTURES / "rules" / "fraud.rule"],
    ]
    assert [len(compile_all(load_rules(files))) for files in sets] == [5, 18, 4]


HOSTILE_NAMES = [
    "Define (s:`App) DETACH DELETE (s`)-[p:q]->(o:B) {}",
    "Define (s:A)-[p:`q]->() DELETE x //`]->(o:B) {}",
    "Define (s:A)-[p:q]->(o:B) { Constraint { R1: s.`k} RETURN 1 //` == 1 } }",
    "Define (s:A)-[p:q]->(o:B) { Structure { (s)-[:`r|x`]->(o) } }",
    "Define (s:A)-[p:q]->(o:`K) DELETE n //`/`c`) {}",
    "Define (s:A)-[p:total]->(o:Integer) { Constraint { o = 1 } Action { createEdgeInstance(src=s, dst=s, type=`t]->(x`, value={}) } }",
]


@pytest.mark.parametrize("text", HOSTILE_NAMES)
def test_hostile_names_are_refused(tmp_path: Path, text: str) -> None:
    with pytest.raises(RuleCompileError, match="is not allowed: use letters, digits and underscores only"):
        one(tmp_path, text)


def test_hostile_values_only_ever_travel_as_parameters(tmp_path: Path) -> None:
    evil = "x'}) MATCH (n) DETACH DELETE n //"
    rules = compiled(tmp_path, f"""
Define (s:A)-[p:belongTo]->(o:`K`/`{evil}`) {{ Constraint {{ R1: s.name like "%{evil}%" }} }}
Define (s:A)-[p:q]->(o:B) {{ Structure {{ (s)-[:r]->(o) }} Constraint {{ R1: s.k == "{evil}" or s.k in ["{evil}"] }} }}
Define (s:A)-[p:total]->(o:Text) {{ Constraint {{ o = concat(s.name, "{evil}") }} }}
Define (s:A)-[p:e]->(o:B) {{ Structure {{ (s)-[:r]->(o) }} Action {{
    n = createNodeInstance(type=C, value={{ name="{evil}" }})
    createEdgeInstance(src=s, dst=n, type=t, value={{ note="{evil}" }}) }} }}
""")
    assert len(rules) == 4
    for rule in rules:
        for statement in rule.statements:
            assert "DETACH DELETE n" not in statement.cypher and "x'" not in statement.cypher
        values = [v for v in rule.derive.parameters.values() if isinstance(v, str)]
        assert any(evil in v for v in values) or any(evil in str(v) for v in rule.derive.parameters.values())

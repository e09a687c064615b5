"""The solver over derived facts: logical-form Retrieval over a concept classification, a derived
relation and a derived property answers from what the rules derived, and the step's trace says
which rule produced each fact (``derived_by``, ``rule_version``).

A small riskmining-like graph goes through the real pipeline; KAG's riskmining rules (and one
property rule of this test's own) are applied with ``apply_and_register``. The planner is
scripted, but what the answer asserts — the class names, the developer, the device count, the
rule ids and versions — only the rules can have written: the loaded documents state none of it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kag_neo4j.api import KAG
from kag_neo4j.builder.pipeline import LoadOptions, load
from kag_neo4j.config import Settings
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.models.scripted import ScriptedLLM
from kag_neo4j.rules.load import load_rules
from kag_neo4j.rules.registry import apply_and_register
from kag_neo4j.schema.validate import load_schema
from kag_neo4j.solver.graph_schema import read_graph_schema
from kag_neo4j.store.database import Database
from tests.integration.conftest import TEST_DIMENSION
from tests.integration.rules_support import line_document, line_extractor

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SCHEMA = FIXTURES / "schemas" / "RiskMining.schema"
FILES = [SCHEMA, FIXTURES / "rules" / "kag" / "riskmining_concept.rule", FIXTURES / "rules" / "device_count.rule"]

DEVICES = [f"dev{i}" for i in range(1, 8)]
DOCS = {
    "apps": ["appA|App riskMark=赌博", "appB|App riskMark=正常"],
    "devices": [f"tom|Person hasDevice {d}|Device" for d in DEVICES] + [f"{d}|Device install appA|App" for d in DEVICES],
    "owners": ["ann|Person holdShare acme|Company", "acme|Company hasCert cert9|Cert", "appA|App useCert cert9|Cert",
               "ann|Person fundTrans tom|Person"],
}


@pytest.fixture
def risk_graph(db: Database, test_settings: Settings) -> Database:
    load([], db, test_settings, LoadOptions(max_chars=2000, overlap=0, spg_schema=load_schema(str(SCHEMA))),
         documents=[line_document(k, v) for k, v in DOCS.items()], extractor=line_extractor,
         embedder=HashingEmbedder(TEST_DIMENSION))
    apply_and_register(db, load_rules(FILES), as_of="2024-06-30")
    return db


def _plan(text: str) -> ScriptedLLM:
    return ScriptedLLM([{"logical_form": text}])


def _versions(db: Database) -> dict[str, str]:
    row = db.read("MATCH (s:KagRuleSet) RETURN s.rule_ids AS ids, s.rule_versions AS versions")[0]
    return dict(zip(row["ids"], row["versions"]))


def test_the_planner_is_offered_derived_relations_memberships_and_properties(risk_graph: Database) -> None:
    schema = read_graph_schema(risk_graph)
    assert {"developed", "release", "belongTo"} <= set(schema.relations)
    assert schema.relations["belongTo"].domain in {"Person", "App"}
    assert "deviceNum" in schema.properties
    summary = schema.summary(max_items=64)
    assert "belongTo" in summary and "deviceNum" in summary


def test_a_concept_classification_answers_from_the_rule_and_names_it(risk_graph: Database) -> None:
    llm = _plan("""\
Step1: Which risk classes does tom belong to?
Action1: Retrieval(s=s1:Person[`tom`], p=p1:belongTo, o=o1:TaxOfRiskUser)
Action2: Output(o1)""")
    answer = KAG(risk_graph, llm, HashingEmbedder(TEST_DIMENSION)).ask("tom是否有风险？")
    assert answer.known and answer.answer == "赌博App开发者"
    (step,) = [s for s in answer.steps if s.op == "Retrieval"]
    assert step.source == "graph"
    versions = _versions(risk_graph)
    rule = "RiskMining:Person-belongTo->TaxOfRiskUser/赌博App开发者"
    assert [(f.predicate, f.object, f.derived_by, f.rule_version) for f in step.facts] == [
        ("belongTo", "赌博App开发者", rule, versions[rule])]
    # the stored trace says so too
    stored = risk_graph.read("MATCH (:KagRun {id: $id})-[:HAS_STEP]->(s:KagStep) RETURN s.facts AS facts", id=answer.run_id)
    assert [f["derived_by"] for row in stored for f in json.loads(row["facts"])] == [rule]


def test_kag_style_concept_object_and_a_derived_relation_then_property(risk_graph: Database) -> None:
    llm = _plan("""\
Step1: Which app did tom develop?
Action1: Retrieval(s=s1:Person[`tom`], p=p1:developed, o=o1:App)
Step2: How many devices of tom installed it?
Action2: Retrieval(s=s1, p=p2:deviceNum, o=o2:Integer)
Action3: Output(o1, o2)""")
    answer = KAG(risk_graph, llm, HashingEmbedder(TEST_DIMENSION)).ask("tom开发了哪个App，用了几台设备？")
    assert answer.known
    facts = [f for step in answer.steps for f in step.facts]
    assert [(f.predicate, f.object, f.derived_by) for f in facts] == [
        ("developed", "appA", "RiskMining:Person-developed->App"), ("deviceNum", "7", "RiskMining:Person-deviceNum->Integer")]
    assert all(f.rule_version == _versions(risk_graph)[f.derived_by] for f in facts)


def test_kag_style_bare_predicate_and_concept_type(risk_graph: Database) -> None:
    llm = _plan("""\
Step1: Is ann a gambling-app boss?
Action1: get_spo(s=s1:Person[`ann`], p=belongTo, o=TaxOfRiskUser)
Action2: Output(TaxOfRiskUser)""")
    answer = KAG(risk_graph, llm, HashingEmbedder(TEST_DIMENSION)).ask("ann是赌博App老板吗？")
    assert answer.known and answer.answer == "是"  # the class the question names is the one the rule gave
    (step,) = [s for s in answer.steps if s.op == "Retrieval"]
    assert [f.derived_by for f in step.facts] == ["RiskMining:Person-belongTo->TaxOfRiskUser/赌博App老板"]


SUPPLY_FILES = [FIXTURES / "schemas" / "SupplyChain.schema", FIXTURES / "rules" / "kag" / "supplychain_concept.rule"]
PRODUCTS = {"prod:br": "顺丁橡胶", "prod:tyre": "轮胎", "prod:toy": "玩具", "prod:belt": "传送带"}
MAKERS = {"co:a": ("甲轮胎厂", "prod:tyre"), "co:b": ("乙玩具厂", "prod:toy"), "co:c": ("丙橡胶厂", "prod:br"),
          "co:d": ("丁机械厂", "prod:belt")}
CHAIN = [("prod:br", "prod:tyre"), ("prod:br", "prod:belt")]


def test_an_event_chain_the_rules_created_answers_which_companies_a_price_rise_affects(db: Database) -> None:
    db.write("UNWIND keys($p) AS id CREATE (:Entity:Product {id: id, name: $p[id]})", p=PRODUCTS)
    db.write("UNWIND keys($m) AS id MATCH (p:Product {id: $m[id][1]}) CREATE (:Entity:Company {id: id, name: $m[id][0]})"
             "-[:product]->(p)", m={k: list(v) for k, v in MAKERS.items()})
    db.write("UNWIND $chain AS c MATCH (a:Product {id: c[0]}), (b:Product {id: c[1]}) CREATE (a)-[:hasSupplyChain]->(b)",
             chain=[list(c) for c in CHAIN])
    db.write("MATCH (p:Product {id: 'prod:br'}) CREATE (:Event:ProductChainEvent {id: 'ev:1', name: '顺丁橡胶价格上涨', "
             "index: '价格', trend: '上涨'})-[:subject]->(p)")
    apply_and_register(db, load_rules(SUPPLY_FILES), as_of="2023-09-30")
    llm = _plan("""\
Step1: Which product chain event concerns 顺丁橡胶?
Action1: Retrieval(s=e1:ProductChainEvent, p=p1:subject, o=o1:Product[`顺丁橡胶`])
Step2: Which company events does it lead to?
Action2: Retrieval(s=e1, p=p2:leadTo, o=e2:CompanyEvent)
Step3: Which companies are those events about?
Action3: Retrieval(s=e2, p=p3:subject, o=c1:Company)
Action4: Output(c1)""")
    answer = KAG(db, llm, HashingEmbedder(TEST_DIMENSION)).ask("顺丁橡胶成本上涨对那些公司产生了影响")
    # the makers of the products downstream of 顺丁橡胶, computed from the input
    affected = {name for name, product in MAKERS.values() if ("prod:br", product) in CHAIN}
    assert answer.known and set(answer.answer.replace("、", ",").replace("，", ",").split(",")) == affected
    leads, subjects = [s.facts for s in answer.steps if s.op == "Retrieval"][1:]
    rule = "SupplyChain:TaxOfProdEvent/价格上涨-leadTo->TaxOfCompanyEvent/成本上涨"
    assert {f.derived_by for f in leads + subjects} == {rule}
    assert {f.object for f in subjects} == affected
    assert {f.subject for f in leads} == {"顺丁橡胶价格上涨"}

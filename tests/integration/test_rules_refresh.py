"""Derived facts follow their inputs: rules registered with ``apply_and_register`` (what
``kag-neo4j rules apply`` runs) are re-applied by ``kag-neo4j load`` and ``delete`` — only the
rules the change touched and their dependents; never stale, never duplicated; a change whose
refresh never ran is caught up by the next load.

The documents go through the real pipeline (split, align to the RiskMining schema, resolve,
write, replace, delete); the extractor reads one fact per line (``S|Type pred O|Type`` or
``E|Type key=value``), so the test states the input exactly. The expected derived facts are
computed in Python from the documents' lines, not from what the rules wrote.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kag_neo4j.builder.delete import delete_document
from kag_neo4j.builder.pipeline import LoadOptions, LoadSummary, load
from kag_neo4j.config import Settings
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.rules.apply import apply_rules
from kag_neo4j.rules.load import load_rules
from kag_neo4j.rules.registry import apply_and_register
from kag_neo4j.schema.validate import load_schema
from kag_neo4j.store.database import Database
from tests.integration.conftest import TEST_DIMENSION
from tests.integration.rules_support import line_document, line_extractor

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SCHEMA = FIXTURES / "schemas" / "RiskMining.schema"
FILES = [SCHEMA, FIXTURES / "rules" / "kag" / "riskmining_concept.rule"]
AS_OF = "2024-06-30"

GAMBLING_APP = "RiskMining:App-belongTo->TaxOfRiskApp/赌博应用"
DEVELOPER = "RiskMining:Person-belongTo->TaxOfRiskUser/赌博App开发者"
BOSS = "RiskMining:Person-belongTo->TaxOfRiskUser/赌博App老板"
DEVELOPED = "RiskMining:Person-developed->App"
RELEASE = "RiskMining:Person-release->App"


DEVICES = [f"dev{i}" for i in range(1, 8)]
DOCS: dict[str, list[str]] = {
    "apps": ["appA|App riskMark=正常", "appB|App riskMark=赌博推广"],
    "devices": [f"tom|Person hasDevice {d}|Device" for d in DEVICES] + [f"{d}|Device install appA|App" for d in DEVICES],
    "owners": ["ann|Person holdShare acme|Company", "acme|Company hasCert cert9|Cert", "appA|App useCert cert9|Cert",
               "ann|Person fundTrans tom|Person"],
    "other": ["bob|Person hasDevice dev99|Device", "dev99|Device install appB|App"],
}


def expected(docs: dict[str, list[str]]) -> set[tuple[str, str, str]]:
    """The riskmining rules' meaning over the documents' lines, in Python."""
    facts = [line.split() for lines in docs.values() for line in lines]
    props = {f[0].split("|")[0]: f[1].split("=", 1)[1] for f in facts if "=" in f[1]}
    edges = {(f[0].split("|")[0], f[1], f[2].split("|")[0]) for f in facts if "=" not in f[1]}

    def out(s: str, p: str) -> set[str]:
        return {o for s2, p2, o in edges if s2 == s and p2 == p}

    people = {s for s, p, _ in edges if p in ("hasDevice", "holdShare", "fundTrans")}
    apps = {n for n in props if "riskMark"} | {o for _, p, o in edges if p == "install"}
    developed = {(s, a) for s in people for a in apps
                 if len({d for d in out(s, "hasDevice") if a in out(d, "install")}) > 5}
    release = {(s, a) for s in people for c in out(s, "holdShare") for k in out(c, "hasCert")
               for a in apps if k in out(a, "useCert")}
    gambling = {a for a in apps if "赌博" in props.get(a, "")}
    result = {("developed", s, a) for s, a in developed} | {("release", s, a) for s, a in release}
    result |= {("赌博应用", a, "") for a in gambling}
    result |= {("赌博App开发者", s, "") for s, a in developed if a in gambling}
    result |= {("赌博App老板", s, "") for s, a in release if a in gambling
               for u, a2 in developed if a2 == a and u in out(s, "fundTrans")}
    return result


def derived(db: Database) -> set[tuple[str, str, str]]:
    rows = db.read("MATCH (s)-[r]->(o) WHERE r.derived_by IS NOT NULL "
                   "RETURN CASE type(r) WHEN 'BELONGS_TO' THEN o.name ELSE type(r) END AS kind, s.name AS s, "
                   "CASE type(r) WHEN 'BELONGS_TO' THEN '' ELSE o.name END AS o")
    return {(r["kind"], r["s"], r["o"]) for r in rows}


def duplicates(db: Database) -> list[dict[str, Any]]:
    return db.read("MATCH (s)-[r]->(o) WHERE r.derived_by IS NOT NULL WITH s, type(r) AS t, o, r.derived_by AS by, "
                   "count(*) AS n WHERE n > 1 RETURN s.name AS s, t, o.name AS o, n")


def _load(db: Database, settings: Settings, docs: dict[str, list[str]]) -> LoadSummary:
    return load([], db, settings, LoadOptions(max_chars=2000, overlap=0, spg_schema=load_schema(str(SCHEMA))),
                documents=[line_document(doc_id, lines) for doc_id, lines in docs.items()], extractor=line_extractor,
                embedder=HashingEmbedder(TEST_DIMENSION), )


def _reapplied(summary_rules: Any) -> set[str]:
    return {rule.id for rule in summary_rules.rules}


def test_load_and_delete_keep_derived_facts_current(db: Database, test_settings: Settings) -> None:
    docs = {k: DOCS[k] for k in ("apps", "devices", "owners")}
    first = _load(db, test_settings, docs)
    assert first.rules is None  # nothing registered yet: a load re-applies nothing
    apply_and_register(db, load_rules(FILES), as_of=AS_OF)
    assert derived(db) == expected(docs)
    assert ("developed", "tom", "appA") in derived(db) and ("赌博应用", "appA", "") not in derived(db)

    # a changed document reclassifies appA: its developer and its owner follow
    docs["apps"] = ["appA|App riskMark=赌博", "appB|App riskMark=赌博推广"]
    summary = _load(db, test_settings, docs)
    assert summary.documents_replaced == 1 and summary.rules is not None and summary.rules.error is None
    now = derived(db)
    assert now == expected(docs)
    assert {("赌博应用", "appA", ""), ("赌博App开发者", "tom", ""), ("赌博App老板", "ann", "")} <= now
    # only the rules reading what the change touched (riskMark) and their dependents ran, and
    # `release`, whose `<-[useCert]-` is an untyped edge (a variable, no type): it reads every type
    assert _reapplied(summary.rules) == {GAMBLING_APP, DEVELOPER, BOSS, RELEASE}
    assert summary.rules.full == [] and summary.rules.skipped == 1
    assert duplicates(db) == []

    # the same load again changes nothing and re-applies nothing
    again = _load(db, test_settings, docs)
    assert again.documents_skipped == 3 and again.rules is not None and again.rules.rules == []
    assert derived(db) == now

    # deleting the devices document takes tom's `developed` and both classifications that needed it
    report = delete_document(db, "devices")
    del docs["devices"]
    assert report.rules is not None and report.rules.error is None
    assert derived(db) == expected(docs)
    assert ("developed", "tom", "appA") not in derived(db) and ("赌博应用", "appA", "") in derived(db)
    assert ("赌博App老板", "ann", "") not in derived(db)
    assert duplicates(db) == []

    # what the refresh left equals a full re-apply of the same rules
    before = derived(db)
    apply_rules(db, load_rules(FILES), as_of=AS_OF)
    assert derived(db) == before


def test_a_change_whose_refresh_never_ran_is_caught_up_by_the_next_load(db: Database, test_settings: Settings) -> None:
    docs = {k: DOCS[k] for k in ("apps", "devices", "owners")}
    docs["apps"] = ["appA|App riskMark=赌博"]
    _load(db, test_settings, docs)
    apply_and_register(db, load_rules(FILES), as_of=AS_OF)
    assert ("赌博App开发者", "tom", "") in derived(db)
    # a delete that committed but whose refresh never ran (a crash between the two)
    delete_document(db, "devices", refresh_rules=False)
    assert ("赌博App开发者", "tom", "") in derived(db)  # stale until the next load or delete
    del docs["devices"]
    # the next load touches none of these rules' inputs, yet re-applies them all
    summary = _load(db, test_settings, {"unrelated": ["zed|Company hasPhone=123"]})
    assert summary.rules is not None and summary.rules.full == ["RiskMining"]
    assert derived(db) == expected(docs)
    assert ("赌博App开发者", "tom", "") not in derived(db)


def test_a_failing_refresh_keeps_the_previous_facts_and_the_load(db: Database, test_settings: Settings) -> None:
    docs = {k: DOCS[k] for k in ("apps", "devices", "owners")}
    _load(db, test_settings, docs)
    rules_file = FIXTURES / "rules" / "refresh_divide.rule"
    apply_and_register(db, load_rules([*FILES, rules_file]), as_of=AS_OF)
    facts = derived(db)
    # a phone number the rule cannot divide: the refresh fails in Neo4j and rolls back
    summary = _load(db, test_settings, {"people": ["tom|Person hasPhone=abc"]})
    assert summary.documents_loaded == 1 and summary.rules is not None and summary.rules.error
    assert derived(db) == facts
    stored = db.read("MATCH (s:KagRuleSet) RETURN s.graph_version AS v")[0]["v"]
    assert stored < db.read("MATCH (m:KagMeta {key: 'graph'}) RETURN m.version AS v")[0]["v"]


def test_registering_a_smaller_rule_set_retracts_the_facts_of_the_rules_it_dropped(db: Database,
                                                                                    test_settings: Settings) -> None:
    docs = {k: DOCS[k] for k in ("apps", "devices", "owners")}
    docs["apps"] = ["appA|App riskMark=赌博"]
    _load(db, test_settings, docs)
    apply_and_register(db, load_rules(FILES), as_of=AS_OF)
    assert ("赌博App开发者", "tom", "") in derived(db)
    apply_and_register(db, load_rules([SCHEMA]), as_of=AS_OF)  # the concept.rule file is no longer registered
    assert derived(db) == {fact for fact in expected(docs) if fact[0] in ("developed", "release")}
    assert db.read("MATCH (s:KagRuleSet) RETURN s.rule_ids AS ids")[0]["ids"] == [DEVELOPED, RELEASE]


def test_the_cli_load_and_delete_of_a_csv_keep_a_classification_current(db: Database, test_settings: Settings,
                                                                        tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from kag_neo4j.cli import app
    from tests.integration.test_solver_cli import _env

    env = {**_env(test_settings), "KAG_EMBEDDER": "hashing", "KAG_EMBEDDING_DIMENSIONS": str(TEST_DIMENSION),
           "KAG_HOME": str(tmp_path / "home")}
    csv_file = tmp_path / "App.csv"
    runner = CliRunner()

    def cli(*args: str) -> Any:
        result = runner.invoke(app, list(args), env=env)
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    def gambling() -> set[str]:
        rows = db.read("MATCH (a:App)-[r:BELONGS_TO]->(:Concept {name: '赌博应用'}) WHERE r.derived_by IS NOT NULL "
                       "RETURN a.name AS name")
        return {row["name"] for row in rows}

    csv_file.write_text("id,name,riskMark\nA1,appA,正常\nA2,appB,赌博\n", encoding="utf-8")
    loaded = cli("load", str(csv_file), "--schema", str(SCHEMA), "--mode", "light", "--no-progress", "--json")
    cli("rules", "apply", *map(str, FILES), "--as-of", AS_OF, "--json")
    assert gambling() == {"appB"}
    csv_file.write_text("id,name,riskMark\nA1,appA,赌博推广\nA2,appB,正常\n", encoding="utf-8")
    summary = cli("load", str(csv_file), "--schema", str(SCHEMA), "--mode", "light", "--no-progress", "--json")
    assert summary["documents_replaced"] == 1 and GAMBLING_APP in {r["id"] for r in summary["rules"]["rules"]}
    assert gambling() == {"appA"}
    doc_id = db.read("MATCH (d:Document) RETURN d.id AS id")[0]["id"]
    assert loaded["documents_loaded"] == 1
    (report,) = cli("delete", doc_id, "--json")
    assert report["rules"]["error"] is None
    assert gambling() == set()


def test_a_set_applied_with_a_separate_schema_is_re_applied_with_it(db: Database, test_settings: Settings) -> None:
    docs = {"apps": ["appA|App riskMark=正常"]}
    _load(db, test_settings, docs)
    concepts = FILES[1]  # concept.rule alone; its types from the schema given beside it (`--schema`)
    apply_and_register(db, load_rules([concepts], schema=load_schema(str(SCHEMA))), as_of=AS_OF)
    assert db.read("MATCH (s:KagRuleSet) RETURN s.resolved_schema IS NOT NULL AS kept")[0]["kept"]
    docs["apps"] = ["appA|App riskMark=赌博"]
    summary = _load(db, test_settings, docs)
    assert summary.rules is not None and summary.rules.error is None
    assert ("赌博应用", "appA", "") in derived(db)

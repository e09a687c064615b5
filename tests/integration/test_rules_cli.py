"""`kag-neo4j rules apply` against a real Neo4j: the riskmining rules, and a concept.rule file
whose types come from the namespace's schema stored in the database."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kag_neo4j.cli import app
from kag_neo4j.config import Settings
from kag_neo4j.schema import apply_schema, load_schema
from kag_neo4j.store.database import Database
from tests.integration.test_solver_cli import _env
from tests.integration.test_rules_riskmining import FILES, build, derived, expected, APPS
from tests.integration.test_rules_supplychain import CONCEPTS, SCHEMA, build as build_supply

pytestmark = pytest.mark.integration


def test_rules_apply_twice(db: Database, test_settings: Settings) -> None:
    build(db)
    args = ["rules", "apply", *map(str, FILES), "--as-of", "2024-02-01", "--json"]
    first = CliRunner().invoke(app, args, env=_env(test_settings))
    assert first.exit_code == 0, first.output
    report = json.loads(first.stdout)
    assert report["as_of"] == "2024-02-01T00:00:00+00:00"
    assert {r["id"]: r["derived"] for r in report["rules"]}["RiskMining:Person-developed->App"] == 3
    assert derived(db) == expected(APPS)
    second = json.loads(CliRunner().invoke(app, args, env=_env(test_settings)).stdout)
    assert [(r["derived"], r["retracted"]) for r in second["rules"]] == [(r["derived"], r["derived"]) for r in report["rules"]]
    assert derived(db) == expected(APPS)
    # registered for loads and deletes to re-apply: the files' texts, each rule's id and version, the as-of
    stored = db.read("MATCH (s:KagRuleSet) RETURN s.namespace AS ns, s.texts AS texts, s.rule_ids AS ids, "
                     "s.rule_versions AS versions, s.as_of AS as_of, s.graph_version AS version")
    assert [(r["ns"], r["as_of"]) for r in stored] == [("RiskMining", "2024-02-01T00:00:00+00:00")]
    assert stored[0]["texts"] == [path.read_text(encoding="utf-8-sig") for path in FILES]
    assert list(zip(stored[0]["ids"], stored[0]["versions"])) == [(r["id"], r["version"]) for r in report["rules"]]
    # each apply is a graph change (a GDS projection of the previous version is not reused)
    assert stored[0]["version"] == db.read("MATCH (m:KagMeta {key: 'graph'}) RETURN m.version AS v")[0]["v"] == 2


def test_a_concept_rule_file_uses_the_stored_schema(db: Database, test_settings: Settings, tmp_path: Path) -> None:
    apply_schema(db, load_schema(str(SCHEMA)), dimensions=384)
    build_supply(db)
    result = CliRunner().invoke(app, ["rules", "apply", str(CONCEPTS), "--json"], env=_env(test_settings))
    assert result.exit_code == 0, result.output
    # with the schema, CompanyEvent is an event type and `subject` a relation to the company
    rows = db.read("MATCH (e:Event:CompanyEvent)-[:subject]->(c:Company) RETURN e.name AS n, c.id AS c ORDER BY n")
    assert rows == [{"n": "C2 Ltd利润下跌事件", "c": "C2"}, {"n": "C2 Ltd成本上升事件", "c": "C2"}]

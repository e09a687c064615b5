"""`kag-neo4j rules show` and `explain` (no database)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kag_neo4j.cli import app

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
RISK = [str(FIXTURES / "schemas" / "RiskMining.schema"), str(FIXTURES / "rules" / "kag" / "riskmining_concept.rule")]


def test_show_lists_rules_in_dependency_order() -> None:
    result = CliRunner().invoke(app, ["rules", "show", *RISK, "--json"])
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    assert shown["namespace"] == "RiskMining"
    ids = [rule["id"] for rule in shown["rules"]]
    assert ids.index("RiskMining:Person-developed->App") < ids.index("RiskMining:Person-belongTo->TaxOfRiskUser/赌博App开发者")
    boss = shown["rules"][-1]
    assert boss["id"] == "RiskMining:Person-belongTo->TaxOfRiskUser/赌博App老板"
    assert boss["depends_on"]["RiskMining:Person-release->App"] == "relation release"


def test_explain_prints_browser_params_and_cypher() -> None:
    result = CliRunner().invoke(app, ["rules", "explain", str(FIXTURES / "schemas" / "SupplyChain.schema"),
                                      "Company-fundTrans1Month->Float", "--as-of", "2023-09-30"])
    assert result.exit_code == 0, result.output
    out = result.stdout.splitlines()
    assert ":param now => 1696032000;" in out and ":param as_of => '2023-09-30T00:00:00+00:00';" in out
    assert ":param p1 => 30;" in out
    assert "MATCH (`s`:`Company`)-[`f`:`fundTrans`]->(`c`:`Company`)" in out


def test_explain_prints_the_cypher_of_the_knowledge_base_it_runs_in() -> None:
    schema = str(FIXTURES / "schemas" / "SupplyChain.schema")
    result = CliRunner().invoke(app, ["--kb", "supply", "rules", "explain", schema, "Company-fundTrans1Month->Float",
                                      "--as-of", "2023-09-30"])
    assert result.exit_code == 0, result.output
    assert "MATCH (`s`:`supply__Company`)-[`f`:`fundTrans`]->(`c`:`supply__Company`)" in result.stdout.splitlines()


def test_explain_names_the_rules_when_one_is_unknown() -> None:
    result = CliRunner().invoke(app, ["rules", "explain", RISK[0], "Person-owns->App"])
    assert result.exit_code == 1
    assert "no rule 'Person-owns->App'" in result.stderr and "2. RiskMining:Person-release->App" in result.stderr


def test_a_syntax_error_is_reported_with_its_location(tmp_path: Path) -> None:
    bad = tmp_path / "bad.rule"
    bad.write_text("Define (s:A)-[p:q]->(o:B) {\n  Constraint { R1: s.x > }\n}\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["rules", "show", str(bad)])
    assert result.exit_code == 1
    assert f"{bad}:2:26: expected a value, a name or '(', found '}}'" in " ".join(result.stderr.split())


def test_error_messages_keep_their_brackets(tmp_path: Path) -> None:
    bad = tmp_path / "bracket.rule"
    bad.write_text("Define (s:A)-[p]->(o:B) {}\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["rules", "show", str(bad)])
    assert result.exit_code == 1
    assert "as in -[p:relation]->, found ']'" in " ".join(result.stderr.split())

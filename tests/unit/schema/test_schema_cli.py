"""The `schema` sub-app without a database: validate, dry runs, dimension choice, and the formatter."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from kag_neo4j.cli.schema import app, embedding_dimensions, resolve_schema_path
from kag_neo4j.config import Settings
from kag_neo4j.errors import ConfigError
from kag_neo4j.schema import load_schema, render_text

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "schemas"
EXAMPLE = Path(__file__).resolve().parents[3] / "schema" / "CompanyFinance.schema"
WIDE = {"COLUMNS": "220", "NO_COLOR": "1"}


def test_render_text_lists_types_and_relations() -> None:
    text = render_text(load_schema(FIXTURES / "SupplyChain.schema"), width=220)
    for name in ("Industry", "Company", "ProductChainEvent", "TaxOfProdEvent"):
        assert name in text
    assert "SupplyChain: 11 types" in text and "SupplyChain: 20 relations" in text
    assert "fundTrans" in text and "transAmt: Integer" in text and "CAU#" in text
    finance = render_text(load_schema(EXAMPLE), width=220)
    assert "desc: Text [index: TextAndVector] (from Organization)" in finance
    assert ":Company:Organization" in finance
    assert "subject -> Company (from CorporateEvent)" in finance


def test_validate_command() -> None:
    result = CliRunner().invoke(app, ["validate", str(FIXTURES / "SupplyChain.schema")], env=WIDE)
    assert result.exit_code == 0, result.output
    assert "valid (11 types, 20 relations)" in result.output
    assert "ProductChainEvent" in result.output


def test_validate_command_reports_location(tmp_path: Path) -> None:
    broken = tmp_path / "broken.schema"
    broken.write_text("namespace D\n\nA: EntityType\n  properties:\n    p: Strng\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["validate", str(broken)], env=WIDE)
    assert result.exit_code == 1
    assert f"{broken}:5:8: expected Text, Integer, Float" in result.stderr.replace("\n", "")


def test_validate_template_with_namespace_and_warnings() -> None:
    path = str(FIXTURES / "default_template.schema")
    assert CliRunner().invoke(app, ["validate", path], env=WIDE).exit_code == 1
    result = CliRunner().invoke(app, ["validate", path, "--namespace", "Demo"], env=WIDE)
    assert result.exit_code == 0
    assert "stored under the label 'SpgConcept'" in result.stderr.replace("\n", "")


def test_shipped_example_by_name() -> None:
    assert resolve_schema_path(Path("CompanyFinance")).resolve() == EXAMPLE
    assert resolve_schema_path(Path("CompanyFinance.schema")).resolve() == EXAMPLE
    assert resolve_schema_path(Path("nope")) == Path("nope")
    result = CliRunner().invoke(app, ["validate", "CompanyFinance"], env=WIDE)
    assert result.exit_code == 0 and "valid (10 types, 16 relations)" in result.output


def test_dry_run_without_a_database() -> None:
    env = dict(WIDE, NEO4J_URI="bolt://127.0.0.1:9", KAG_EMBEDDER="hashing", KAG_EMBEDDING_DIMENSIONS="16")
    result = CliRunner().invoke(app, ["apply", "--dry-run", str(EXAMPLE)], env=env)
    assert result.exit_code == 0, result.output
    assert "planning against an empty database" in result.stderr.replace("\n", " ")
    assert "would write the meta-graph" in result.output
    assert "create  vector     spg_Company_desc_vector on (:Company {desc_embedding}) (dimension 16)" in result.output


def test_apply_without_a_database_fails_cleanly() -> None:
    env = dict(WIDE, NEO4J_URI="bolt://127.0.0.1:9")
    result = CliRunner().invoke(app, ["apply", str(FIXTURES / "SupplyChain.schema")], env=env)
    assert result.exit_code == 1
    assert "cannot reach Neo4j" in result.stderr.replace("\n", " ")


def test_embedding_dimensions_follow_the_configured_embedder() -> None:
    settings = Settings(embedder="hashing", embedding_dimensions=24)
    assert embedding_dimensions(settings, None) == 24
    assert embedding_dimensions(settings, 24) == 24
    with pytest.raises(ConfigError, match="does not match the configured embedder"):
        embedding_dimensions(settings, 16)


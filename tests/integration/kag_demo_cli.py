"""Loading a KAG demo excerpt and applying its rules through the CLI, as the acceptance tests do:
``kag-neo4j load DIR --schema S --mode light`` then ``kag-neo4j rules apply S RULE --as-of D``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kag_neo4j.cli import app
from kag_neo4j.store.database import Database
from tests.integration.cli_env import set_connection_env
from tests.integration.conftest import TEST_DIMENSION


def load_and_apply(db: Database, monkeypatch: pytest.MonkeyPatch, home: Path, folder: Path, schema: Path,
                   rule: Path, as_of: str) -> tuple[CliRunner, dict[str, Any]]:
    """The runner (set up for ``db``, a hashing embedder, ``home`` as KAG_HOME) and the
    ``rules apply --json`` report."""
    set_connection_env(monkeypatch, db.connection)
    monkeypatch.setenv("KAG_EMBEDDER", "hashing")
    monkeypatch.setenv("KAG_EMBEDDING_DIMENSIONS", str(TEST_DIMENSION))
    monkeypatch.setenv("KAG_HOME", str(home))
    runner = CliRunner()
    loaded = runner.invoke(app, ["load", str(folder), "--schema", str(schema), "--mode", "light",
                                 "--similarity", "0", "--json"])
    assert loaded.exit_code == 0, loaded.output
    applied = runner.invoke(app, ["rules", "apply", str(schema), str(rule), "--as-of", as_of, "--json"])
    assert applied.exit_code == 0, applied.output
    return runner, json.loads(applied.stdout)

"""The one way integration tests hand the test database to a CLI run (CliRunner or subprocess)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import typer

from kag_neo4j.store.database import Connection


def connection_env(connection: Connection) -> dict[str, str | None]:
    """``NEO4J_*`` for ``connection``, its credentials included; a None value unsets the variable
    (CliRunner), so the user's own NEO4J_USERNAME / NEO4J_PASSWORD never leak into a run."""
    username, password = connection.auth if connection.auth else (None, None)
    return {
        "NEO4J_URI": connection.uri,
        "NEO4J_DATABASE": connection.database,
        "NEO4J_USERNAME": username,
        "NEO4J_PASSWORD": password,
    }


def subprocess_env(connection: Connection) -> dict[str, str]:
    """This process's environment with :func:`connection_env` applied, for ``subprocess`` children."""
    env = dict(os.environ)
    for key, value in connection_env(connection).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def set_connection_env(monkeypatch: pytest.MonkeyPatch, connection: Connection) -> None:
    """Point in-process CLI runs at ``connection`` through the environment (undone after the test)."""
    for key, value in connection_env(connection).items():
        if value is None:
            monkeypatch.delenv(key, raising=False)
        else:
            monkeypatch.setenv(key, value)


def load_app(monkeypatch: pytest.MonkeyPatch, connection: Connection, home: Path, dimension: int) -> typer.Typer:
    """An app with ``load`` and ``delete`` whose runs use ``connection``, the hashing embedder of
    ``dimension`` and ``home`` (all undone after the test)."""
    from kag_neo4j.cli.load import register

    app = typer.Typer()
    register(app)
    set_connection_env(monkeypatch, connection)
    monkeypatch.setenv("KAG_EMBEDDER", "hashing")
    monkeypatch.setenv("KAG_EMBEDDING_DIMENSIONS", str(dimension))
    monkeypatch.setenv("KAG_HOME", str(home))
    return app

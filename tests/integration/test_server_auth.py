"""The local server is locked down: a generated password, owner-only files, only the procedures kag-neo4j calls.

Each test starts its own fresh instance (``pytest-auth-<pid>-…``, removed afterwards) beside the
test session's server, sharing the provisioned runtime jars in KAG_HOME.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import neo4j
import pytest
from neo4j.exceptions import AuthError, ClientError

from kag_neo4j.config import Settings, load_settings
from kag_neo4j.errors import ServerError
from kag_neo4j.store import credentials as credentials_module
from kag_neo4j.store import server
from kag_neo4j.store.allowlist import PLUGIN_CALLS
from kag_neo4j.store.credentials import credentials_file

pytestmark = pytest.mark.skipif(shutil.which("mvn") is None or shutil.which("java") is None,
                                reason="the local launcher needs Java and Maven")

_PLUGIN_NAMES = tuple(
    f"SHOW {kind} YIELD name WHERE name STARTS WITH 'gds.' OR name STARTS WITH 'apoc.' RETURN name"
    for kind in ("PROCEDURES", "FUNCTIONS")
)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def fresh(request: pytest.FixtureRequest) -> Iterator[Settings]:
    """Settings of a brand-new local instance of this test's own (deleted at the end)."""
    name = f"pytest-auth-{os.getpid()}-{request.node.name[5:20]}".replace("_", "-")
    settings = load_settings(server_name=name).model_copy(update={"neo4j_uri": None})
    shutil.rmtree(server.instance_dir(settings), ignore_errors=True)
    yield settings
    server.stop(settings, timeout=30)
    shutil.rmtree(server.instance_dir(settings), ignore_errors=True)


def _kag(settings: Settings, *args: str, uri: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real ``kag-neo4j`` command with no Neo4j credentials configured anywhere."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("NEO4J_") and key != "KAG_CONFIG"}
    env.update(KAG_SERVER_NAME=settings.server_name, KAG_HOME=str(settings.home), KAG_EMBEDDER="hashing",
               KAG_EMBEDDING_DIMENSIONS="16", COLUMNS="200", NO_COLOR="1")
    if uri is not None:
        env["NEO4J_URI"] = uri
    return subprocess.run([sys.executable, "-c", "from kag_neo4j.cli import main; main()", *args],
                          capture_output=True, text=True, env=env, cwd=settings.home, timeout=300)


def _refuses(uri: str, auth: tuple[str, str] | None) -> bool:
    try:
        with neo4j.GraphDatabase.driver(uri, auth=auth) as driver:
            driver.verify_connectivity()
    except AuthError:
        return True
    return False


def test_a_fresh_instance_is_locked_down(fresh: Settings) -> None:
    state, started = server.start(fresh)
    assert started
    instance = server.instance_dir(fresh)
    secret = credentials_file(instance)
    assert _mode(instance) == 0o700 and _mode(secret) == 0o600 and _mode(instance / "state.json") == 0o600
    auth = server.instance_auth(fresh)
    assert auth is not None and auth[0] == "neo4j" and len(auth[1]) >= 32

    assert _refuses(state.uri, None), "an anonymous connection must be refused"
    assert _refuses(state.uri, ("neo4j", "neo4j")), "the factory password must not work"
    with neo4j.GraphDatabase.driver(state.uri, auth=auth) as driver:
        loaded = {record["name"] for query in _PLUGIN_NAMES for record in driver.execute_query(query).records}
        assert loaded == set(PLUGIN_CALLS), "exactly the allow-listed gds/apoc procedures and functions load"
        for outside in ("CALL apoc.periodic.iterate('MATCH (n) RETURN n', 'DETACH DELETE n', {})",
                        "CALL gds.list()", "RETURN apoc.text.join(['a'], ',') AS joined"):
            with pytest.raises(ClientError, match=r"ProcedureNotFound|Unknown function"):
                driver.execute_query(outside)
    assert server.check_plugins(state.uri, auth)["gds"].startswith("2.13")
    assert auth[1] not in server.console_log(fresh).read_text(encoding="utf-8", errors="replace")

    # every command finds the password by itself, with no NEO4J_* and no kag.toml
    for args in (["migrate"], ["migrate", "status"], ["schema", "apply", "CompanyFinance"], ["schema", "show"],
                 ["server", "status"]):
        run = _kag(fresh, *args)
        assert run.returncode == 0, (args, run.stdout, run.stderr)
        assert auth[1] not in run.stdout + run.stderr
    uri_run = _kag(fresh, "server", "uri")
    assert uri_run.stdout.strip() == state.uri  # no credentials in it
    assert _kag(fresh, "migrate", "status", uri=uri_run.stdout.strip()).returncode == 0  # NEO4J_URI=$(server uri)
    assert _kag(fresh, "server", "password").stdout.strip() == auth[1]

    # a restart keeps the password (no new one, no admin tool) and stays locked down
    before = secret.read_text()
    assert server.stop(fresh) == "stopped"
    again, started_again = server.start(fresh)
    assert started_again and secret.read_text() == before
    assert _refuses(again.uri, None)
    assert server.check_plugins(again.uri, auth)["apoc"].startswith("5.26")


def test_an_instance_from_before_authentication_is_migrated_or_explained(
    fresh: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    instance = server.instance_dir(fresh)
    secret = credentials_file(instance)
    # an instance whose system database exists while the neo4j user still has the factory password:
    # what every instance started before authentication was on looks like
    with monkeypatch.context() as patch:
        patch.setattr(server, "set_initial_password", lambda *args: None)
        with pytest.raises(ServerError, match="refused the password in .*credentials.json"):
            server.start(fresh)
    assert server.status(fresh).state is None
    assert (instance / "data" / "databases" / "system").is_dir()
    secret.unlink()

    state, started = server.start(fresh)  # migrated: a password is generated and set
    assert started and _mode(secret) == 0o600
    auth = server.instance_auth(fresh)
    assert auth is not None and _refuses(state.uri, None)
    assert server.check_plugins(state.uri, auth)["gds"].startswith("2.13")
    assert server.stop(fresh) == "stopped"

    # its password was changed since (here: the one kag-neo4j set) and the file lost: explained, not hidden
    kept = json.loads(secret.read_text())
    secret.unlink()
    with pytest.raises(ServerError, match=r"created before kag-neo4j turned authentication on(.|\n)*move .*data away"):
        server.start(fresh)
    assert server.status(fresh).state is None
    credentials_module.write_private(secret, json.dumps(kept))  # the fix the message names
    state, started = server.start(fresh)
    assert started and server.check_plugins(state.uri, server.instance_auth(fresh))["neo4j"].startswith("5.26")


@pytest.mark.parametrize("password", ["-starts-like-an-option", "#a comment?", ' quo"tes \\ and spaces\' '])
def test_any_password_in_the_credentials_file_is_the_one_set(fresh: Settings, password: str) -> None:
    # a generated password starts with "-" once in 64 instances; a person's own may hold anything
    instance = server.instance_dir(fresh)
    credentials_module.secure_directory(instance)
    credentials_module.write_private(
        credentials_file(instance), json.dumps({"username": "neo4j", "password": password}) + "\n"
    )
    state, started = server.start(fresh)
    assert started
    if password != password.strip():
        assert _refuses(state.uri, ("neo4j", password.strip())), "blanks at the ends are part of the password"
    with neo4j.GraphDatabase.driver(state.uri, auth=("neo4j", password)) as driver:
        driver.verify_connectivity()

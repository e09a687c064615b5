"""The local launcher's lifecycle on a real Neo4j: idempotent start, port choice, stale state, crash report.

Uses its own server instance (``pytest-lifecycle-<pid>``, removed afterwards) beside the test
session's server and shares the provisioned runtime jars in KAG_HOME. The lock-down tests (authentication, password file,
procedure allow-list, an instance from before authentication) are in ``test_server_auth.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
from collections.abc import Iterator

import pytest

from kag_neo4j.config import Settings, load_settings
from kag_neo4j.errors import ServerError
from kag_neo4j.store import server

pytestmark = pytest.mark.skipif(shutil.which("mvn") is None or shutil.which("java") is None,
                                reason="the local launcher needs Java and Maven")


@pytest.fixture
def lifecycle() -> Iterator[Settings]:
    # one instance per test process: concurrent test runs on one machine do not share it
    settings = load_settings(server_name=f"pytest-lifecycle-{os.getpid()}", neo4j_uri=None)
    settings = settings.model_copy(update={"neo4j_uri": None})
    yield settings
    server.stop(settings, timeout=30)
    shutil.rmtree(server.instance_dir(settings), ignore_errors=True)


def test_start_is_idempotent_and_stop_is_clean(lifecycle: Settings) -> None:
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        taken = blocker.getsockname()[1]
        settings = lifecycle.model_copy(update={"server_port": taken})
        state, started = server.start(settings)
    assert started
    assert state.port != taken, "a taken port must not be reused"
    assert server.read_state(settings) == state
    versions = server.check_plugins(state.uri, server.instance_auth(settings))
    assert versions["gds"].startswith("2.13") and versions["apoc"].startswith("5.26")

    again, started_again = server.start(settings)
    assert not started_again and again.pid == state.pid

    assert server.stop(settings) == "stopped"
    assert server.status(settings).running is False
    assert server.stop(settings) == "not running"


def test_stale_state_is_explained_and_replaced(lifecycle: Settings) -> None:
    state_file = server.instance_dir(lifecycle) / "state.json"
    state_file.parent.mkdir(parents=True, exist_ok=True)
    state_file.write_text(json.dumps({
        "pid": 999_999, "port": 1, "instance": str(server.instance_dir(lifecycle)), "neo4j_version": "x",
        "gds_version": "x", "apoc_version": "x", "started_at": 0.0,
    }))
    current = server.status(lifecycle)
    assert not current.running and "stale record: pid 999999" in current.note
    assert server.read_state(lifecycle) is None
    assert "removed a stale record" in server.stop(lifecycle)
    assert not state_file.exists()


def test_crash_reports_the_useful_log_lines(lifecycle: Settings) -> None:
    broken = lifecycle.model_copy(update={"server_pagecache": "lots"})
    # a fresh instance meets the bad setting in the admin tool that sets its password, a used one in Neo4j
    with pytest.raises(ServerError, match=r"(exited with code \d+ during start-up|set-initial-password failed)"
                                          r"(.|\n)*pagecache"):
        server.start(broken)
    assert server.status(broken).state is None


def test_browser_is_served_beside_bolt_and_http_asks_for_the_password(lifecycle: Settings) -> None:
    import urllib.error
    import urllib.request

    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        taken = blocker.getsockname()[1]
        settings = lifecycle.model_copy(update={"server_browser": True, "server_http_port": taken})
        state, started = server.start(settings)
    assert started and state.http_port not in (0, taken, state.port)
    assert state.browser_url is not None and state.browser_url.startswith(f"http://127.0.0.1:{state.http_port}/browser/")
    assert f"127.0.0.1:{state.port}" in state.browser_url  # the connect form names this server's Bolt port
    with urllib.request.urlopen(state.browser_url, timeout=30) as page:
        assert page.status == 200 and "Neo4j Browser" in page.read().decode("utf-8", errors="replace")
    with pytest.raises(urllib.error.HTTPError) as refused:  # the HTTP query API: no password, no answer
        query = json.dumps({"statements": [{"statement": "MATCH (n) RETURN count(n)"}]}).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{state.http_port}/db/neo4j/tx/commit", data=query,
                                         headers={"Content-Type": "application/json"})
        urllib.request.urlopen(request, timeout=30)
    assert refused.value.code == 401
    assert server.stop(settings) == "stopped"

    plain, _ = server.start(lifecycle)  # the same instance without --browser: HTTP is off again
    assert plain.http_port == 0 and plain.browser_url is None
    with socket.socket() as probe:  # nothing listens where Browser was (a bind could meet TIME_WAIT)
        assert probe.connect_ex(("127.0.0.1", state.http_port)) != 0

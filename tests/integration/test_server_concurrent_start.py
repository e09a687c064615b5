"""Two server instances started at the same moment each get their own port and their own server
(before the start lock, both could choose the same free port and one took the other's server)."""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Iterator

import pytest

from kag_neo4j.config import Settings, load_settings
from kag_neo4j.store import server
from kag_neo4j.store.database import Connection, Database

pytestmark = pytest.mark.skipif(shutil.which("mvn") is None or shutil.which("java") is None,
                                reason="the local launcher needs Java and Maven")


@pytest.fixture
def two_instances() -> Iterator[list[Settings]]:
    pair = [load_settings(server_name=f"pytest-twin{i}-{os.getpid()}", neo4j_uri=None).model_copy(
        update={"neo4j_uri": None, "server_heap": "512m", "server_pagecache": "64m"}) for i in (1, 2)]
    yield pair
    for settings in pair:
        server.stop(settings, timeout=30)
        shutil.rmtree(server.instance_dir(settings), ignore_errors=True)


def test_simultaneous_starts_get_their_own_servers(two_instances: list[Settings]) -> None:
    states: dict[str, object] = {}

    def start(settings: Settings) -> None:
        try:
            states[settings.server_name] = server.start(settings)[0]
        except Exception as exc:  # noqa: BLE001 - shown by the assertion
            states[settings.server_name] = exc

    threads = [threading.Thread(target=start, args=(s,)) for s in two_instances]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    results = [states.get(s.server_name) for s in two_instances]
    assert all(isinstance(r, server.ServerState) for r in results), results
    first, second = results  # type: ignore[misc]
    assert first.port != second.port and first.pid != second.pid  # type: ignore[union-attr]
    # each instance's password opens its own server: the server on its port is really its own
    for settings, state in zip(two_instances, results):
        with Database(Connection(state.uri, "neo4j", server.instance_auth(settings))) as db:  # type: ignore[union-attr]
            db.verify()

"""Driver faults become kag-neo4j errors with the fix: a real driver against a closed port.

Nothing listens on the port, so every call meets the real ``ServiceUnavailable`` of the driver;
no database is mocked.
"""

from __future__ import annotations

import socket
import time

import pytest
from neo4j.exceptions import IncompleteCommit, SessionExpired, TransientError

from kag_neo4j.config import Settings
from kag_neo4j.errors import (
    KagError,
    Neo4jCommitUnknownError,
    Neo4jConnectionLostError,
    Neo4jTransientError,
)
from kag_neo4j.store.database import Connection, Database, connection_for, translate


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def lost() -> Database:
    db = Database(Connection(f"bolt://127.0.0.1:{_closed_port()}", "neo4j", None, retry_seconds=0.6))
    yield db
    db.close()


def _assert_names_fix(exc: KagError, db: Database) -> None:
    message = str(exc)
    assert "\n" not in message  # one line on the console
    assert db.connection.uri in message
    assert "kag-neo4j server start" in message
    assert "ServiceUnavailable" in message


def test_read_is_retried_then_raises_connection_lost(lost: Database) -> None:
    began = time.monotonic()
    with pytest.raises(Neo4jConnectionLostError) as info:
        lost.read("RETURN 1 AS one")
    elapsed = time.monotonic() - began
    assert elapsed >= 0.6  # retried for the configured window
    assert elapsed < 20
    assert "retrying for 0.6 s" in str(info.value)
    _assert_names_fix(info.value, lost)


@pytest.mark.parametrize("call", ["write", "read_tx", "write_tx"])
def test_transactions_raise_kag_errors(lost: Database, call: str) -> None:
    with pytest.raises(Neo4jConnectionLostError) as info:
        if call == "write":
            lost.write("CREATE (:X)")
        elif call == "read_tx":
            lost.read_tx(lambda tx: tx.run("RETURN 1").data())
        else:
            lost.write_tx(lambda tx: tx.run("CREATE (:X)").consume())
    _assert_names_fix(info.value, lost)


def test_session_body_errors_are_translated(lost: Database) -> None:
    with pytest.raises(Neo4jConnectionLostError):
        with lost.session() as session:
            session.run("RETURN 1").data()


def test_auto_commit_without_retries_fails_at_once(lost: Database) -> None:
    began = time.monotonic()
    with pytest.raises(Neo4jConnectionLostError) as info:
        lost.auto_commit("CREATE INDEX x IF NOT EXISTS FOR (n:X) ON (n.id)")
    assert time.monotonic() - began < 0.6
    assert "not retried" in str(info.value)


def test_auto_commit_retries_idempotent_statements() -> None:
    began = time.monotonic()
    with Database(Connection(f"bolt://127.0.0.1:{_closed_port()}", "neo4j", None, retry_seconds=5)) as db:
        with pytest.raises(Neo4jConnectionLostError) as info:
            db.auto_commit("CREATE INDEX x IF NOT EXISTS FOR (n:X) ON (n.id)", retries=2)
    assert time.monotonic() - began >= 0.2 + 0.4  # two retries after 0.2 s and 0.4 s
    assert "retrying" in str(info.value)


def test_retry_window_comes_from_settings() -> None:
    settings = Settings(neo4j_uri="bolt://127.0.0.1:1", neo4j_retry_seconds=2.5)
    assert connection_for(settings).retry_seconds == 2.5


def test_translation_of_other_driver_faults() -> None:
    connection = Connection("bolt://127.0.0.1:1", "neo4j", None, retry_seconds=5)
    assert isinstance(translate(IncompleteCommit("commit in flight"), connection), Neo4jCommitUnknownError)
    assert "may or may not" in str(translate(IncompleteCommit("x"), connection))
    assert isinstance(translate(SessionExpired("gone"), connection), Neo4jConnectionLostError)
    transient = translate(TransientError("lock"), connection)
    assert isinstance(transient, Neo4jTransientError)
    assert "KAG_NEO4J_RETRY_SECONDS" in str(transient)
    assert translate(ValueError("not a driver fault"), connection) is None

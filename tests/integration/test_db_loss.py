"""Neo4j lost in the middle of a command: one `error:` line with the fix, no traceback, and the
same load run again completes and equals a clean load.

The loss is real: the CLI talks to the test database through a TCP relay on 127.0.0.1 that is cut
(every connection closed, new ones refused) once the client has sent a given number of bytes.
"""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from kag_neo4j.cli.load import register
from kag_neo4j.config import Settings
from kag_neo4j.store.database import Database
from kag_neo4j.store.reset import reset_database
from kag_neo4j.store import migrations
from tests.integration.builder_support import snapshot
from tests.integration.conftest import TEST_DIMENSION

PASSAGES = Path(__file__).resolve().parents[1] / "fixtures" / "builder" / "passages.json"


class CuttingRelay:
    """Relays 127.0.0.1:<port> to ``target``; after ``cut_after`` client bytes it drops everything."""

    def __init__(self, target: tuple[str, int], cut_after: int | None = None) -> None:
        self.target = target
        self.cut_after = cut_after
        self.sent = 0
        self.cut_done = threading.Event()
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.cut_done.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            with self._lock:
                self._sockets += [client, upstream]
            threading.Thread(target=self._pump, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, counted: bool) -> None:
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                if counted:
                    with self._lock:
                        self.sent += len(data)
                        over = self.cut_after is not None and self.sent > self.cut_after
                    if over:
                        self.cut()
                        return
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                try:
                    sock.close()
                except OSError:
                    pass

    def cut(self) -> None:
        self.cut_done.set()
        self._listener.close()
        with self._lock:
            for sock in self._sockets:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                sock.close()

    def close(self) -> None:
        if not self.cut_done.is_set():
            self.cut()


def _target(settings: Settings) -> tuple[str, int]:
    host_port = (settings.neo4j_uri or "").split("://", 1)[1].split("/", 1)[0]
    host, _, port = host_port.rpartition(":")
    return host, int(port)


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> typer.Typer:
    cli = typer.Typer()
    register(cli)
    monkeypatch.setenv("KAG_EMBEDDER", "hashing")
    monkeypatch.setenv("KAG_EMBEDDING_DIMENSIONS", str(TEST_DIMENSION))
    monkeypatch.setenv("KAG_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("KAG_NEO4J_RETRY_SECONDS", "1")
    return cli


def _load(app: typer.Typer, monkeypatch: pytest.MonkeyPatch, uri: str) -> object:
    monkeypatch.setenv("NEO4J_URI", uri)
    return CliRunner().invoke(app, ["load", str(PASSAGES), "--mode", "light", "--batch-size", "1", "--json"])


def test_neo4j_lost_mid_load_is_one_error_line_and_the_rerun_equals_a_clean_load(
    db: Database, test_settings: Settings, app: typer.Typer, monkeypatch: pytest.MonkeyPatch
) -> None:
    if test_settings.neo4j_password:
        monkeypatch.setenv("NEO4J_USERNAME", test_settings.neo4j_username)
        monkeypatch.setenv("NEO4J_PASSWORD", test_settings.neo4j_password.get_secret_value())
    target = _target(test_settings)
    measuring = CuttingRelay(target)
    try:
        clean_run = _load(app, monkeypatch, f"bolt://127.0.0.1:{measuring.port}")
    finally:
        measuring.close()
    assert clean_run.exit_code == 0, clean_run.output
    clean = snapshot(db)
    total = measuring.sent

    reset_database(db)
    migrations.migrate(db, embedding_dimension=TEST_DIMENSION)
    relay = CuttingRelay(target, cut_after=total // 2)
    try:
        lost = _load(app, monkeypatch, f"bolt://127.0.0.1:{relay.port}")
    finally:
        relay.close()
    assert relay.cut_done.is_set()
    assert lost.exit_code == 1
    assert isinstance(lost.exception, SystemExit), repr(lost.exception)  # no traceback
    error_lines = [line for line in lost.stderr.splitlines() if line.startswith("error:")]
    assert len(error_lines) == 1, lost.stderr
    assert f"127.0.0.1:{relay.port}" in error_lines[0] and "stopped answering" in error_lines[0]
    assert "kag-neo4j server start" in error_lines[0] and "resumes" in error_lines[0]
    assert "Traceback" not in lost.output
    partial = db.read("MATCH (d:Document {status: 'complete'}) RETURN count(d) AS n")[0]["n"]
    assert 0 < partial < 12  # the cut came mid-load

    again = _load(app, monkeypatch, test_settings.neo4j_uri or "")
    assert again.exit_code == 0, again.output
    summary = json.loads(again.stdout)
    assert summary["documents_skipped"] == partial
    assert snapshot(db) == clean

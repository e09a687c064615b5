"""The builder lease: one load or delete at a time; a killed holder's lease runs out; a lost
lease rolls the transaction back (real Neo4j)."""

from __future__ import annotations

import threading
import time
import uuid
from pathlib import Path

import pytest

from kag_neo4j.builder.delete import delete_document
from kag_neo4j.builder.lease import BUILDER_LOCK, builder_lease
from kag_neo4j.builder.pipeline import LoadOptions, LoadSummary, load
from kag_neo4j.builder.write import GraphWriter
from kag_neo4j.config import Settings
from kag_neo4j.errors import LeaseError, LeaseLostError
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.store import cypher
from kag_neo4j.store.database import Database
from tests.integration.builder_support import capitalised_extractor, snapshot
from tests.integration.cli_env import set_connection_env
from tests.integration.conftest import TEST_DIMENSION

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "builder"
PATHS = [FIXTURES / "passages.json"]


def _settings(settings: Settings, **changes: float) -> Settings:
    return settings.model_copy(update=changes)


def _load(db: Database, settings: Settings, **kwargs: object) -> LoadSummary:
    return load(PATHS, db, settings, LoadOptions(batch_size=2, max_chars=120, overlap=0),
                extractor=capitalised_extractor, embedder=HashingEmbedder(TEST_DIMENSION), **kwargs)  # type: ignore[arg-type]


def _hold(db: Database, seconds: float, owner: str = "a killed loader, pid 1 on elsewhere") -> str:
    """Take the builder lock the way a loader does, without renewing it (a process killed at once)."""
    db.auto_commit(cypher.query("store/lock_constraint"))
    token = uuid.uuid4().hex
    rows = db.write(cypher.query("store/acquire_lock"), lock=BUILDER_LOCK, token=token, owner=owner,
                    lease_seconds=seconds)
    assert rows, "the lock was free"
    return token


def test_a_second_loader_is_refused_with_the_holder_named(db: Database, test_settings: Settings) -> None:
    with builder_lease(db, "the first `kag-neo4j load`", test_settings):
        with pytest.raises(LeaseError, match=r"the first `kag-neo4j load`, pid \d+ on .* holds the 'builder' lock.*KAG_LOAD_LOCK_WAIT"):
            _load(db, _settings(test_settings, load_lock_wait=0.5))
    assert db.read("MATCH (d:Document) RETURN count(d) AS n")[0]["n"] == 0


def test_delete_takes_the_lease_too(db: Database, test_settings: Settings, monkeypatch: pytest.MonkeyPatch,
                                    tmp_path: Path) -> None:
    import typer
    from typer.testing import CliRunner

    from kag_neo4j.cli.load import register

    _load(db, test_settings)
    doc_id = db.read("MATCH (d:Document) RETURN d.id AS id ORDER BY id LIMIT 1")[0]["id"]
    token = _hold(db, 30.0)
    app = typer.Typer()
    register(app)
    set_connection_env(monkeypatch, db.connection)
    monkeypatch.setenv("KAG_HOME", str(tmp_path))
    monkeypatch.setenv("KAG_LOAD_LOCK_WAIT", "0.5")
    result = CliRunner().invoke(app, ["delete", doc_id])
    assert result.exit_code == 1
    assert "a killed loader" in result.output and "KAG_LOAD_LOCK_WAIT" in result.output
    assert db.read("MATCH (d:Document {id: $id}) RETURN count(d) AS n", id=doc_id)[0]["n"] == 1
    db.write(cypher.query("store/release_lock"), lock=BUILDER_LOCK, token=token)
    report = delete_document(db, doc_id)  # the API takes the lease for its one delete
    assert report.found and report.graph_version is not None
    assert db.read("MATCH (d:Document {id: $id}) RETURN count(d) AS n", id=doc_id)[0]["n"] == 0


def test_the_lease_of_a_killed_loader_runs_out(db: Database, test_settings: Settings) -> None:
    _hold(db, 2.0)
    began = time.monotonic()
    summary = _load(db, _settings(test_settings, load_lock_wait=30.0))
    assert time.monotonic() - began >= 1.5  # waited for the dead holder's lease to expire
    assert summary.documents_loaded > 0
    lock = db.read("MATCH (l:KagMigrationLock {id: $id}) RETURN l.holder AS holder", id=BUILDER_LOCK)
    assert lock == [{"holder": None}]  # released at the end


def test_two_concurrent_loads_serialise(db: Database, test_settings: Settings) -> None:
    _load(db, test_settings)
    expected = snapshot(db)
    from kag_neo4j.store.reset import reset_database
    from kag_neo4j.store import migrations

    reset_database(db)
    migrations.migrate(db, embedding_dimension=TEST_DIMENSION)
    errors: list[BaseException] = []
    summaries: list[LoadSummary] = []

    def run() -> None:
        try:
            summaries.append(_load(db, test_settings))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sorted(s.documents_skipped for s in summaries)[0] == 0
    assert sum(s.documents_loaded for s in summaries) == len(expected["documents"])  # the second skipped all
    assert snapshot(db) == expected


def test_a_lost_lease_rolls_the_write_back(db: Database, test_settings: Settings) -> None:
    from tests.integration.test_builder_write_guard import aligned_documents

    lease = builder_lease(db, "`kag-neo4j load`", test_settings)
    with lease:
        # the lease ran out and another process took the lock
        db.write("MATCH (l:KagMigrationLock {id: $id}) SET l.holder = 'someone else'", id=BUILDER_LOCK)
        with pytest.raises(LeaseLostError, match="lost the 'builder' lock.*not written"):
            GraphWriter(db, batch_size=50, lease=lease).write(aligned_documents())
    assert db.read("MATCH (n) WHERE n:Document OR n:Chunk OR n:Entity RETURN count(n) AS n")[0]["n"] == 0

"""Checkpoint/resume: a load killed midway, run again, ends exactly where an uninterrupted one does."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from kag_neo4j.builder.pipeline import LoadOptions, LoadSummary, load
from kag_neo4j.config import Settings
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.store import migrations
from kag_neo4j.store.database import Database
from kag_neo4j.store.reset import reset_database
from tests.integration.builder_support import capitalised_extractor, snapshot
from tests.integration.cli_env import subprocess_env
from tests.integration.conftest import TEST_DIMENSION

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "builder"
PATHS = [FIXTURES / "passages.json", FIXTURES / "computing-history.md", FIXTURES / "cryptography.md"]
REPO = Path(__file__).resolve().parents[2]


class Crash(Exception):
    """Stands in for a crash in the middle of a load."""


def _fresh(db: Database) -> None:
    reset_database(db)
    migrations.migrate(db, embedding_dimension=TEST_DIMENSION)


def _load(db: Database, settings: Settings, **kwargs: object) -> LoadSummary:
    return load(PATHS, db, settings, LoadOptions(batch_size=2, max_chars=120, overlap=0),
                extractor=capitalised_extractor, embedder=HashingEmbedder(TEST_DIMENSION), **kwargs)  # type: ignore[arg-type]


@pytest.fixture
def uninterrupted(db: Database, test_settings: Settings) -> dict:
    summary = _load(db, test_settings)
    assert summary.transactions >= 8, "the crash points below assume at least 8 write transactions"
    expected = snapshot(db)
    _fresh(db)
    return expected


@pytest.mark.parametrize("crash_after", [1, 4, 7])
def test_a_crashed_load_resumes_to_the_same_graph(
    db: Database, test_settings: Settings, uninterrupted: dict, crash_after: int
) -> None:
    writes = 0

    def crash(summary: LoadSummary) -> None:
        nonlocal writes
        writes += 1
        if writes == crash_after:
            raise Crash

    with pytest.raises(Crash):
        _load(db, test_settings, after_write=crash)
    partial = snapshot(db)
    assert partial != uninterrupted
    assert 0 < len(partial["chunks"]) < len(uninterrupted["chunks"])
    resumed = _load(db, test_settings)
    assert resumed.documents_skipped > 0
    assert snapshot(db) == uninterrupted


def test_documents_are_not_marked_complete_before_their_last_chunk(db: Database, test_settings: Settings) -> None:
    states: list[list[tuple[str, str, int]]] = []

    def record(summary: LoadSummary) -> None:
        states.append([(row["id"], row["status"], row["chunks"]) for row in db.read(
            "MATCH (d:Document) OPTIONAL MATCH (c:Chunk)-[:PART_OF]->(d) "
            "RETURN d.id AS id, d.status AS status, count(c) AS chunks, d.chunk_count AS expected"
        )])

    _load(db, test_settings, after_write=record)
    expected = {row["id"]: row["n"] for row in db.read("MATCH (d:Document) RETURN d.id AS id, d.chunk_count AS n")}
    saw_loading = False
    for state in states:
        for doc_id, status, chunks in state:
            if status == "complete":
                assert chunks == expected[doc_id]
            else:
                saw_loading = True
                assert chunks < expected[doc_id]
    assert saw_loading, "batch_size=2 must split some document across transactions"


_CHILD = textwrap.dedent(
    """
    import json, sys, time
    sys.path.insert(0, {repo!r})
    from kag_neo4j.builder.pipeline import LoadOptions, load
    from kag_neo4j.config import Settings
    from kag_neo4j.models.hashing import HashingEmbedder
    from kag_neo4j.store.database import Database
    from tests.integration.builder_support import capitalised_extractor

    settings = Settings(**json.loads({settings!r}))  # NEO4J_* from the environment
    paths = {paths!r}
    with Database.connect(settings) as db:
        def slow(summary):
            print("written", summary.transactions, flush=True)
            time.sleep(0.4)
        load(paths, db, settings, LoadOptions(batch_size=2, max_chars=120, overlap=0),
             extractor=capitalised_extractor, embedder=HashingEmbedder({dimension}), after_write=slow)
    print("finished", flush=True)
    """
)


def test_a_killed_load_process_resumes_to_the_same_graph(
    db: Database, test_settings: Settings, uninterrupted: dict
) -> None:
    # the connection travels in NEO4J_* (a dumped SecretStr would be masked), the rest as JSON;
    # the child's lease outlives it by <= 3 s
    child_settings = test_settings.model_copy(update={"load_lease_seconds": 3.0})
    settings = child_settings.model_dump_json(exclude={"neo4j_uri", "neo4j_username", "neo4j_password", "neo4j_database"})
    script = _CHILD.format(repo=str(REPO), settings=settings, paths=[str(p) for p in PATHS], dimension=TEST_DIMENSION)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=subprocess_env(db.connection) | {"PYTHONUNBUFFERED": "1"}, start_new_session=True)
    try:
        written = 0
        deadline = time.monotonic() + 120
        assert child.stdout is not None
        while written < 3 and time.monotonic() < deadline:
            line = child.stdout.readline()
            if not line:
                break
            if line.startswith("written"):
                written = int(line.split()[1])
        assert written >= 3, f"the child load did not get going: {child.stderr.read() if child.stderr else ''}"
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
            child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    partial = snapshot(db)
    assert 0 < len(partial["chunks"]) < len(uninterrupted["chunks"])
    _load(db, test_settings)
    assert snapshot(db) == uninterrupted

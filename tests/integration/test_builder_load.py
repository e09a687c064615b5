"""The builder pipeline against a real Neo4j: graph shape, idempotency, document update."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kag_neo4j.builder.pipeline import LoadOptions, load
from kag_neo4j.builder.write import graph_counts
from kag_neo4j.config import Settings
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.store.database import Database
from tests.integration.builder_support import capitalised_extractor, snapshot
from tests.integration.cli_env import load_app
from tests.integration.conftest import TEST_DIMENSION

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "builder"


@pytest.fixture
def embedder() -> HashingEmbedder:
    return HashingEmbedder(TEST_DIMENSION)


def _load(db: Database, settings: Settings, embedder: HashingEmbedder, paths: list[Path], **options: object):
    return load(paths, db, settings, LoadOptions(**options), extractor=capitalised_extractor, embedder=embedder)


def test_load_builds_documents_chunks_entities_mutual_index_and_vectors(
    db: Database, test_settings: Settings, embedder: HashingEmbedder
) -> None:
    summary = _load(db, test_settings, embedder, [FIXTURES / "passages.json"], batch_size=5)
    assert summary.documents_loaded == 12
    assert summary.chunks == 12
    assert summary.transactions >= 3  # 12 chunks in transactions of at most 5
    counts = graph_counts(db)
    assert counts["documents"] == 12 and counts["chunks"] == 12
    assert counts["entities"] > 10 and counts["mentions"] >= counts["entities"]
    assert counts["relations"] > 0
    # every document and chunk is complete and every chunk has a vector
    assert db.read("MATCH (d:Document) WHERE d.status <> 'complete' RETURN d.id") == []
    assert db.read("MATCH (c:Chunk) WHERE c.embedding IS NULL RETURN c.id") == []
    assert db.read("MATCH (e:Entity) WHERE e.embedding IS NULL RETURN e.id") == []
    # the mutual index is walked both ways: entity -> chunks and chunk -> entities
    babbage = db.read(
        "MATCH (e:Entity {name: 'Charles Babbage'})-[:MENTIONED_IN]->(c:Chunk) RETURN collect(c.id) AS chunks"
    )[0]["chunks"]
    assert len(babbage) >= 4
    in_chunk = db.read(
        "MATCH (c:Chunk {id: $id})<-[:MENTIONED_IN]-(e:Entity) RETURN collect(e.name) AS names", id=babbage[0]
    )[0]["names"]
    assert "Charles Babbage" in in_chunk
    # one entity across documents: the same name in 4+ passages merged into one node
    assert db.read("MATCH (e:Entity) WHERE e.name = 'Charles Babbage' RETURN count(e) AS n")[0]["n"] == 1
    assert summary.merged > 0
    # every fact carries its source chunks and documents
    assert db.read("MATCH ()-[r:RELATED]->() WHERE size(r.chunk_ids) = 0 OR size(r.doc_ids) = 0 RETURN r") == []
    # vector and fulltext indexes answer
    vector = embedder.embed_query("Charles Babbage")
    hits = db.read("CALL db.index.vector.queryNodes('entity_embedding', 1, $v) YIELD node RETURN node.name AS name",
                   v=vector)
    assert hits[0]["name"] == "Charles Babbage"
    assert db.read("CALL db.index.fulltext.queryNodes('chunk_fulltext', 'Bletchley') YIELD node RETURN count(node) AS n"
                   )[0]["n"] >= 3
    assert db.read("MATCH (m:KagMeta {key: 'graph'}) RETURN m.version AS v")[0]["v"] >= 1


def test_loading_the_same_input_twice_changes_nothing(
    db: Database, test_settings: Settings, embedder: HashingEmbedder
) -> None:
    paths = [FIXTURES / "passages.json", FIXTURES / "computing-history.md"]
    first = _load(db, test_settings, embedder, paths, batch_size=4)
    before = snapshot(db)
    version = db.read("MATCH (m:KagMeta {key: 'graph'}) RETURN m.version AS v")[0]["v"]
    second = _load(db, test_settings, embedder, paths, batch_size=4)
    assert second.documents_skipped == first.documents_loaded
    assert second.documents_loaded == 0 and second.chunks == 0
    assert snapshot(db) == before
    assert db.read("MATCH (m:KagMeta {key: 'graph'}) RETURN m.version AS v")[0]["v"] == version
    # forcing a rewrite of identical input (MERGE + set unions) also changes nothing
    _load(db, test_settings, embedder, paths, batch_size=7, force=True)
    assert snapshot(db) == before


def test_changed_document_replaces_exactly_its_facts(
    db: Database, test_settings: Settings, embedder: HashingEmbedder, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in ("computing-history.md", "cryptography.md"):
        (folder / name).write_text((FIXTURES / name).read_text())
    _load(db, test_settings, embedder, [folder])
    before = snapshot(db)
    # change one file: Gordon Welchman goes, Hut Eight comes; Alan Turing is still supported elsewhere
    (folder / "cryptography.md").write_text(
        "# Cryptanalysis at Bletchley Park\n\nJoan Clarke and Alan Turing worked at Bletchley Park in Hut Eight.\n"
    )
    summary = _load(db, test_settings, embedder, [folder])
    assert summary.documents_replaced == 1 and summary.documents_skipped == 1
    after_update = snapshot(db)
    assert after_update != before
    names = {row["name"] for row in db.read("MATCH (e:Entity) RETURN e.name AS name")}
    assert "Hut Eight" in names and "Gordon Welchman" not in names and "Alan Turing" in names
    # a fresh load of the changed files gives exactly the same graph
    from kag_neo4j.store import migrations
    from kag_neo4j.store.reset import reset_database

    reset_database(db)
    migrations.migrate(db, embedding_dimension=TEST_DIMENSION)
    _load(db, test_settings, embedder, [folder])
    assert snapshot(db) == after_update


def test_load_command_light_mode(db: Database, monkeypatch: pytest.MonkeyPatch,
                                 tmp_path: Path) -> None:
    from typer.testing import CliRunner

    app = load_app(monkeypatch, db.connection, tmp_path, TEST_DIMENSION)
    runner = CliRunner()
    result = runner.invoke(app, ["load", str(FIXTURES / "passages.json"), "--mode", "light", "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["documents_loaded"] == 12 and summary["chunks"] == 12 and summary["entities_new"] > 0
    assert summary["graph"]["documents"] == 12 and summary["graph"]["mentions"] > 0
    table = runner.invoke(app, ["load", str(FIXTURES / "passages.json"), "--mode", "light"])
    assert table.exit_code == 0 and "12 unchanged (skipped)" in table.output
    missing = runner.invoke(app, ["load", str(tmp_path / "nope.json"), "--mode", "light"])
    assert missing.exit_code == 1 and "does not exist" in missing.output
    bad_mode = runner.invoke(app, ["load", str(FIXTURES / "passages.json"), "--mode", "heavy"])
    assert bad_mode.exit_code == 2 and "--mode full or --mode light" in bad_mode.output

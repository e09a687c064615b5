"""``kag-neo4j delete DOC``: a document's chunks go, and exactly the facts only it supported."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from kag_neo4j.builder.delete import delete_document
from kag_neo4j.builder.pipeline import LoadOptions, load
from kag_neo4j.builder.records import SourceDocument
from kag_neo4j.config import Settings
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.store import migrations
from kag_neo4j.store.database import Database
from kag_neo4j.store.reset import reset_database
from tests.integration.builder_support import capitalised_extractor, snapshot
from tests.integration.cli_env import set_connection_env
from tests.integration.conftest import TEST_DIMENSION

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "builder"


def _doc(doc_id: str, text: str) -> SourceDocument:
    import hashlib

    return SourceDocument(id=doc_id, title=doc_id, source=f"test:{doc_id}", text=text,
                          sha256=hashlib.sha256(text.encode()).hexdigest())


DOCS = {
    "a": "Ada Lovelace worked with Charles Babbage in London. Charles Babbage lived in London.",
    "b": "Ada Lovelace corresponded with Charles Babbage. Charles Babbage met Michael Faraday in London.",
    "c": "Michael Faraday lectured at the Royal Institution. Alan Turing visited Manchester.",
}


def _load(db: Database, settings: Settings, ids: list[str]) -> None:
    load([], db, settings, LoadOptions(max_chars=60, overlap=0), documents=[_doc(i, DOCS[i]) for i in ids],
         extractor=capitalised_extractor, embedder=HashingEmbedder(TEST_DIMENSION))


def _fresh(db: Database) -> None:
    reset_database(db)
    migrations.migrate(db, embedding_dimension=TEST_DIMENSION)


@pytest.mark.parametrize("victim", ["a", "b", "c"])
def test_delete_leaves_the_graph_of_the_other_documents(db: Database, test_settings: Settings, victim: str) -> None:
    others = [i for i in DOCS if i != victim]
    _load(db, test_settings, others)
    expected = snapshot(db)
    _fresh(db)
    _load(db, test_settings, list(DOCS))
    report = delete_document(db, victim)
    assert report.found and report.chunks > 0
    assert report.relations_deleted + report.relations_updated > 0
    assert snapshot(db) == expected


def described_extractor(document: SourceDocument, chunks):
    """The capitalised extractor, plus a description (except from c) and properties per document."""
    result = capitalised_extractor(document, chunks)
    for extraction in result.extractions:
        for entity in extraction.entities:
            entity.description = "" if document.id == "c" else f"{entity.name} as {document.id} tells it"
            entity.properties = {"told_by": document.id, f"only_{document.id}": len(entity.name)}
    return result


def entity_details(db: Database) -> list[tuple]:
    rows = db.read("MATCH (e:Entity) RETURN e.id AS id, e.description AS description, e.semantic_type AS type, "
                   "[k IN keys(e) WHERE k = 'told_by' OR k STARTS WITH 'only_' | [k, e[k]]] AS properties")
    return sorted((r["id"], r["description"], r["type"], tuple(sorted(map(tuple, r["properties"])))) for r in rows)


@pytest.mark.parametrize("victim", ["a", "b", "c"])
def test_delete_recomputes_what_the_remaining_documents_say_about_an_entity(
    db: Database, test_settings: Settings, victim: str
) -> None:
    def load_docs(ids: list[str]) -> None:
        load([], db, test_settings, LoadOptions(max_chars=60, overlap=0),
             documents=[_doc(i, DOCS[i]) for i in ids], extractor=described_extractor,
             embedder=HashingEmbedder(TEST_DIMENSION))

    load_docs([i for i in DOCS if i != victim])
    expected = entity_details(db), snapshot(db)
    _fresh(db)
    load_docs(list(DOCS))
    assert any(dict(row[3]).get(f"only_{victim}") for row in entity_details(db))  # the victim's were written
    delete_document(db, victim)
    assert (entity_details(db), snapshot(db)) == expected


def test_delete_keeps_shared_facts_and_removes_own_ones(db: Database, test_settings: Settings) -> None:
    _load(db, test_settings, list(DOCS))
    shared = db.read(
        "MATCH (:Entity {name: 'Ada Lovelace'})-[r:RELATED]-(:Entity {name: 'Charles Babbage'}) "
        "RETURN r.doc_ids AS docs"
    )
    assert [sorted(row["docs"]) for row in shared] == [["a", "b"]]
    report = delete_document(db, "b")
    assert report.relations_updated >= 1 and report.relations_deleted >= 1
    rows = db.read(
        "MATCH (:Entity {name: 'Ada Lovelace'})-[r:RELATED]-(:Entity {name: 'Charles Babbage'}) "
        "RETURN r.doc_ids AS docs, r.chunk_ids AS chunks"
    )
    assert len(rows) == 1 and rows[0]["docs"] == ["a"] and all(c.startswith("a#") for c in rows[0]["chunks"])
    # Michael Faraday is still mentioned by c; the Babbage-Faraday fact only b supported is gone
    assert db.read("MATCH (e:Entity {name: 'Michael Faraday'}) RETURN count(e) AS n")[0]["n"] == 1
    assert db.read("MATCH (:Entity {name: 'Charles Babbage'})-[r]-(:Entity {name: 'Michael Faraday'}) "
                   "RETURN count(r) AS n")[0]["n"] == 0
    assert db.read("MATCH (c:Chunk) WHERE c.id STARTS WITH 'b#' RETURN count(c) AS n")[0]["n"] == 0
    assert db.read("MATCH (d:Document {id: 'b'}) RETURN count(d) AS n")[0]["n"] == 0
    # no fact is left without provenance, no entity without a mention
    assert db.read("MATCH ()-[r]->() WHERE r.chunk_ids IS NOT NULL AND size(r.chunk_ids) = 0 RETURN count(r) AS n"
                   )[0]["n"] == 0
    assert db.read("MATCH (e:Entity) WHERE NOT (e)-[:MENTIONED_IN]->() RETURN count(e) AS n")[0]["n"] == 0


def test_delete_of_an_unknown_document_reports_not_found(db: Database) -> None:
    report = delete_document(db, "no-such-document")
    assert not report.found and report.chunks == 0


def test_delete_command(db: Database, test_settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    from kag_neo4j.cli.load import register

    _load(db, test_settings, list(DOCS))
    app = typer.Typer()
    register(app)
    set_connection_env(monkeypatch, db.connection)
    runner = CliRunner()
    result = runner.invoke(app, ["delete", "c"])
    assert result.exit_code == 0, result.output
    assert "deleted c:" in result.output
    assert sorted(db.read("MATCH (d:Document) RETURN collect(d.id) AS ids")[0]["ids"]) == ["a", "b"]
    missing = runner.invoke(app, ["delete", "zzz"])
    assert missing.exit_code == 1
    assert "no document with id 'zzz'" in missing.output

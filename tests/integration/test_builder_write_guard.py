"""The writer's guards (real Neo4j): every transaction bumps the graph version with its writes,
and an edge whose endpoint is missing fails the transaction instead of vanishing."""

from __future__ import annotations

import functools
import hashlib

import pytest

from kag_neo4j.builder.aligned_document import AlignedDocument
from kag_neo4j.builder.alignment import Aligner
from kag_neo4j.builder.delete import delete_in_tx
from kag_neo4j.builder.graph_lookup import GraphLookup
from kag_neo4j.builder.records import SourceDocument
from kag_neo4j.builder.resolution import Resolver
from kag_neo4j.builder.split import split_document
from kag_neo4j.builder.vectorise import Vectoriser
from kag_neo4j.builder.write import GraphWriter, SliceRows, WriteStats, slices, write_rows
from kag_neo4j.errors import BuilderError
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.store.database import Database
from tests.integration.builder_support import capitalised_extraction
from tests.integration.conftest import TEST_DIMENSION

TEXTS = {
    "alpha": "Ada Lovelace worked with Charles Babbage in London. Charles Babbage designed the Analytical Engine.",
    "beta": "Charles Babbage lived in London. Mary Somerville introduced Ada Lovelace to Charles Babbage.",
}


def document(doc_id: str, text: str) -> SourceDocument:
    return SourceDocument(id=doc_id, title=doc_id, source=f"{doc_id}.txt", text=text,
                          sha256=hashlib.sha256(text.encode()).hexdigest())


def aligned_documents(ids: tuple[str, ...] = ("alpha", "beta"), db: Database | None = None) -> list[AlignedDocument]:
    """Aligned (and, with ``db``, resolved against it) documents ready for the writer."""
    aligner = Aligner(None, None, concept_links_from_types=False)
    vectoriser = Vectoriser(HashingEmbedder(TEST_DIMENSION))
    docs = []
    for doc_id in ids:
        source = document(doc_id, TEXTS[doc_id])
        chunks = split_document(source, max_chars=60, overlap=0)
        docs.append(aligner.align_document(source, chunks, [capitalised_extraction(c) for c in chunks]))
    if db is not None:
        Resolver(GraphLookup(db), vectoriser.embed, similarity=None).resolve(docs)
    vectoriser.vectorise(docs)
    return docs


def _version(db: Database) -> int | None:
    rows = db.read("OPTIONAL MATCH (m:KagMeta {key: 'graph'}) RETURN m.version AS version")
    return rows[0]["version"]


def test_every_write_transaction_bumps_the_graph_version(db: Database) -> None:
    seen: list[tuple[int | None, int]] = []

    def after(stats: WriteStats) -> None:  # runs after each commit: the version moved with the data
        chunks = db.read("MATCH (c:Chunk) RETURN count(c) AS n")[0]["n"]
        seen.append((_version(db), chunks))

    writer = GraphWriter(db, batch_size=1, after_slice=after)
    writer.write(aligned_documents())
    assert len(seen) >= 3
    versions = [version for version, _ in seen]
    assert versions == list(range(1, len(seen) + 1))
    assert writer.version == versions[-1]
    assert [chunks for _, chunks in seen] == sorted({chunks for _, chunks in seen})  # each committed more


def test_a_delete_bumps_the_version_in_its_transaction(db: Database) -> None:
    GraphWriter(db, batch_size=50).write(aligned_documents())
    before = _version(db)
    report = db.write_tx(lambda tx: delete_in_tx(tx, "alpha"))
    assert report.found and report.graph_version == before + 1 == _version(db)


def test_an_edge_to_a_missing_node_fails_the_whole_transaction(db: Database) -> None:
    part = next(slices(aligned_documents(("alpha",)), 50))
    rows = SliceRows(part)
    rows.entities.clear()  # as if the rows of the mentioned entities had been left out
    with pytest.raises(BuilderError, match=r"nodes its edges need are not in the graph: \d+ Entity \('entity:"):
        db.write_tx(functools.partial(write_rows, rows=rows))
    assert db.read("MATCH (n) WHERE n:Document OR n:Chunk OR n:Entity RETURN count(n) AS n")[0]["n"] == 0
    assert _version(db) is None


def test_entities_deleted_after_resolution_are_an_error_not_lost_mentions(db: Database) -> None:
    GraphWriter(db, batch_size=50).write(aligned_documents(("alpha",)))
    beta = aligned_documents(("beta",), db=db)  # Charles Babbage, Ada Lovelace, London: existing, no rows sent
    assert any(node.existing for node in beta[0].entities.values())
    db.write_tx(lambda tx: delete_in_tx(tx, "alpha"))  # another process removes them meanwhile
    with pytest.raises(BuilderError, match="Another process changed the graph"):
        GraphWriter(db, batch_size=50).write(beta)
    assert db.read("MATCH (d:Document {id: 'beta'}) RETURN count(d) AS n")[0]["n"] == 0

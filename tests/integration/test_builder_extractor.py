"""The extractor contract in a real load: what an extractor declares (batching, registration)
is what the pipeline calls; a plain function is an extractor too."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from kag_neo4j.builder.extract import DocumentChunks, DocumentExtractor, ExtractionFailure, ExtractionResult
from kag_neo4j.builder.pipeline import LoadOptions, load
from kag_neo4j.builder.records import ChunkRecord, SourceDocument
from kag_neo4j.config import Settings
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.store import migrations
from kag_neo4j.store.database import Database
from kag_neo4j.store.reset import reset_database
from tests.integration.builder_support import capitalised_extraction, capitalised_extractor, snapshot
from tests.integration.conftest import TEST_DIMENSION

PASSAGES = Path(__file__).resolve().parents[1] / "fixtures" / "builder" / "passages.json"


class Recording(DocumentExtractor):
    """The capitalised test extractor, recording how the pipeline calls it."""

    def __init__(self, *, batches: bool) -> None:
        self.batches = batches
        self.calls: list[tuple[str, int]] = []

    def register(self, documents: Sequence[SourceDocument]) -> None:
        self.calls.append(("register", len(documents)))

    def extract_document(self, document: SourceDocument, chunks: Sequence[ChunkRecord]) -> ExtractionResult:
        self.calls.append(("document", 1))
        return capitalised_extractor(document, chunks)

    def extract_documents(self, items: Sequence[DocumentChunks]) -> list[ExtractionResult]:
        self.calls.append(("documents", len(items)))
        return super().extract_documents(items)


def _load(db: Database, settings: Settings, extractor: object, **options: object):
    return load([PASSAGES], db, settings, LoadOptions(mode="light", **options), extractor=extractor,  # type: ignore[arg-type]
                embedder=HashingEmbedder(TEST_DIMENSION))


def test_a_batching_extractor_gets_whole_groups_after_seeing_every_document(db: Database, test_settings: Settings) -> None:
    batching = Recording(batches=True)
    summary = _load(db, test_settings, batching, batch_size=5)
    assert summary.documents_loaded == 12
    # every document first, then one call per group of at most 5 chunks (one chunk per passage)
    assert batching.calls[0] == ("register", 12)
    assert [c for c in batching.calls if c[0] == "documents"] == [("documents", 5), ("documents", 5), ("documents", 2)]
    graph = snapshot(db)
    reset_database(db)
    migrations.migrate(db, embedding_dimension=TEST_DIMENSION)
    one_by_one = Recording(batches=False)
    _load(db, test_settings, one_by_one, batch_size=5)
    assert one_by_one.calls == [("register", 12)] + [("document", 1)] * 12
    assert snapshot(db) == graph  # how it is called does not change what is loaded


def test_failures_an_extractor_reports_keep_their_documents_incomplete(db: Database, test_settings: Settings) -> None:
    def half_failing(document: SourceDocument, chunks: Sequence[ChunkRecord]) -> ExtractionResult:
        failed = document.title.startswith("A")
        return ExtractionResult(
            extractions=[] if failed else [capitalised_extraction(chunk) for chunk in chunks],
            failures=[ExtractionFailure(chunk_id=chunk.id, reason="refused") for chunk in chunks] if failed else [],
        )

    summary = _load(db, test_settings, half_failing)
    incomplete = db.read("MATCH (d:Document) WHERE d.status <> 'complete' RETURN d.title AS title")
    assert summary.extraction_failures == len(incomplete) > 0
    assert all(row["title"].startswith("A") for row in incomplete)

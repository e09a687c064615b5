"""Extraction: chunks -> :class:`~kag_neo4j.builder.records.ChunkExtraction`.

* ``full`` (:class:`FullExtractor`): one structured LLM call per chunk.
* ``light`` (:class:`LightExtractor`): spaCy / jiagu NER and co-occurrence relations, no LLM.
* ``structured`` (:func:`structured_extract`): CSV/JSON records mapped onto schema types.

:func:`extract_document` picks the right one for a document (records go the structured way
whatever the mode), holds the result against the schema and normalises it:

    from kag_neo4j.builder.extract import Extraction, schema_view
    extraction = Extraction(mode="full", llm=llm, schema=schema_view(resolved_schema))
    batch = extraction.extract_document(doc, chunks)   # batch.extractions, batch.failures
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from kag_neo4j.builder.normalise import normalise_extraction
from kag_neo4j.builder.records import ChunkRecord, SourceDocument
from kag_neo4j.errors import ConfigError

from .full import ChunkExtractionError, ExtractionBatch, ExtractionFailure, FullExtractor, response_to_extraction
from .language import cjk_ratio, detect_language
from .light import LightExtractor
from .schema_check import schema_check
from .schema_view import SchemaView, schema_view
from .structured import RecordIndex, structured_extract

if TYPE_CHECKING:
    from kag_neo4j.models.base import LLM
    from kag_neo4j.schema.models import ResolvedSchema

__all__ = [
    "ChunkExtractionError",
    "Extraction",
    "ExtractionBatch",
    "ExtractionFailure",
    "FullExtractor",
    "LightExtractor",
    "RecordIndex",
    "SchemaView",
    "cjk_ratio",
    "detect_language",
    "response_to_extraction",
    "schema_check",
    "schema_view",
    "structured_extract",
]

Mode = Literal["full", "light"]


class Extraction:
    """The extraction stage of a load: one mode, one schema (or none), one record index.

    ``normalise``: pass every result through
    :func:`~kag_neo4j.builder.normalise.normalise_extraction` (dates, numbers, names).
    """

    def __init__(
        self,
        *,
        mode: Mode = "full",
        llm: LLM | None = None,
        schema: ResolvedSchema | SchemaView | None = None,
        normalise: bool = True,
        dayfirst: bool = False,
        index: RecordIndex | None = None,
    ) -> None:
        if mode not in ("full", "light"):
            raise ConfigError(f"extraction mode must be 'full' or 'light', got {mode!r}")
        if mode == "full" and llm is None:
            raise ConfigError("full extraction needs an LLM (configure KAG_LLM_PROVIDER) or use light mode")
        self.mode = mode
        self.schema = schema_view(schema) if schema is not None else None
        self.normalise = normalise
        self.dayfirst = dayfirst
        self.index = index if index is not None else RecordIndex()
        self.full = FullExtractor(llm, schema=self.schema) if llm is not None and mode == "full" else None
        self.light = LightExtractor(schema=self.schema) if mode == "light" else None

    def register(self, documents: Sequence[SourceDocument]) -> None:
        """Index the record ids of structured documents so references between tables resolve
        (call it with every document of the load before extracting)."""
        for document in documents:
            self.index.add_document(document)

    def _finish(self, batch: ExtractionBatch) -> ExtractionBatch:
        if self.normalise:
            batch.extractions = [normalise_extraction(e, dayfirst=self.dayfirst) for e in batch.extractions]
        return batch

    def extract_chunks(self, chunks: Sequence[ChunkRecord]) -> ExtractionBatch:
        """Text chunks through the configured mode."""
        if self.mode == "light":
            assert self.light is not None
            return self._finish(ExtractionBatch(extractions=self.light.extract_many(chunks)))
        assert self.full is not None
        return self._finish(self.full.extract_many(chunks))

    async def aextract_chunks(self, chunks: Sequence[ChunkRecord]) -> ExtractionBatch:
        if self.mode == "light":
            return self.extract_chunks(chunks)
        assert self.full is not None
        return self._finish(await self.full.aextract_many(chunks))

    def extract_document(self, document: SourceDocument, chunks: Sequence[ChunkRecord]) -> ExtractionBatch:
        """All chunks of one document: structured records directly, text by the mode."""
        if document.records and not document.text.strip():
            self.index.add_document(document)
            results = structured_extract(document, chunks, schema=self.schema, index=self.index)
            return self._finish(ExtractionBatch(extractions=[schema_check(r, self.schema) for r in results]))
        return self.extract_chunks(chunks)

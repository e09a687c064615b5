"""Extraction: chunks -> :class:`~kag_neo4j.builder.extract.base.ExtractionResult`.

* ``full`` (:class:`FullExtractor`): one structured LLM call per chunk (with a schema, one
  more for a chunk titled by a typed entity: :mod:`.schema_fill`).
* ``light`` (:class:`LightExtractor`): spaCy / jiagu NER and co-occurrence relations, no LLM.
* ``structured`` (:func:`structured_extract`): CSV/JSON records mapped onto schema types.

All three return one :class:`ExtractionResult` (extractions, failed chunks). :class:`Extraction`,
the :class:`DocumentExtractor` a load uses, picks the right one for a document (records go the
structured way whatever the mode), holds the result against the schema and normalises it:

    from kag_neo4j.builder.extract import Extraction, schema_view
    extraction = Extraction(mode="full", llm=llm, schema=schema_view(resolved_schema))
    result = extraction.extract_document(doc, chunks)   # result.extractions, result.failures
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from kag_neo4j.builder.normalise import normalise_extraction
from kag_neo4j.builder.records import ChunkRecord, SourceDocument
from kag_neo4j.errors import ConfigError

from .base import (
    ChunkExtractor,
    DocumentChunks,
    DocumentExtractor,
    ExtractFunction,
    ExtractionFailure,
    ExtractionResult,
    FunctionExtractor,
    as_document_extractor,
)
from .full import ChunkExtractionError, FullExtractor, ReplyFormat, response_to_extraction
from .language import cjk_ratio, detect_language
from .light import LightExtractor
from .schema_check import schema_check
from .schema_view import SchemaView, schema_view
from .structured import Dangling, RecordIndex, spo_names, structured_extract

if TYPE_CHECKING:
    from kag_neo4j.models.base import LLM
    from kag_neo4j.schema.models import ResolvedSchema

__all__ = [
    "ChunkExtractionError",
    "ChunkExtractor",
    "DocumentChunks",
    "DocumentExtractor",
    "ExtractFunction",
    "Extraction",
    "ExtractionFailure",
    "ExtractionResult",
    "FullExtractor",
    "FunctionExtractor",
    "LightExtractor",
    "RecordIndex",
    "spo_names",
    "SchemaView",
    "as_document_extractor",
    "cjk_ratio",
    "detect_language",
    "response_to_extraction",
    "schema_check",
    "schema_view",
    "structured_extract",
]

Mode = Literal["full", "light"]


class Extraction(DocumentExtractor):
    """The extraction stage of a load: one mode, one schema (or none), one record index.

    ``normalise``: pass every result through
    :func:`~kag_neo4j.builder.normalise.normalise_extraction` (dates, numbers, names). In light
    mode it batches: the text chunks of a whole group of documents go through NER in one pass.
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
        dangling: Dangling = "skip",
        reply_format: ReplyFormat = "rows",
        schema_fill: bool = True,
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
        #: structured references to records the load lacks: skip (reported) or create bare nodes
        self.dangling = dangling
        self.full = (
            FullExtractor(llm, schema=self.schema, reply_format=reply_format, schema_fill=schema_fill)
            if llm is not None and mode == "full" else None
        )
        self.light = LightExtractor(schema=self.schema) if mode == "light" else None
        #: light mode takes a whole group of documents at once (spaCy batches their chunks); full
        #: mode goes document by document, so a load's progress moves with the LLM
        self.batches = mode == "light"

    @property
    def text_extractor(self) -> ChunkExtractor:
        """The extractor of text chunks for the mode."""
        extractor: ChunkExtractor | None = self.light if self.mode == "light" else self.full
        assert extractor is not None
        return extractor

    def register(self, documents: Sequence[SourceDocument]) -> None:
        """Index the record ids of structured documents so references between tables resolve
        (call it with every document of the load before extracting)."""
        for document in documents:
            self.index.add_document(document, self.schema)

    def _finish(self, result: ExtractionResult) -> ExtractionResult:
        if self.normalise:
            result.extractions = [normalise_extraction(e, dayfirst=self.dayfirst) for e in result.extractions]
        result.normalised = self.normalise
        return result

    def extract_chunks(self, chunks: Sequence[ChunkRecord]) -> ExtractionResult:
        """Text chunks through the configured mode."""
        return self._finish(self.text_extractor.extract_many(chunks))

    async def aextract_chunks(self, chunks: Sequence[ChunkRecord]) -> ExtractionResult:
        if self.mode == "light":
            return self.extract_chunks(chunks)
        assert self.full is not None
        return self._finish(await self.full.aextract_many(chunks))

    @staticmethod
    def _structured(document: SourceDocument) -> bool:
        return bool(document.records) and not document.text.strip()

    def extract_document(self, document: SourceDocument, chunks: Sequence[ChunkRecord]) -> ExtractionResult:
        """All chunks of one document: structured records directly, text by the mode."""
        if self._structured(document):
            self.index.add_document(document, self.schema)
            result = structured_extract(document, chunks, schema=self.schema, index=self.index,
                                        dangling=self.dangling)
            result.extractions = [schema_check(r, self.schema) for r in result.extractions]
            if self.schema is not None:  # values already typed as the schema says (structured.record_properties)
                result.normalised = True
                return result
            return self._finish(result)
        return self.extract_chunks(chunks)

    def extract_documents(self, items: Sequence[DocumentChunks]) -> list[ExtractionResult]:
        """Several documents at once: the text chunks of all of them go through one call (spaCy
        batches them); structured documents go one by one."""
        text = {i for i, (document, chunks) in enumerate(items) if chunks and not self._structured(document)}
        combined = self.extract_chunks([c for i in sorted(text) for c in items[i][1]]) if text else ExtractionResult()
        results = []
        for i, (document, chunks) in enumerate(items):
            if i in text:
                results.append(combined.of_chunks([c.id for c in chunks]))
            else:
                results.append(self.extract_document(document, chunks) if chunks else ExtractionResult(normalised=True))
        return results

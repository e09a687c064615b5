"""The extraction contract: one result type, and the protocols extractors declare.

* :class:`ExtractionResult` is what every extractor returns - full (LLM), light (NER) and
  structured (CSV/JSON records) alike: the extractions of the chunks that worked and, for each
  chunk that failed, why.
* :class:`ChunkExtractor` extracts text chunks (:class:`~.full.FullExtractor`,
  :class:`~.light.LightExtractor`): ``extract`` one chunk, ``extract_many`` several.
* :class:`DocumentExtractor` is what a load extracts with
  (:class:`~kag_neo4j.builder.extract.Extraction` is the built-in one; a plain function
  ``(document, chunks) -> ExtractionResult`` is wrapped in a :class:`FunctionExtractor`). What it
  can do is declared, not probed: ``batches = True`` says :meth:`DocumentExtractor.extract_documents`
  takes a whole group of documents in one pass (the pipeline then hands it the group), and
  :meth:`DocumentExtractor.register` sees every document of the load before extraction starts.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

from pydantic import BaseModel, Field

from kag_neo4j.builder.records import ChunkExtraction, ChunkRecord, SourceDocument


class ExtractionFailure(BaseModel):
    """A chunk whose extraction failed; ``reason`` says why (and the fix, from the models layer)."""

    chunk_id: str
    reason: str


class ExtractionResult(BaseModel):
    """Extractions of some chunks, and the chunks that failed (every extractor returns this)."""

    extractions: list[ChunkExtraction] = Field(default_factory=list)
    failures: list[ExtractionFailure] = Field(default_factory=list)
    #: the extractions are already normalised (dates, numbers, names)
    normalised: bool = False

    def extend(self, other: ExtractionResult) -> None:
        self.extractions.extend(other.extractions)
        self.failures.extend(other.failures)

    def failure_reasons(self) -> dict[str, str]:
        """chunk id -> why its extraction failed."""
        return {failure.chunk_id: failure.reason for failure in self.failures}

    def of_chunks(self, chunk_ids: Sequence[str]) -> ExtractionResult:
        """The part of this result that concerns ``chunk_ids``, in their order."""
        by_chunk = {extraction.chunk_id: extraction for extraction in self.extractions}
        failed = self.failure_reasons()
        return ExtractionResult(
            extractions=[by_chunk[c] for c in chunk_ids if c in by_chunk],
            failures=[ExtractionFailure(chunk_id=c, reason=failed[c]) for c in chunk_ids if c in failed],
            normalised=self.normalised,
        )


class ChunkExtractor(Protocol):
    """Extracts text chunks (implemented by the full and the light extractor)."""

    def extract(self, chunk: ChunkRecord) -> ChunkExtraction:
        """One chunk; a failure raises."""
        ...

    def extract_many(self, chunks: Iterable[ChunkRecord]) -> ExtractionResult:
        """Several chunks, in order; a chunk that fails is recorded in the result, not raised."""
        ...


#: the chunks of one document -> what was extracted from them
ExtractFunction = Callable[[SourceDocument, Sequence[ChunkRecord]], ExtractionResult]
#: a document and its chunks
DocumentChunks = tuple[SourceDocument, Sequence[ChunkRecord]]


class DocumentExtractor(ABC):
    """What a load extracts with: the chunks of a document -> an :class:`ExtractionResult`.

    Implement :meth:`extract_document`. Declare ``batches = True`` (class or instance attribute)
    and override :meth:`extract_documents` when several documents go faster in one pass;
    override :meth:`register` to see every document of the load before extraction.
    """

    #: :meth:`extract_documents` takes a whole group of documents at once
    batches: bool = False

    @abstractmethod
    def extract_document(self, document: SourceDocument, chunks: Sequence[ChunkRecord]) -> ExtractionResult:
        """The chunks of one document."""

    def extract_documents(self, items: Sequence[DocumentChunks]) -> list[ExtractionResult]:
        """Several documents, one result each, in order (one by one unless overridden)."""
        return [self.extract_document(document, chunks) if chunks else ExtractionResult() for document, chunks in items]

    def register(self, documents: Sequence[SourceDocument]) -> None:  # noqa: B027 - optional hook, nothing by default
        """Called once with every document of the load before any is extracted."""


class FunctionExtractor(DocumentExtractor):
    """A plain function ``(document, chunks) -> ExtractionResult`` as a :class:`DocumentExtractor`."""

    def __init__(self, function: ExtractFunction) -> None:
        self.function = function

    def extract_document(self, document: SourceDocument, chunks: Sequence[ChunkRecord]) -> ExtractionResult:
        return self.function(document, chunks)


def as_document_extractor(extractor: DocumentExtractor | ExtractFunction) -> DocumentExtractor:
    """``extractor`` itself, or the plain function wrapped."""
    return extractor if isinstance(extractor, DocumentExtractor) else FunctionExtractor(extractor)

"""Full extraction: one structured LLM call per chunk (entities, events, relations, properties),
and with a schema the form of the entity the chunk is about (:mod:`.schema_fill`).

The call goes through the :class:`~kag_neo4j.models.base.LLM` protocol (``stage="extract"``), so
the models layer's response cache, token accounting, retries and JSON repair apply. A chunk so
dense that the reply is cut off at ``max_tokens`` is extracted again in two halves (split at the
sentence boundary nearest its middle, up to ``max_splits`` times), and the halves' results are
merged under the chunk's id. A reply that names several entities but states no relation or event
(a small model that loops through entity rows is stopped before it writes any) is extracted again
in the same two halves, once, and what the halves add is merged into it. A chunk whose output stays
invalid after all that is recorded as failed with the reason and the load goes on.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

from kag_neo4j.builder.records import (
    ChunkExtraction,
    ChunkRecord,
    ExtractedEntity,
    ExtractedEvent,
    ExtractedRelation,
)
from kag_neo4j.errors import ConfigError, KagError, ModelError, ModelUnavailableError, StructuredOutputError
from kag_neo4j.models.base import LLM
from kag_neo4j.prompts.extract import ExtractionResponse, build_extract_messages
from kag_neo4j.prompts.extract_rows import RowsExtractionResponse, build_extract_rows_messages

from .base import ExtractionFailure, ExtractionResult
from .language import detect_language
from .schema_check import schema_check
from .schema_fill import FILL_MAX_TOKENS, FillRequest, SchemaFill
from .schema_view import SchemaView, schema_view

if TYPE_CHECKING:
    from kag_neo4j.prompts.extract import EntityOut, EventOut
    from kag_neo4j.schema.models import ResolvedSchema

log = logging.getLogger(__name__)

LanguageChoice = Literal["auto", "en", "zh"]
#: How the model writes its reply: ``rows`` (positional arrays, the default: about half the tokens)
#: or ``objects`` (a keyed object per item).
ReplyFormat = Literal["rows", "objects"]
REPLY_FORMATS: tuple[ReplyFormat, ...] = ("rows", "objects")
#: a reply with at least this many entities and no relation or event is extracted again in halves
FACTLESS_ENTITIES = 3


class _HasName(Protocol):
    name: str


_Named = TypeVar("_Named", bound=_HasName)


_SENTENCE_END = re.compile(r"(?<=[.!?;。！？；])\s*")


def halves(text: str) -> tuple[str, str] | None:
    """``text`` cut in two at the sentence end nearest its middle (else the nearest whitespace);
    ``None`` when it cannot be cut into two non-empty parts."""
    middle = len(text) // 2
    cuts = [m.end() for m in _SENTENCE_END.finditer(text) if 0 < m.end() < len(text)]
    if not cuts:
        cuts = [m.end() for m in re.finditer(r"\s+", text) if 0 < m.end() < len(text)]
    if not cuts:
        return None
    cut = min(cuts, key=lambda position: abs(position - middle))
    first, second = text[:cut].strip(), text[cut:].strip()
    return (first, second) if first and second else None


def merge_extractions(chunk_id: str, parts: Sequence[ChunkExtraction]) -> ChunkExtraction:
    """The extractions of parts of one chunk, as that chunk's extraction (alignment merges the
    entities the parts share)."""
    merged = ChunkExtraction(chunk_id=chunk_id, mode=parts[0].mode if parts else "full")
    for part in parts:
        merged.entities.extend(part.entities)
        merged.relations.extend(part.relations)
        merged.events.extend(part.events)
        merged.issues.extend(issue for issue in part.issues if issue not in merged.issues)
    return merged


class ChunkExtractionError(KagError):
    """One chunk's extraction failed for a reason that concerns this chunk only."""

    def __init__(self, chunk_id: str, reason: str) -> None:
        self.chunk_id = chunk_id
        self.reason = reason
        super().__init__(f"chunk {chunk_id}: {reason}")


def _named(items: Iterable[_Named], what: str, issues: list[str]) -> Iterator[tuple[str, _Named]]:
    """``(stripped name, item)`` for the items that have a name; the others are reported."""
    for item in items:
        name = item.name.strip()
        if name:
            yield name, item
        else:
            issues.append(f"dropped {what} without a name")


def _item_fields(name: str, item: EntityOut | EventOut, default_type: str) -> dict[str, Any]:
    """The fields an entity and an event of the model's answer share, cleaned."""
    return {"name": name, "type": item.type.strip() or default_type, "description": item.description.strip(),
            "properties": dict(item.properties)}


def response_to_extraction(chunk_id: str, response: ExtractionResponse, *, mode: str = "full") -> ChunkExtraction:
    """Turn the model's answer into a :class:`ChunkExtraction`; unnamed items are dropped and
    reported, relation endpoints get the types of the entities they name."""
    issues: list[str] = []
    entities = [
        ExtractedEntity(**_item_fields(name, item, "Entity"), aliases=[alias for alias in item.aliases if alias != name])
        for name, item in _named(response.entities, "an entity", issues)
    ]
    types = {entity.name.casefold(): entity.type for entity in entities}
    events = [
        ExtractedEvent(
            **_item_fields(name, item, "Event"),
            roles={role.strip(): value.strip() for role, value in item.roles.items() if role.strip() and value.strip()},
        )
        for name, item in _named(response.events, "an event", issues)
    ]
    relations: list[ExtractedRelation] = []
    for relation_item in response.relations:
        subject, predicate, obj = relation_item.subject.strip(), relation_item.predicate.strip(), relation_item.object.strip()
        if not (subject and predicate and obj):
            issues.append(f"dropped an incomplete relation ({subject!r}, {predicate!r}, {obj!r})")
            continue
        relations.append(
            ExtractedRelation(
                subject=subject,
                predicate=predicate,
                object=obj,
                subject_type=types.get(subject.casefold()),
                object_type=types.get(obj.casefold()),
                properties=dict(relation_item.properties),
            )
        )
    return ChunkExtraction(
        chunk_id=chunk_id, entities=entities, relations=relations, events=events, mode=mode, issues=issues
    )


class FullExtractor:
    """Extracts chunks with one ``generate_object`` call each.

    ``schema``: a resolved SPG schema (or its :class:`SchemaView`) for schema-constrained
    extraction, ``None`` for schema-free. ``language``: prompt language,
    ``auto`` detects it per chunk. ``max_splits``: how often a chunk whose reply is cut off at
    ``max_tokens`` is halved and extracted again (0: never). ``split_factless``: extract the halves
    of a chunk whose reply names :data:`FACTLESS_ENTITIES` or more entities but no relation or
    event, and merge what they add. ``reply_format``: how the model
    writes its reply (:data:`ReplyFormat`); both give the same kind of extraction. ``schema_fill``:
    with a schema, ask the relations of the entity a chunk is about as a form, in one more call
    (:mod:`~kag_neo4j.builder.extract.schema_fill`). Fatal model
    problems (model missing, bad configuration) raise; every other failure is recorded for its chunk.
    """

    def __init__(
        self,
        llm: LLM,
        *,
        schema: SchemaView | ResolvedSchema | None = None,
        language: LanguageChoice = "auto",
        max_tokens: int | None = 1024,
        max_splits: int = 2,
        reply_format: ReplyFormat = "rows",
        split_factless: bool = True,
        schema_fill: bool = True,
    ) -> None:
        if reply_format not in REPLY_FORMATS:
            raise ConfigError(f"unknown extraction reply format {reply_format!r}; choose one of {', '.join(REPLY_FORMATS)}")
        self.llm = llm
        self.reply_format = reply_format
        self._response_model: type[RowsExtractionResponse | ExtractionResponse] = (
            RowsExtractionResponse if reply_format == "rows" else ExtractionResponse
        )
        self.max_splits = max_splits
        self.split_factless = split_factless
        self.schema = schema_view(schema) if schema is not None else None
        self.language = language
        self.max_tokens = max_tokens
        self._listing = self.schema.listing() if self.schema is not None else None
        self.fill = SchemaFill(self.schema) if self.schema is not None and schema_fill else None

    def _language(self, chunk: ChunkRecord) -> Literal["en", "zh"]:
        return detect_language(chunk.text) if self.language == "auto" else self.language

    def messages(self, chunk: ChunkRecord) -> list:
        language = self._language(chunk)
        build = build_extract_rows_messages if self.reply_format == "rows" else build_extract_messages
        return build(
            chunk.text,
            title=chunk.title,
            title_path=chunk.title_path,
            language=language,
            schema_listing=self._listing,
        )

    def _finish(self, chunk: ChunkRecord, response: RowsExtractionResponse | ExtractionResponse) -> ChunkExtraction:
        issues = []
        if isinstance(response, RowsExtractionResponse):
            if response.short_rows:
                issues.append(f"dropped {response.short_rows} row(s) with fewer than three cells")
            response = response.expanded()
        extraction = response_to_extraction(chunk.id, response)
        extraction.issues[:0] = issues
        return schema_check(extraction, self.schema)

    def _split(self, chunk: ChunkRecord, exc: ModelError, splits_left: int) -> list[ChunkRecord]:
        """The two halves to extract instead of ``chunk``; raises when splitting cannot help."""
        parts = halves(chunk.text) if isinstance(exc, StructuredOutputError) and exc.truncated and splits_left else None
        if parts is None:
            raise ChunkExtractionError(chunk.id, str(exc)) from exc
        log.info("extraction of chunk %s was cut off at max_tokens; extracting it in two halves", chunk.id)
        return [chunk.model_copy(update={"text": part}) for part in parts]

    def _factless_halves(self, chunk: ChunkRecord, extraction: ChunkExtraction, splits_left: int) -> list[ChunkRecord]:
        """The halves to extract again when ``extraction``, of a whole chunk (not already a half),
        names entities but states no fact (``[]``: keep it as it is)."""
        factless = not extraction.relations and not extraction.events and len(extraction.entities) >= FACTLESS_ENTITIES
        whole = splits_left == self.max_splits > 0
        parts = halves(chunk.text) if self.split_factless and factless and whole else None
        if parts is None:
            return []
        log.info("extraction of chunk %s named %d entities and no fact; extracting its halves again",
                 chunk.id, len(extraction.entities))
        return [chunk.model_copy(update={"text": part}) for part in parts]

    @staticmethod
    def _with_halves(chunk_id: str, extraction: ChunkExtraction, done: list[ChunkExtraction]) -> ChunkExtraction:
        merged = merge_extractions(chunk_id, [extraction, *done])
        added = sum(len(part.relations) + len(part.events) for part in done)
        merged.issues.append(f"the reply stated no fact; its halves were extracted again and added {added}")
        return merged

    def _fill_request(self, chunk: ChunkRecord, extraction: ChunkExtraction) -> FillRequest | None:
        return self.fill.request(chunk, extraction, self._language(chunk)) if self.fill is not None else None

    def _fill_failed(self, extraction: ChunkExtraction, request: FillRequest, exc: ModelError) -> ChunkExtraction:
        log.warning("schema fill for %r failed: %s", request.entity.name, exc)
        issue = f"schema fill for {request.entity.name!r} failed ({exc}); the chunk's other facts stand"
        return extraction.model_copy(update={"issues": [*extraction.issues, issue]})

    def extract(self, chunk: ChunkRecord) -> ChunkExtraction:
        """One chunk, then its schema fill; raises :class:`ChunkExtractionError` when its output
        stays invalid."""
        extraction = self._extract(chunk, splits_left=self.max_splits)
        request = self._fill_request(chunk, extraction)
        if request is None or self.fill is None:
            return extraction
        try:
            response = self.llm.generate_object(request.messages, request.response_model, stage="extract-fill",
                                                max_tokens=FILL_MAX_TOKENS)
        except (ModelUnavailableError, ConfigError):
            raise
        except ModelError as exc:
            return self._fill_failed(extraction, request, exc)
        return self.fill.apply(chunk, extraction, request, response)

    async def aextract(self, chunk: ChunkRecord) -> ChunkExtraction:
        extraction = await self._aextract(chunk, splits_left=self.max_splits)
        request = self._fill_request(chunk, extraction)
        if request is None or self.fill is None:
            return extraction
        try:
            response = await self.llm.agenerate_object(request.messages, request.response_model,
                                                       stage="extract-fill", max_tokens=FILL_MAX_TOKENS)
        except (ModelUnavailableError, ConfigError):
            raise
        except ModelError as exc:
            return self._fill_failed(extraction, request, exc)
        return self.fill.apply(chunk, extraction, request, response)

    def _extract(self, chunk: ChunkRecord, *, splits_left: int) -> ChunkExtraction:
        try:
            response = self.llm.generate_object(
                self.messages(chunk), self._response_model, stage="extract", max_tokens=self.max_tokens
            )
        except (ModelUnavailableError, ConfigError):
            raise
        except ModelError as exc:
            parts = self._split(chunk, exc, splits_left)
            return merge_extractions(chunk.id, [self._extract(part, splits_left=splits_left - 1) for part in parts])
        extraction = self._finish(chunk, response)
        again = self._factless_halves(chunk, extraction, splits_left)
        if not again:
            return extraction
        try:
            done = [self._extract(part, splits_left=0) for part in again]
        except ChunkExtractionError:
            return extraction  # the halves failed: the reply's entities still stand
        return self._with_halves(chunk.id, extraction, done)

    async def _aextract(self, chunk: ChunkRecord, *, splits_left: int) -> ChunkExtraction:
        try:
            response = await self.llm.agenerate_object(
                self.messages(chunk), self._response_model, stage="extract", max_tokens=self.max_tokens
            )
        except (ModelUnavailableError, ConfigError):
            raise
        except ModelError as exc:
            parts = self._split(chunk, exc, splits_left)
            done = [await self._aextract(part, splits_left=splits_left - 1) for part in parts]
            return merge_extractions(chunk.id, done)
        extraction = self._finish(chunk, response)
        again = self._factless_halves(chunk, extraction, splits_left)
        if not again:
            return extraction
        try:
            done = [await self._aextract(part, splits_left=0) for part in again]
        except ChunkExtractionError:
            return extraction  # the halves failed: the reply's entities still stand
        return self._with_halves(chunk.id, extraction, done)

    def extract_many(
        self,
        chunks: Iterable[ChunkRecord],
        *,
        on_result: Callable[[str, ChunkExtraction | ExtractionFailure], None] | None = None,
    ) -> ExtractionResult:
        """Every chunk in order; failures are recorded, not raised."""
        batch = ExtractionResult()
        for chunk in chunks:
            result: ChunkExtraction | ExtractionFailure
            try:
                extraction = self.extract(chunk)
                batch.extractions.append(extraction)
                result = extraction
            except ChunkExtractionError as exc:
                log.warning("extraction failed for chunk %s: %s", chunk.id, exc.reason)
                failure = ExtractionFailure(chunk_id=chunk.id, reason=exc.reason)
                batch.failures.append(failure)
                result = failure
            if on_result is not None:
                on_result(chunk.id, result)
        return batch

    async def aextract_many(self, chunks: Sequence[ChunkRecord]) -> ExtractionResult:
        """Concurrently (the LLM bounds its own concurrency); results keep the input order."""

        async def one(chunk: ChunkRecord) -> ChunkExtraction | ExtractionFailure:
            try:
                return await self.aextract(chunk)
            except ChunkExtractionError as exc:
                log.warning("extraction failed for chunk %s: %s", chunk.id, exc.reason)
                return ExtractionFailure(chunk_id=chunk.id, reason=exc.reason)

        results = await asyncio.gather(*(one(chunk) for chunk in chunks))
        batch = ExtractionResult()
        for result in results:
            if isinstance(result, ExtractionFailure):
                batch.failures.append(result)
            else:
                batch.extractions.append(result)
        return batch

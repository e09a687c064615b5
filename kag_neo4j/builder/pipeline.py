"""The KAG-Builder pipeline: read -> split -> extract -> normalise -> align -> vectorise -> write.

    from kag_neo4j.builder.pipeline import LoadOptions, load
    summary = load(["corpus.json"], db, settings, LoadOptions(mode="light"))
    print(summary.documents_loaded, summary.merged, summary.chunks_per_second)

How a load proceeds, under the builder lease (:mod:`kag_neo4j.builder.lease`: one load or
delete at a time; a second one waits, then is refused), per group of documents (in input order):

1. **Skip / replace / resume.** The stored ``Document.sha256`` and ``status`` are read. A
   complete document with the same hash is skipped (no extraction, no model call). A document
   whose hash changed, or whose previous load did not finish (``status = 'loading'``), is
   loaded again and replaces the stored version - but only after its new version exists:
2. **Split, extract, normalise** (the extractor of ``mode``; ``light`` needs no LLM), then the
   taxonomy's concept names found in each chunk are added as entities. Nothing is written
   yet, so a model endpoint that refuses every call (wrong key, URL or model, nothing
   listening: :class:`~kag_neo4j.errors.ModelEndpointError`) stops the load with every stored
   document intact. A changed document some of whose chunks failed keeps its complete old
   version (``documents_kept``; a re-run retries).
3. **Replace:** the texts to embed are embedded (an embedder failure also stops here), then the
   stored versions are deleted (:mod:`kag_neo4j.builder.delete`, one transaction each).
4. **Align** each document, **resolve** the group against the graph (exact ids, aliases,
   embeddings), **vectorise** chunks, new entities and concepts (cached).
5. **Write** in transactions of at most ``batch_size`` chunks; a document is marked complete in
   the transaction that writes its last chunk, so a crash or Ctrl-C loses at most the
   transaction in flight and a re-run redoes exactly the unfinished documents.
6. **Rules:** after the last write, the registered rules (``kag-neo4j rules apply``) whose
   inputs the load touched are re-applied in one transaction (:mod:`kag_neo4j.rules.refresh`).

``Document.status`` is ``'loading'`` from the first transaction that writes a version of the
document until the transaction that writes its last chunk sets ``'complete'`` (a document
with failed chunks stays ``'loading'``); retrieval shows only complete documents. A crash
between step 3 and 5 leaves a replaced document absent (not half-written) until the re-run.

Every transaction that changes the knowledge graph - writes, deletes, the taxonomy - increments
the graph version (``(:KagMeta {key: 'graph'}).version``) itself, so a GDS projection named
after an older version is never reused after a crash. A :class:`LoadSummary` reports documents,
chunks, entities, relations, merges, model calls, tokens and seconds.
"""

from __future__ import annotations

import logging
import resource
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from kag_neo4j.builder.alignment import Aligner
from kag_neo4j.builder.aligned_document import AlignedDocument
from kag_neo4j.builder.concepts import Taxonomy, concept_id, inject_mentions
from kag_neo4j.builder.delete import delete_document
from kag_neo4j.builder.extract import (
    DocumentExtractor,
    ExtractFunction,
    Extraction,
    ExtractionResult,
    as_document_extractor,
    spo_names,
)
from kag_neo4j.builder.graph_lookup import GraphLookup
from kag_neo4j.builder.names import name_key
from kag_neo4j.builder.lease import builder_lease
from kag_neo4j.builder.readers.common import ReadOptions
from kag_neo4j.builder.records import ChunkExtraction, ChunkRecord, SourceDocument
from kag_neo4j.builder.resolution import Resolver
from kag_neo4j.builder.vectorise import VectorCache, Vectoriser
from kag_neo4j.builder.write import (
    GraphWriter,
    WriteStats,
    graph_counts,
)
from kag_neo4j.config import Settings
from kag_neo4j.errors import BuilderError
from kag_neo4j.models.base import LLM, Accounted, Embedder
from kag_neo4j.rules.footprint import TAXONOMY, Footprint, document_footprint
from kag_neo4j.rules.refresh import RefreshReport, graph_version, refresh_after_change
from kag_neo4j.schema.constraints import ConstraintViolation
from kag_neo4j.schema.models import ResolvedSchema
from kag_neo4j.store.cypher import query
from kag_neo4j.store.database import Database

log = logging.getLogger(__name__)

Mode = Literal["full", "light"]
#: chunks per extraction group in full mode (a write transaction at least this often)
FULL_GROUP = 16
#: constraint violations a load summary lists (all are counted)
VIOLATION_SAMPLES = 200


class LoadOptions(BaseModel):
    """How to load (the ``kag-neo4j load`` flags)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    mode: Mode = "full"
    #: chunks per write transaction (and per extraction/alignment group)
    batch_size: int = Field(default=500, ge=1, le=100_000)
    #: the SPG schema extraction and alignment follow (None: schema-free)
    spg_schema: ResolvedSchema | None = None
    taxonomy: Taxonomy | None = None
    #: cosine similarity an embedding-based entity merge needs (None: no embedding merges)
    similarity: float | None = Field(default=0.92, gt=0.0, le=1.0)
    max_chars: int = Field(default=1200, ge=50)
    overlap: int = Field(default=150, ge=0)
    #: show a rich progress bar (on a terminal)
    progress: bool = False
    #: re-load documents even when their hash is unchanged
    force: bool = False
    #: a structured row's reference to a record the load lacks: ``skip`` the relation (reported)
    #: or ``create`` a bare node of the target type with that id (reported too)
    dangling: Literal["skip", "create"] = "skip"


class LoadSummary(BaseModel):
    """What a load did."""

    documents_seen: int = 0
    documents_loaded: int = 0
    documents_skipped: int = 0
    documents_replaced: int = 0
    documents_resumed: int = 0
    documents_incomplete: int = 0
    #: changed documents whose new version had extraction failures: the stored version was kept
    documents_kept: int = 0
    chunks: int = 0
    entity_mentions: int = 0
    entities_new: int = 0
    merged: int = 0
    alias_merges: int = 0
    similarity_merges: int = 0
    mentions: int = 0
    relations: int = 0
    events: int = 0
    concept_links: int = 0
    taxonomy_concepts: int = 0
    transactions: int = 0
    llm_calls: int = 0
    llm_cache_hits: int = 0
    tokens: int = 0
    embedded_texts: int = 0
    embedding_cache_hits: int = 0
    extraction_failures: int = 0
    #: files refused by their reader, as ``path: reason`` (the rest of the input loads)
    read_failures: list[str] = Field(default_factory=list)
    #: files a folder load left out (no reader for their type), as ``path: reason``
    read_skipped: list[str] = Field(default_factory=list)
    #: files read with a caveat (not UTF-8, broken JSON lines, ragged CSV rows...)
    read_warnings: list[str] = Field(default_factory=list)
    issues: int = 0
    issue_samples: list[str] = Field(default_factory=list)
    #: values left out because they break the schema's constraints (NotNull: records written without)
    constraint_violations: int = 0
    #: the first violations, each with file and row (or chunk), type, property, value and constraint
    violations: list[ConstraintViolation] = Field(default_factory=list)
    #: structured rows' references no record of the load matched, per ``file: Type.column -> Target``
    dangling_references: dict[str, int] = Field(default_factory=dict)
    #: the first of them, one line each (file, row, column, reference)
    dangling_samples: list[str] = Field(default_factory=list)
    #: ``S,P,O`` rows the schema could not fully type (kept as open facts), per file
    open_facts: dict[str, int] = Field(default_factory=dict)
    #: the first of them, one line each (file, row, what stayed untyped and why)
    open_fact_samples: list[str] = Field(default_factory=list)
    #: concept tables loaded as taxonomies (ConceptType CSVs), and their concepts written
    concept_tables: int = 0
    seconds: float = 0.0
    write_seconds: float = 0.0
    peak_rss_mb: float = 0.0
    interrupted: bool = False
    graph_version: int | None = None
    graph: dict[str, int] = Field(default_factory=dict)
    #: the registered rules re-applied after the load (None: no rule set is registered)
    rules: RefreshReport | None = None

    @property
    def facts(self) -> int:
        return self.mentions + self.relations

    @property
    def chunks_per_second(self) -> float:
        return self.chunks / self.seconds if self.seconds > 0 else 0.0

    @property
    def changed(self) -> bool:
        return self.documents_loaded > 0 or self.documents_replaced > 0 or self.documents_resumed > 0 \
            or self.taxonomy_concepts > 0

    def rows(self) -> list[tuple[str, str]]:
        """(label, value) pairs for a summary table."""
        rows = [
            ("documents", (f"{self.documents_loaded} loaded, {self.documents_skipped} unchanged (skipped), "
                           f"{self.documents_replaced} replaced, {self.documents_resumed} resumed"
                           + (f", {self.documents_incomplete} incomplete" if self.documents_incomplete else ""))),
            ("chunks", str(self.chunks)),
            ("entities", f"{self.entities_new} new from {self.entity_mentions} mentions"),
            ("merges", (f"{self.merged} mentions merged into existing entities "
                        f"({self.alias_merges} by alias, {self.similarity_merges} by embedding)")),
            ("relations", (f"{self.relations} facts written, {self.mentions} MENTIONED_IN, "
                           f"{self.concept_links} BELONGS_TO, {self.events} events")),
            ("model calls", (f"{self.llm_calls} LLM ({self.llm_cache_hits} cached), {self.embedded_texts} texts "
                             f"embedded ({self.embedding_cache_hits} cached)")),
            ("tokens", str(self.tokens)),
            ("seconds", f"{self.seconds:.1f} ({self.chunks_per_second:.1f} chunks/s; writing {self.write_seconds:.1f})"),
            ("peak memory", f"{self.peak_rss_mb:.0f} MB"),
        ]
        if self.taxonomy_concepts:
            rows.insert(1, ("taxonomy", f"{self.taxonomy_concepts} concepts"))
        if self.extraction_failures:
            failed = f"{self.extraction_failures} chunks (their documents stay incomplete; re-run to retry)"
            if self.documents_kept:
                failed += f"; {self.documents_kept} changed documents keep their previous version"
            rows.append(("extraction failures", failed))
        if self.read_failures:
            rows.append(("unreadable files", str(len(self.read_failures))))
        if self.constraint_violations:
            rows.append(("constraint violations", f"{self.constraint_violations} (values not written)"))
        if self.issues:
            rows.append(("issues", f"{self.issues} (off-schema types/relations, dropped properties)"))
        if self.dangling_references:
            total = sum(self.dangling_references.values())
            rows.append(("dangling references", f"{total}: " + ", ".join(
                f"{where} {count}" for where, count in sorted(self.dangling_references.items()))))
        if self.open_facts:
            total = sum(self.open_facts.values())
            rows.append(("open facts", f"{total} S,P,O rows the schema cannot type: " + ", ".join(
                f"{where} {count}" for where, count in sorted(self.open_facts.items()))))
        if self.graph:
            rows.append(("graph", ", ".join(f"{k} {v}" for k, v in self.graph.items())))
        if self.rules is not None:
            rows.append(("rules", self.rules.describe()))
        return rows


def peak_rss_mb() -> float:
    """Peak resident memory of this process, in MB (Linux reports KB, macOS bytes)."""
    import sys

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


# --------------------------------------------------------------------------- extractors


def build_extractor(
    mode: Mode,
    settings: Settings,
    *,
    schema: ResolvedSchema | None = None,
    llm: LLM | None = None,
    dangling: Literal["skip", "create"] = "skip",
) -> tuple[DocumentExtractor, LLM | None]:
    """The extractor for ``mode`` and the LLM it uses (``None`` in light mode)."""
    if mode not in ("full", "light"):
        raise BuilderError(f"unknown mode {mode!r}; use --mode full or --mode light")
    if mode == "full" and llm is None:
        from kag_neo4j.models import build_llm

        llm = build_llm(settings)
    extraction = Extraction(
        mode=mode, llm=llm if mode == "full" else None, schema=schema, dangling=dangling,
        reply_format=settings.extract_format, schema_fill=settings.extract_schema_fill,
    )
    return extraction, llm


def _normalise(extraction: ChunkExtraction) -> ChunkExtraction:
    from kag_neo4j.builder.normalise import normalise_extraction

    return normalise_extraction(extraction)


# --------------------------------------------------------------------------- the pipeline


def _groups(documents: Iterable[SourceDocument], size: int) -> Iterator[list[SourceDocument]]:
    group: list[SourceDocument] = []
    for document in documents:
        group.append(document)
        if len(group) >= size:
            yield group
            group = []
    if group:
        yield group


def _chunk_groups(
    items: Sequence[tuple[SourceDocument, list[ChunkRecord]]], budget: int
) -> Iterator[list[tuple[SourceDocument, list[ChunkRecord]]]]:
    group: list[tuple[SourceDocument, list[ChunkRecord]]] = []
    size = 0
    for item in items:
        if group and size + len(item[1]) > budget:
            yield group
            group, size = [], 0
        group.append(item)
        size += len(item[1])
    if group:
        yield group


class Pipeline:
    """One load; see :func:`load`. Kept as a class so tests and the CLI can reach its parts."""

    def __init__(
        self,
        db: Database,
        settings: Settings,
        options: LoadOptions,
        *,
        extractor: DocumentExtractor | ExtractFunction | None = None,
        embedder: Embedder | None = None,
        llm: LLM | None = None,
        after_write: Callable[[LoadSummary], None] | None = None,
    ) -> None:
        self.db = db
        self.settings = settings
        self.options = options
        self.summary = LoadSummary()
        self.after_write = after_write
        self.llm = llm
        if extractor is None:
            extractor, self.llm = build_extractor(options.mode, settings, schema=options.spg_schema, llm=llm,
                                                  dangling=options.dangling)
        self.extractor = as_document_extractor(extractor)
        if embedder is None:
            from kag_neo4j.models import build_embedder

            embedder = build_embedder(settings)
        self.embedder = embedder
        cache = None if settings.no_cache else VectorCache(settings.home / "cache" / "vectors.sqlite")
        self.vectoriser = Vectoriser(embedder, cache)
        self.aligner = Aligner(options.spg_schema, options.taxonomy, concept_links_from_types=options.mode != "light")
        self.resolver = Resolver(GraphLookup(db), self.vectoriser.embed, similarity=options.similarity)
        #: one load or delete at a time; every write transaction of this load renews it
        self.lease = builder_lease(db, "`kag-neo4j load`", settings)
        self.writer = GraphWriter(db, batch_size=options.batch_size, after_slice=self._written, lease=self.lease)
        self._progress: Any = None
        self._task: Any = None
        #: what this load changed, for re-applying the registered rules at its end
        self._written_ids: list[str] = []
        self._deleted = Footprint()

    # ------------------------------------------------------------------ progress
    def _written(self, stats: WriteStats) -> None:
        self.summary.transactions += stats.transactions
        self.summary.chunks += stats.chunks
        self.summary.mentions += stats.mentions
        self.summary.relations += stats.relations
        self.summary.events += stats.events
        self.summary.concept_links += stats.concept_links
        self.summary.write_seconds += stats.seconds
        if self._progress is not None:
            self._progress.update(self._task, advance=stats.documents,
                                  description=f"loading ({self.summary.chunks} chunks)")
        if self.after_write is not None:
            self.after_write(self.summary)

    def _skip_progress(self, count: int) -> None:
        if self._progress is not None and count:
            self._progress.update(self._task, advance=count)

    # ------------------------------------------------------------------ steps
    def prepare(self) -> None:
        """Migrations (idempotent), the schema's meta-graph and indexes, the taxonomy."""
        from kag_neo4j.store import migrations

        migrations.migrate(self.db, embedding_dimension=self.embedder.dimension)
        if self.options.spg_schema is not None:
            from kag_neo4j.schema.apply import apply_schema, needs_dimensions

            dims = self.embedder.dimension if needs_dimensions(self.options.spg_schema) else None
            apply_schema(self.db, self.options.spg_schema, dimensions=dims)
        taxonomy = self.options.taxonomy
        if taxonomy is not None:
            self.summary.taxonomy_concepts = self.writer.write_taxonomy(taxonomy, self.vectoriser.taxonomy_vectors)
            if self.summary.taxonomy_concepts:
                self._note_version(self.writer.version)

    def _statuses(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        rows = self.db.read(query("builder/document_status"), ids=ids)
        return {row["id"]: row for row in rows}

    def _extract_all(self, items: list[tuple[SourceDocument, list[ChunkRecord]]]) -> list[ExtractionResult]:
        if self.extractor.batches:
            return self.extractor.extract_documents(items)  # e.g. NER batches all chunks of the group in one pass
        results = []
        for doc, chunks in items:  # one document at a time, so the progress bar moves with the LLM
            if self._progress is not None:
                self._progress.update(self._task, description=f"extracting {doc.title[:30]} ({len(chunks)} chunks)")
            results.append(self.extractor.extract_document(doc, chunks) if chunks else ExtractionResult())
        return results

    def _finish_extraction(self, chunks: list[ChunkRecord], result: ExtractionResult) -> tuple[list[ChunkExtraction], dict[str, str]]:
        text_of = {chunk.id: chunk.text for chunk in chunks}
        taxonomy = self.options.taxonomy
        extractions = []
        for extraction in result.extractions:
            if not result.normalised:
                extraction = _normalise(extraction)
            if taxonomy is not None and extraction.chunk_id in text_of:
                extraction = inject_mentions(extraction, text_of[extraction.chunk_id], taxonomy)
            extractions.append(extraction)
        return extractions, result.failure_reasons()

    def _process(self, items: list[tuple[SourceDocument, list[ChunkRecord]]], stored: dict[str, dict[str, Any]]) -> None:
        """Extract, align, replace, resolve, embed and write one group. Extraction comes first and
        changes nothing: a fatal model error (:class:`~kag_neo4j.errors.ModelEndpointError`) raised
        here leaves every stored document as it was."""
        aligned: list[AlignedDocument] = []
        for (document, chunks), result in zip(items, self._extract_all(items)):
            extractions, failures = self._finish_extraction(chunks, result)
            self.summary.extraction_failures += len(failures)
            if failures and stored.get(document.id, {}).get("status") == "complete":
                # the new version is incomplete: keep the complete old one; a re-run retries
                self.summary.documents_kept += 1
                self.summary.documents_incomplete += 1
                continue
            doc = self.aligner.align_document(document, chunks, extractions)
            doc.failed_chunks = sorted(failures)
            self._note_issues(doc.issues)
            self._note_violations(doc.violations)
            self._note_dangling(doc)
            self._note_open_facts(doc)
            aligned.append(doc)
        self._replace(aligned, stored)
        stats = self.resolver.resolve(aligned)
        self.summary.entity_mentions += stats.entity_records
        self.summary.entities_new += stats.new_entities
        self.summary.merged += stats.merged
        self.summary.alias_merges += stats.alias_merges
        self.summary.similarity_merges += stats.similarity_merges
        self.vectoriser.vectorise(aligned)
        self.writer.write(aligned)
        self._written_ids.extend(doc.id for doc in aligned)
        self._note_version(self.writer.version)
        self.summary.documents_incomplete += sum(1 for doc in aligned if doc.failed_chunks)

    def _note_dangling(self, doc: AlignedDocument) -> None:
        for reference in doc.dangling:
            where = f"{Path(reference.source).name}: {reference.column} -> {reference.target_type}" + \
                (" (created)" if reference.created else "")
            self.summary.dangling_references[where] = self.summary.dangling_references.get(where, 0) + 1
            if len(self.summary.dangling_samples) < 20:
                self.summary.dangling_samples.append(str(reference))

    def _note_open_facts(self, doc: AlignedDocument) -> None:
        for row in doc.open_facts:
            where = Path(row.source).name
            self.summary.open_facts[where] = self.summary.open_facts.get(where, 0) + 1
            if len(self.summary.open_fact_samples) < 20:
                self.summary.open_fact_samples.append(str(row))

    def _known_names(self, documents: Sequence[SourceDocument]) -> None:
        """The typed records and concepts already in the graph that the names of the load's
        ``S,P,O`` tables may denote, for the built-in extractor's typing of those rows."""
        if self.options.spg_schema is None or not isinstance(self.extractor, Extraction):
            return
        names = {name for document in documents for name in spo_names(document)}
        keys = sorted({key for key in map(name_key, names) if key})
        if not keys:
            return
        for row in GraphLookup(self.db).known_records(keys, [concept_id(key) for key in keys]):
            self.extractor.index.add_known(row["type"], row["id"], row["name"])

    def _concept_tables(self, documents: list[SourceDocument]) -> list[SourceDocument]:
        """Write the load's concept tables (ConceptType CSVs) as taxonomies; the other documents."""
        from kag_neo4j.builder.concept_tables import concept_taxonomy, concept_type

        rest = []
        for document in documents:
            label = concept_type(document, self.options.spg_schema)
            if label is None:
                rest.append(document)
                continue
            taxonomy = concept_taxonomy(document, label)
            self.summary.concept_tables += 1
            self.summary.taxonomy_concepts += self.writer.write_taxonomy(taxonomy, self.vectoriser.taxonomy_vectors,
                                                                         document_id=document.id)
            self._note_version(self.writer.version)
        return rest

    def _ordered(self, documents: list[SourceDocument]) -> list[SourceDocument]:
        """Update files (``CompanyUpdate.csv``) after every other document, so their values win."""
        from kag_neo4j.builder.extract.schema_view import schema_view
        from kag_neo4j.builder.extract.structured import update_target

        view = schema_view(self.options.spg_schema) if self.options.spg_schema is not None else None
        updates = [doc for doc in documents if doc.records and update_target(doc, view) is not None]
        if not updates:
            return documents
        return [doc for doc in documents if doc not in updates] + updates

    def _note_version(self, version: int | None) -> None:
        if version is not None:
            self.summary.graph_version = version

    def _note_violations(self, violations: list[ConstraintViolation]) -> None:
        self.summary.constraint_violations += len(violations)
        room = VIOLATION_SAMPLES - len(self.summary.violations)
        if room > 0:
            self.summary.violations.extend(violations[:room])

    def _note_issues(self, issues: list[str]) -> None:
        self.summary.issues += len(issues)
        room = 20 - len(self.summary.issue_samples)
        if room > 0:
            self.summary.issue_samples.extend(issues[:room])

    def run(self, documents: Iterable[SourceDocument], *, total: int | None = None) -> LoadSummary:
        began = time.perf_counter()
        completed = False
        try:
            with self._progress_bar(total) as progress, self.lease:
                self._progress = progress
                since = graph_version(self.db)  # the version this load starts from (for the rules, below)
                self.prepare()
                if isinstance(documents, Sequence):
                    self.extractor.register(documents)
                    self._known_names(documents)
                    if self.options.spg_schema is not None:
                        documents = self._ordered(self._concept_tables(list(documents)))
                for group in _groups(documents, self.options.batch_size):
                    self._run_group(group)
                # ── derived facts follow the load: re-apply the registered rules it touched
                self.summary.rules = self._refresh_rules(since)
            completed = True
        except KeyboardInterrupt:
            self.summary.interrupted = True
            raise
        finally:
            self._progress = None
            self.summary.seconds = time.perf_counter() - began
            # after a failure the database may be gone: counting would only wait out its retries
            self._finish(count_graph=completed or self.summary.interrupted)
        return self.summary

    def _run_group(self, group: list[SourceDocument]) -> None:
        self.summary.documents_seen += len(group)
        statuses = self._statuses([doc.id for doc in group])
        todo: list[tuple[SourceDocument, list[ChunkRecord]]] = []
        stored: dict[str, dict[str, Any]] = {}
        skipped = 0
        for document in group:
            found = statuses.get(document.id)
            if found is not None:
                unchanged = found.get("sha256") == document.sha256
                if unchanged and found.get("status") == "complete" and not self.options.force:
                    skipped += 1
                    continue
                stored[document.id] = found  # replaced only once its new version is extracted
            else:
                self.summary.documents_loaded += 1
            todo.append((document, self._split(document)))
        self.summary.documents_skipped += skipped
        self._skip_progress(skipped)
        # full extraction is slow (one LLM call per chunk): write small groups so a crash loses little
        budget = self.options.batch_size if self.options.mode == "light" else min(self.options.batch_size, FULL_GROUP)
        for part in _chunk_groups(todo, budget):
            self._process(part, stored)

    def _replace(self, aligned: list[AlignedDocument], stored: dict[str, dict[str, Any]]) -> None:
        """Delete the stored versions of ``aligned`` documents (one transaction each, under the
        lease) once their new versions are extracted and embedded, so that the new versions
        resolve against the graph a clean load would see."""
        replacing = [doc for doc in aligned if doc.id in stored]
        if not replacing:
            return
        self.vectoriser.warm(aligned)  # an embedder failure stops here, before anything is deleted
        for doc in replacing:
            report = delete_document(self.db, doc.id, lease=self.lease, refresh_rules=False)
            self._deleted |= report.footprint
            self._note_version(report.graph_version)
            if stored[doc.id].get("sha256") == doc.document.sha256:
                self.summary.documents_resumed += 1
            else:
                self.summary.documents_replaced += 1

    def _refresh_rules(self, since: int) -> RefreshReport | None:
        """Re-apply the registered rules this load touched (after its last commit; see
        :mod:`kag_neo4j.rules.refresh`): what the replaced versions and the written documents
        mention, and the concept hierarchy when the taxonomy changed."""
        change = self._deleted | self.db.read_tx(lambda tx: document_footprint(tx, self._written_ids))
        if self.summary.taxonomy_concepts:
            change |= TAXONOMY
        return refresh_after_change(self.db, change, since=since, lease=self.lease)

    def _split(self, document: SourceDocument) -> list[ChunkRecord]:
        from kag_neo4j.builder.split import split_document

        return split_document(document, max_chars=self.options.max_chars,
                              overlap=min(self.options.overlap, self.options.max_chars // 2))

    def _progress_bar(self, total: int | None) -> Any:
        if not self.options.progress:
            return nullcontext(None)
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("docs"),
                            TimeElapsedColumn(), TimeRemainingColumn(), transient=False)
        self._task = progress.add_task("loading", total=total)
        return progress

    def _finish(self, *, count_graph: bool) -> None:
        if isinstance(self.llm, Accounted):  # the models layer's declared usage ledger
            total = self.llm.usage.total()
            self.summary.llm_calls = total.calls
            self.summary.llm_cache_hits = total.cache_hits
            self.summary.tokens = total.total_tokens
        self.summary.embedded_texts = self.vectoriser.stats.computed
        self.summary.embedding_cache_hits = self.vectoriser.stats.cached
        self.summary.peak_rss_mb = peak_rss_mb()
        if count_graph:
            try:
                self.summary.graph = graph_counts(self.db)
            except Exception as exc:  # noqa: BLE001 - the summary must not hide the load's own error
                log.warning("could not read graph counts after the load: %s", exc)
        self.vectoriser.close()


def with_schema_types(read_options: ReadOptions | None, schema: ResolvedSchema | None) -> ReadOptions:
    """``read_options`` that also know the schema's type names (see :class:`ReadOptions`)."""
    read_options = read_options or ReadOptions()
    if schema is None:
        return read_options
    return read_options.model_copy(update={"schema_types": frozenset(t.name for t in schema.types)})


def read_documents(
    paths: Sequence[str | Path], summary: LoadSummary | None = None, options: ReadOptions | None = None
) -> list[SourceDocument]:
    """Every document of ``paths`` (files or folders); unreadable files are noted in ``summary``
    (each with its reason) and the others are read. Raises :class:`BuilderError` only when no
    file at all could be read."""
    from kag_neo4j.builder.readers import ReadReport, read_paths

    for path in paths:
        if not Path(path).exists():
            raise BuilderError(f"{path} does not exist; give a file or folder to load")
    report = ReadReport()
    documents = list(read_paths(paths, options=options, report=report))
    if summary is not None:
        summary.read_failures = [f"{f.path}: {f.reason}" for f in report.failures]
        summary.read_skipped = [f"{f.path}: {f.reason}" for f in report.skipped]
        summary.read_warnings = list(report.warnings)
    if not documents and report.failures:
        raise BuilderError("no document could be read:\n" + "\n".join(f"  {f.path}: {f.reason}" for f in report.failures))
    return documents


def load(
    paths: Sequence[str | Path],
    db: Database,
    settings: Settings,
    options: LoadOptions | None = None,
    *,
    documents: Iterable[SourceDocument] | None = None,
    extractor: DocumentExtractor | ExtractFunction | None = None,
    embedder: Embedder | None = None,
    llm: LLM | None = None,
    after_write: Callable[[LoadSummary], None] | None = None,
    read_options: ReadOptions | None = None,
) -> LoadSummary:
    """Load files (or ready ``documents``) into the graph; see the module docs. ``read_options``:
    how files are read (``--type``, ``--csv-mode``, ``--mapping``); the schema's type names are
    added (a table named after a schema type is read as records)."""
    options = options or LoadOptions()
    pipeline = Pipeline(db, settings, options, extractor=extractor, embedder=embedder, llm=llm,
                        after_write=after_write)
    if documents is None:
        docs = read_documents(paths, pipeline.summary, with_schema_types(read_options, options.spg_schema))
    else:
        docs = list(documents)
    return pipeline.run(docs, total=len(docs))

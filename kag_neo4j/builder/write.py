"""The writer: aligned documents -> Neo4j, in batched ``UNWIND ... MERGE`` transactions.

* One write transaction per *slice* of at most ``batch_size`` chunks (a slice may hold many
  small documents, or part of a large one). Inside it, one ``UNWIND`` statement per kind of
  row: documents, entities (one templated statement per label set), events, chunks with their
  ``MENTIONED_IN`` edges, the title anchors (``TITLE_ANCHOR``) of those chunks and entities, ``NEXT``, facts
  (one per relationship type), concepts, concept links.
  The rows of the next slice are built in a thread while a transaction runs; rows that would
  change nothing (an entity already written with the same names and labels) are not sent.
* Idempotent: nodes and edges are ``MERGE``\\ d on their keys; provenance lists (``chunk_ids``,
  ``doc_ids``) and aliases are set unions; mention counts are set, not added. Writing the same
  rows twice changes nothing.
* Checkpoint: a document is written with ``status = 'loading'`` and marked ``'complete'`` in
  the same transaction as its last chunk, so after a crash a re-run knows exactly which
  documents to redo.
* Every transaction also increments the graph version ``(:KagMeta {key: 'graph'}).version``
  (:func:`mark_changed`), so a killed load cannot leave a GDS projection named after an older
  graph; and, when the writer holds the builder lease, renews it first
  (:meth:`kag_neo4j.store.lease.Lease.fence`: a lost lease rolls the transaction back).
* No silent drops: before the edge statements ``MATCH`` their endpoints, the writer checks that
  every endpoint it sends is in the graph (:func:`check_endpoints`); a missing one raises
  :class:`~kag_neo4j.errors.BuilderError` and the transaction writes nothing.
* Labels and relationship types only enter Cypher through :func:`kag_neo4j.store.cypher.render`,
  which validates them with :func:`~kag_neo4j.store.identifiers.check_identifier` (the templates
  backtick-quote them); a schema label or relationship type that is one of kag-neo4j's own
  (``:Chunk`` on an entity, a ``CITES`` fact) is refused before the slice's transaction commits.
"""

from __future__ import annotations

import functools
import gc
import hashlib
import json
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from kag_neo4j.builder.aligned_document import (
    CONCEPT,
    ENTITY,
    EVENT,
    AlignedDocument,
    EntityNode,
    EventNode,
    FactEdge,
)
from kag_neo4j.builder.concepts import Taxonomy
from kag_neo4j.builder.names import name_key
from kag_neo4j.builder.records import ChunkRecord
from kag_neo4j.builder.tally import Tally
from kag_neo4j.errors import BuilderError, InvalidIdentifierError
from kag_neo4j.store.cypher import query, render
from kag_neo4j.store.database import Database, Transaction
from kag_neo4j.store.identifiers import is_reserved_label, is_reserved_relationship_type
from kag_neo4j.store.lease import Lease

_LABEL_OF_KIND = {ENTITY: "Entity", EVENT: "Event", CONCEPT: "Concept"}


@dataclass
class WriteStats(Tally):
    """What the writer sent (rows, not graph deltas: re-sent rows count again)."""

    transactions: int = 0
    documents: int = 0
    chunks: int = 0
    entities: int = 0
    events: int = 0
    mentions: int = 0
    relations: int = 0
    concept_links: int = 0
    seconds: float = 0.0

    @property
    def facts(self) -> int:
        """Mentions plus relations: the edges that carry knowledge."""
        return self.mentions + self.relations



@dataclass
class _Slice:
    """The part of a batch that one transaction writes."""

    docs: list[AlignedDocument] = field(default_factory=list)
    chunks: list[tuple[AlignedDocument, ChunkRecord]] = field(default_factory=list)
    complete: list[str] = field(default_factory=list)


def slices(documents: Sequence[AlignedDocument], batch_size: int) -> Iterator[_Slice]:
    """Cut documents into slices of at most ``batch_size`` chunks (documents stay in order)."""
    current = _Slice()
    for doc in documents:
        if not doc.chunks:
            current.docs.append(doc)
            if not doc.failed_chunks:
                current.complete.append(doc.id)
            continue
        for number, chunk in enumerate(doc.chunks):
            if len(current.chunks) >= batch_size:
                yield current
                current = _Slice()
            if not current.docs or current.docs[-1] is not doc:
                current.docs.append(doc)
            current.chunks.append((doc, chunk))
            if number == len(doc.chunks) - 1 and not doc.failed_chunks:
                current.complete.append(doc.id)
    if current.docs:
        yield current


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector: building rows allocates many small objects while
    millions of aligned objects are alive, and every full collection would walk all of them."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _union(target: list[str], items: Sequence[str]) -> None:
    for item in items:
        if item not in target:
            target.append(item)


class _EntityRow:
    """One entity's row in a slice, combined over the documents of the slice that mention it."""

    __slots__ = ("description", "embedding", "labels", "names", "node", "overwrite", "properties", "seen",
                 "semantic_type")

    def __init__(self, node: EntityNode) -> None:
        self.node = node
        self.seen = {id(node)}
        self.names: list[str] = []
        self.labels: set[str] = set(node.labels)
        self.properties = dict(node.properties)
        self.description = node.description
        self.semantic_type = node.semantic_type
        self.embedding = None if node.existing else node.embedding
        self.overwrite = node.overwrite

    def merge(self, node: EntityNode) -> None:
        self.labels.update(node.labels)
        for key, value in node.properties.items():
            if node.overwrite:  # an update file's values replace what earlier rows said
                self.properties[key] = value
            else:
                self.properties.setdefault(key, value)
        self.overwrite = self.overwrite or node.overwrite
        self.description = self.description or node.description
        self.semantic_type = self.semantic_type or node.semantic_type
        if self.embedding is None and not node.existing:
            self.embedding = node.embedding

    def add_names(self, names: Sequence[str]) -> None:
        _union(self.names, names)

    def news(self, sent: dict[str, tuple[set[str], set[str]]]) -> bool:
        """Whether this row adds anything to the node as written before (``sent`` is updated).

        ``sent`` maps ids written earlier in this load to the names and labels sent for them. A
        row for a node that exists - in the graph, or from an earlier transaction of this load -
        and carries no new alias, label, property or description changes nothing.
        """
        node = self.node
        known = sent.get(node.id)
        if known is None:
            sent[node.id] = ({node.name, *self.names}, set(self.labels))
            if not node.existing:
                return True  # the first row of a new node creates it
            return bool(set(self.names) - {node.name} or self.labels or self.properties or self.description
                        or self.semantic_type)
        names, labels = known
        new = bool(set(self.names) - names or self.labels - labels or self.properties or self.description)
        names.update(self.names)
        labels.update(self.labels)
        return new

    def row(self) -> dict[str, Any]:
        node = self.node
        return {"id": node.id, "name": node.name, "key": node.key, "family": node.family,
                "aliases": [n for n in self.names if n != node.name], "description": self.description,
                "semantic_type": self.semantic_type, "properties": self.properties, "embedding": self.embedding,
                "overwrite": self.overwrite}


def contribution(node: EntityNode) -> dict[str, Any]:
    """What one document says about an entity beyond naming it, kept on its ``MENTIONED_IN``
    edges so that deleting the document can recompute the entity without it (``None``: nothing)."""
    return {"description": node.description or None, "semantic_type": node.semantic_type,
            "properties_json": json.dumps(node.properties, ensure_ascii=False, sort_keys=True)
            if node.properties else None}


def _entity(entities: dict[str, _EntityRow], node: EntityNode) -> _EntityRow:
    row = entities.get(node.id)
    if row is None:
        row = entities[node.id] = _EntityRow(node)
    elif id(node) not in row.seen:
        row.seen.add(id(node))
        row.merge(node)
    return row


class SliceRows:
    """The parameter rows of one slice, grouped the way the statements need them."""

    def __init__(self, part: _Slice, sent: dict[str, tuple[set[str], set[str]]] | None = None) -> None:
        began = time.time_ns()  # load order: a later slice starts later than this one's last document
        self.documents = [
            {"id": d.id, "title": d.document.title, "title_key": name_key(d.document.title or ""),
             "source": d.document.source, "sha256": d.document.sha256,
             "media_type": d.document.media_type, "chunk_count": len(d.chunks), "load_seq": began + position,
             "metadata_json": json.dumps(d.document.metadata, ensure_ascii=False, sort_keys=True, default=str)}
            for position, d in enumerate(part.docs)
        ]
        self.chunks: list[dict[str, Any]] = []
        self.next: list[dict[str, str]] = []
        self.complete = list(part.complete)
        chunk_ids: set[str] = set()
        positions: dict[str, dict[int, str]] = {}
        for doc, chunk in part.chunks:
            chunk_ids.add(chunk.id)
            self.chunks.append({
                "id": chunk.id, "document_id": doc.id, "text": chunk.text, "title": chunk.title,
                "title_path": list(chunk.title_path), "position": chunk.position, "paragraph": chunk.paragraph,
                "index": chunk.index, "embedding": doc.chunk_vectors.get(chunk.id),
            })
            if chunk.position > 0:
                index = positions.get(doc.id)
                if index is None:
                    index = positions[doc.id] = {c.position: c.id for c in doc.chunks}
                previous = index.get(chunk.position - 1)
                if previous is not None:
                    self.next.append({"source": previous, "target": chunk.id})
        entities: dict[str, _EntityRow] = {}
        events: dict[str, EventNode] = {}
        mentions: dict[str, list[dict[str, Any]]] = {ENTITY: [], EVENT: []}
        facts: dict[tuple[str | None, str, str, str, str, str], dict[str, Any]] = {}
        links: dict[tuple[str, str], dict[str, Any]] = {}
        concepts: dict[str, dict[str, Any]] = {}
        for doc in part.docs:
            for mention in doc.mentions:
                if mention.chunk_id not in chunk_ids:
                    continue
                row = {"node": mention.node_id, "chunk": mention.chunk_id, "count": mention.count,
                       "names": list(mention.names)}
                mentions[mention.kind].append(row)
                if mention.kind == ENTITY:
                    node = doc.entities[mention.node_id]
                    row.update(contribution(node))
                    _entity(entities, node).add_names(mention.names)
                else:
                    events.setdefault(mention.node_id, doc.events[mention.node_id])
            # a fact's endpoints are mentioned in its chunk (the aligner guarantees it), so the
            # mentions above already gave them rows
            for fact in doc.facts:
                if fact.chunk_id in chunk_ids:
                    self._add_fact(facts, fact, doc.id)
            for concept in doc.concepts.values():  # facts may end at them (structured concept columns)
                concepts.setdefault(concept.id, {"id": concept.id, "name": concept.name,
                                                 "embedding": concept.embedding})
            for link in doc.concept_links:
                if link.chunk_id not in chunk_ids:
                    continue
                row = links.setdefault((link.entity_id, link.concept_id), {
                    "entity": link.entity_id, "concept": link.concept_id, "chunk_ids": [], "doc_ids": [],
                    "concept_name": doc.concepts[link.concept_id].name if link.concept_id in doc.concepts
                    else link.concept_id.split(":", 1)[-1],
                })
                _union(row["chunk_ids"], [link.chunk_id])
                _union(row["doc_ids"], [doc.id])
                concept = doc.concepts.get(link.concept_id)
                if concept is not None:
                    concepts.setdefault(concept.id, {"id": concept.id, "name": concept.name,
                                                     "embedding": concept.embedding})
        self.entities: dict[tuple[str, ...], list[dict[str, Any]]] = {}
        for entity in entities.values():
            if sent is not None and not entity.news(sent):
                continue  # the node is in the graph already and this row would change nothing
            self.entities.setdefault(tuple(sorted(entity.labels)), []).append(entity.row())
        self.events: dict[tuple[str, ...], list[dict[str, Any]]] = {}
        for event in events.values():
            self.events.setdefault(tuple(event.labels), []).append({
                "id": event.id, "name": event.name, "key": event.key, "family": event.family,
                "event_type": event.event_type, "description": event.description,
                "properties": dict(event.properties),
            })
        self.mentions = mentions
        by_chunk: dict[str, dict[str, list[dict[str, Any]]]] = {}
        for kind, key in ((ENTITY, "mentions"), (EVENT, "event_mentions")):
            for row in mentions[kind]:
                by_chunk.setdefault(row["chunk"], {}).setdefault(key, []).append(
                    {name: value for name, value in row.items() if name != "chunk"})
        for chunk_row in self.chunks:
            nested = by_chunk.get(chunk_row["id"], {})
            chunk_row["mentions"] = nested.get("mentions", [])
            chunk_row["event_mentions"] = nested.get("event_mentions", [])
        self.facts: dict[tuple[str | None, str, str], list[dict[str, Any]]] = {}
        #: schema-typed facts that are one event among several (``instance`` keys): own relationships
        self.instance_facts: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        for (rel_type, source_kind, target_kind, _s, _p, _o, instance), row in facts.items():
            if instance is not None and rel_type is not None:
                self.instance_facts.setdefault((rel_type, source_kind, target_kind), []).append(row)
            else:
                self.facts.setdefault((rel_type, source_kind, target_kind), []).append(row)
        self.links = list(links.values())
        self.concepts = list(concepts.values())
        #: relations an update file restates: rel type -> [{source, targets}]; the source's other
        #: relations of that type are removed (the update replaces them)
        self.replaced: dict[str, list[dict[str, Any]]] = {}
        for doc in part.docs:
            updated = {node_id for node_id, node in doc.entities.items() if node.overwrite}
            if not updated:
                continue
            targets: dict[tuple[str, str], list[str]] = {}
            for fact in doc.facts:
                if fact.rel_type is not None and fact.source_kind == ENTITY and fact.source_id in updated \
                        and fact.chunk_id in chunk_ids:
                    _union(targets.setdefault((fact.rel_type, fact.source_id), []), [fact.target_id])
            for (rel_type, source), ids in sorted(targets.items()):
                self.replaced.setdefault(rel_type, []).append({"source": source, "targets": ids})

    @staticmethod
    def _add_fact(facts: dict[Any, dict[str, Any]], fact: FactEdge, doc_id: str) -> None:
        instance = fact.instance if fact.rel_type is not None else None
        key = (fact.rel_type, fact.source_kind, fact.target_kind, fact.source_id,
               fact.predicate if fact.rel_type is None else "", fact.target_id, instance)
        row = facts.get(key)
        if row is None:
            facts[key] = {"source": fact.source_id, "target": fact.target_id, "predicate": fact.predicate,
                          "chunk_ids": [fact.chunk_id], "doc_ids": [doc_id], "confidence": fact.confidence,
                          "properties": dict(fact.properties)}
            if instance is not None:
                facts[key]["instance"] = instance
            return
        _union(row["chunk_ids"], [fact.chunk_id])
        _union(row["doc_ids"], [doc_id])
        row["confidence"] = max(row["confidence"], fact.confidence)
        for prop, value in fact.properties.items():
            row["properties"].setdefault(prop, value)

    def stats(self) -> WriteStats:
        return WriteStats(
            transactions=1, documents=len(self.complete), chunks=len(self.chunks),
            entities=sum(len(rows) for rows in self.entities.values()),
            events=sum(len(rows) for rows in self.events.values()),
            mentions=len(self.mentions[ENTITY]) + len(self.mentions[EVENT]),
            relations=sum(len(rows) for rows in self.facts.values())
            + sum(len(rows) for rows in self.instance_facts.values()), concept_links=len(self.links),
        )

    def endpoints(self) -> dict[str, set[str]]:
        """label -> ids of the nodes the edge statements ``MATCH`` (Document, Entity, Event, Chunk)."""
        wanted: dict[str, set[str]] = {"Document": set(), "Entity": set(), "Event": set(), "Chunk": set(),
                                       "Concept": set()}
        wanted["Document"].update(row["document_id"] for row in self.chunks)
        wanted["Document"].update(self.complete)
        for kind in (ENTITY, EVENT):
            wanted[_LABEL_OF_KIND[kind]].update(row["node"] for row in self.mentions[kind])
        for (_rel, source_kind, target_kind), fact_rows in [*self.facts.items(), *self.instance_facts.items()]:
            wanted[_LABEL_OF_KIND[source_kind]].update(row["source"] for row in fact_rows)
            wanted[_LABEL_OF_KIND[target_kind]].update(row["target"] for row in fact_rows)
        wanted["Entity"].update(row["entity"] for row in self.links)
        own = {row["id"] for row in self.chunks}
        wanted["Chunk"].update(row["source"] for row in self.next if row["source"] not in own)
        return wanted


def _schema_labels(labels: Sequence[str]) -> list[str]:
    """The schema labels of a node, never kag-neo4j's own (the validator stores those as ``Spg<name>``)."""
    reserved = [label for label in labels if is_reserved_label(label)]
    if reserved:
        raise InvalidIdentifierError(f"schema label(s) {', '.join(reserved)} are kag-neo4j's own labels; "
                                     "build the schema with kag_neo4j.schema.validate_schema, which stores such types as Spg<name>")
    return list(labels)


def _schema_type(rel_type: str) -> str:
    if is_reserved_relationship_type(rel_type):
        raise InvalidIdentifierError(f"relationship type {rel_type!r} is kag-neo4j's own; rename the schema relation")
    return rel_type


def _run(tx: Transaction, cypher: str, **params: Any) -> None:
    tx.run(cypher, params).consume()


def mark_changed(tx: Transaction, reason: str) -> int:
    """Increment the graph version inside ``tx`` (the transaction that changes the graph) and return it."""
    record = tx.run(query("builder/bump_version"), {"reason": reason}).single()
    return int(record["version"]) if record is not None else 0


def check_endpoints(tx: Transaction, wanted: dict[str, set[str]]) -> None:
    """Raise :class:`BuilderError` when a node an edge row needs is not in the graph (``tx`` then
    rolls back: nothing of the slice is written)."""
    missing: dict[str, list[str]] = {}
    for label, ids in sorted(wanted.items()):
        if ids:
            record = tx.run(render("builder/missing_nodes", label=label), {"ids": sorted(ids)}).single()
            if record is not None and record["missing"]:
                missing[label] = list(record["missing"])
    if missing:
        listed = "; ".join(f"{len(ids)} {label} ({', '.join(map(repr, ids[:5]))}{', ...' if len(ids) > 5 else ''})"
                           for label, ids in missing.items())
        raise BuilderError(
            f"the write was refused because nodes its edges need are not in the graph: {listed}. Another process "
            "changed the graph during this load (a `kag-neo4j delete`, or writes outside kag-neo4j). Nothing of this "
            "transaction was written; run the load again"
        )


def write_rows(tx: Transaction, rows: SliceRows, *, lease: Lease | None = None, reason: str = "load") -> int:
    """Run every statement of one slice inside ``tx`` (order matters: nodes before the edges
    between them; chunks carry their ``MENTIONED_IN`` edges, so entities come first); returns the
    graph version the transaction set."""
    if lease is not None:
        lease.fence(tx)
    if rows.documents:
        _run(tx, query("builder/merge_documents"), rows=rows.documents)
    for labels, entity_rows in sorted(rows.entities.items()):
        _run(tx, render("builder/merge_entities", labels=_schema_labels(labels)), rows=entity_rows)
    for labels, event_rows in sorted(rows.events.items()):
        _run(tx, render("builder/merge_events", labels=_schema_labels(labels)), rows=event_rows)
    for label, grouped in (("Entity", rows.entities), ("Event", rows.events)):
        described = [row for label_rows in grouped.values() for row in label_rows if row["properties"]]
        kept = [row for row in described if not row.get("overwrite")]
        if kept:
            _run(tx, render("builder/set_node_properties", label=label), rows=kept)
        updated = [row for row in described if row.get("overwrite")]
        if updated:  # rows of an update file (CompanyUpdate.csv): their values replace the stored ones
            _run(tx, render("builder/update_node_properties", label=label), rows=updated)
    if rows.concepts:  # before the facts, some of which end at them
        _run(tx, query("builder/merge_concepts"), rows=rows.concepts)
    check_endpoints(tx, rows.endpoints())
    if rows.chunks:  # with the MENTIONED_IN edges of each chunk
        _run(tx, query("builder/merge_chunks"), rows=rows.chunks)
    entity_ids = [row["id"] for label_rows in rows.entities.values() for row in label_rows]
    if rows.chunks or entity_ids:  # the title anchors of the chunks and entities written (after their mentions)
        _run(tx, query("builder/merge_title_anchors"), chunk_ids=[row["id"] for row in rows.chunks],
             entity_ids=entity_ids)
    if rows.next:
        _run(tx, query("builder/merge_next"), rows=rows.next)
    for (rel_type, source_kind, target_kind), fact_rows in sorted(rows.facts.items(), key=lambda item: str(item[0])):
        source, target = _LABEL_OF_KIND[source_kind], _LABEL_OF_KIND[target_kind]
        if rel_type is None:
            merge = render("builder/merge_open_facts", source=source, target=target)
            properties = render("builder/set_open_fact_properties", source=source, target=target)
        else:
            merge = render("builder/merge_facts", rel_type=_schema_type(rel_type), source=source, target=target)
            properties = render("builder/set_fact_properties", rel_type=rel_type, source=source, target=target)
        _run(tx, merge, rows=fact_rows)
        described = [row for row in fact_rows if row["properties"]]
        if described:
            _run(tx, properties, rows=described)
    for (rel_type, source_kind, target_kind), fact_rows in sorted(rows.instance_facts.items()):
        _run(tx, render("builder/merge_fact_instances", rel_type=_schema_type(rel_type),
                        source=_LABEL_OF_KIND[source_kind], target=_LABEL_OF_KIND[target_kind]), rows=fact_rows)
    for rel_type, replaced_rows in sorted(rows.replaced.items()):
        _run(tx, render("builder/replace_relations", rel_type=_schema_type(rel_type)), rows=replaced_rows)
    if rows.links:
        _run(tx, query("builder/merge_concept_links"), rows=rows.links)
    if rows.complete:
        _run(tx, query("builder/complete_documents"), ids=rows.complete)
    return mark_changed(tx, reason)


class GraphWriter:
    """Writes aligned documents in slices of ``batch_size`` chunks (see the module docs).

    ``after_slice`` is called after each committed transaction with the slice's stats (progress
    bars, tests that interrupt a load). ``lease``: the builder lease every transaction renews
    (None: no fencing, for tests and fixtures). ``version`` is the graph version the last
    transaction set.
    """

    def __init__(
        self,
        db: Database,
        *,
        batch_size: int = 500,
        after_slice: Callable[[WriteStats], None] | None = None,
        lease: Lease | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self.db = db
        self.batch_size = batch_size
        self.after_slice = after_slice
        self.stats = WriteStats()
        self.lease = lease
        self.version: int | None = None
        #: entity id -> names and labels already written in this load (rows that add nothing are skipped)
        self._sent: dict[str, tuple[set[str], set[str]]] = {}

    def _rows(self, part: _Slice) -> SliceRows:
        with paused_gc():
            return SliceRows(part, self._sent)

    def write(self, documents: Sequence[AlignedDocument]) -> WriteStats:
        """Write ``documents``; the rows of the next transaction are built while one runs."""
        total = WriteStats()
        parts = slices(documents, self.batch_size)
        first = next(parts, None)
        if first is None:
            return total
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="kag-rows") as pool:
            pending: Future[SliceRows] | None = pool.submit(self._rows, first)
            while pending is not None:
                rows = pending.result()
                following = next(parts, None)
                pending = pool.submit(self._rows, following) if following is not None else None
                began = time.perf_counter()
                self.version = self.db.write_tx(functools.partial(write_rows, rows=rows, lease=self.lease))
                stats = rows.stats()
                stats.seconds = time.perf_counter() - began
                total.add(stats)
                self.stats.add(stats)
                if self.after_slice is not None:
                    self.after_slice(stats)
        return total

    def write_taxonomy(self, taxonomy: Taxonomy, vectors: Callable[[Taxonomy], dict[str, list[float]]] | None = None,
                       *, document_id: str | None = None) -> int:
        """Write a taxonomy's concepts and concept edges unless the same taxonomy is already
        loaded (checksum in ``(:KagMeta {key: 'taxonomy:<source>'})``, with ``document_id``: the
        id of the concept table's file, by which ``kag-neo4j delete`` finds it); returns the
        number of concepts written (0 when unchanged). ``vectors`` gives concept id -> vector."""
        concepts, edges = taxonomy.rows()
        key = f"taxonomy:{taxonomy.source}"
        labels: dict[str, list[str]] = {}
        if taxonomy.typed:  # concept tables: each concept also carries its ConceptType label
            for concept in taxonomy.concepts.values():
                labels.setdefault(concept.label, []).append(concept.id)
        checksum = taxonomy_checksum(concepts, edges, labels)
        rows = self.db.read(query("builder/taxonomy_checksum"), key=key)
        if rows and rows[0]["checksum"] == checksum:
            return 0
        by_id = vectors(taxonomy) if vectors is not None else {}
        for row in concepts:
            row["embedding"] = by_id.get(row["id"])

        def work(tx: Transaction) -> int:
            if self.lease is not None:
                self.lease.fence(tx)
            for start in range(0, len(concepts), 2000):
                _run(tx, query("builder/taxonomy_concepts"), rows=concepts[start : start + 2000],
                     taxonomy=taxonomy.source, replace_vectors=True)
            for label, ids in sorted(labels.items()):
                _run(tx, render("builder/label_concepts", label=_schema_labels([label])[0]), ids=ids)
            for rel_type, edge_rows in sorted(edges.items()):
                cypher = render("builder/taxonomy_edges", rel_type=rel_type)
                for start in range(0, len(edge_rows), 5000):
                    _run(tx, cypher, rows=edge_rows[start : start + 5000])
            _run(tx, query("builder/taxonomy_record"), key=key, checksum=checksum, concepts=len(concepts),
                 edges=sum(len(rows) for rows in edges.values()), document_id=document_id)
            return mark_changed(tx, f"taxonomy {taxonomy.source}")

        self.version = self.db.write_tx(work)
        return len(concepts)


def taxonomy_checksum(
    concepts: list[dict[str, Any]], edges: dict[str, list[dict[str, str]]], labels: dict[str, list[str]] | None = None
) -> str:
    parts: list[Any] = [concepts, edges] if not labels else [concepts, edges, labels]
    payload = json.dumps(parts, ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def bump_graph_version(db: Database, reason: str) -> int:
    """Increment ``(:KagMeta {key: 'graph'}).version`` in a transaction of its own, for graph
    changes made outside the builder (fixtures, benchmarks); the builder's own transactions bump
    it themselves (:func:`mark_changed`)."""
    rows = db.write(query("builder/bump_version"), reason=reason)
    return int(rows[0]["version"])


def anchor_titles(db: Database, chunk_ids: Sequence[str], entity_ids: Sequence[str] = (), *, batch: int = 2000) -> None:
    """Write the title anchors of ``chunk_ids`` and ``entity_ids`` (``builder/merge_title_anchors``) for
    graph changes made outside the builder (fixtures, benchmarks); the builder's own transactions
    write them with their chunks and entities (:func:`write_rows`)."""
    for start in range(0, max(len(chunk_ids), len(entity_ids)), batch):
        db.write(query("builder/merge_title_anchors"), chunk_ids=list(chunk_ids[start:start + batch]),
                 entity_ids=list(entity_ids[start:start + batch]))


def graph_counts(db: Database) -> dict[str, int]:
    """Node and edge counts of the knowledge graph."""
    rows = db.read(query("builder/graph_counts"))
    return {key: int(value) for key, value in rows[0].items()}

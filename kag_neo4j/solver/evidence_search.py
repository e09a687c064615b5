"""Evidence search for one step: mention linking, chunk retrieval and the chunks graph facts cite.

Shared by the Retrieval operator, the judge loop and the run's first record, the question's own
single-shot search (:func:`search_question`). Every query runs through the step's
:meth:`~kag_neo4j.solver.runtime.Runtime.runner`, so the step's trace lists each one with its
exact parameters (the projection a retrieval made included); what a step found is noted on its
record (``used``, with ranks) and kept in the run's memory for later prompts and citations.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from kag_neo4j.solver.chunks import RankedChunk
from kag_neo4j.solver.linking import LinkedEntity, link_entity
from kag_neo4j.solver.question_search import search
from kag_neo4j.solver.results import StepRecord, Used
from kag_neo4j.solver.retrieval import hybrid_retrieval, seed_keys
from kag_neo4j.solver.runtime import Runtime

__all__ = ["link_mention", "remember_fact_chunks", "retrieve_chunks", "search_question"]


def link_mention(rt: Runtime, record: StepRecord, mention: str, type_name: str | None) -> list[LinkedEntity]:
    """The entities ``mention`` (of type ``type_name``, when given) links to."""
    return link_entity(rt.runner(record), rt.embedder, mention, type_name=type_name, k=rt.config.link_k)


def retrieve_chunks(
    rt: Runtime, record: StepRecord, text: str, seeds: list[str], *, k: int | None = None,
    names: Sequence[str] = (),
) -> list[RankedChunk]:
    """Hybrid retrieval for ``text`` seeded with the entities ``seeds`` and with the documents the
    step's ``names`` title (``k`` chunks, default ``chunk_k``); noted on ``record`` and kept in memory."""
    config = rt.config.retrieval.model_copy(update={"k": k or rt.config.chunk_k})
    chunks = hybrid_retrieval(rt.runner(record), rt.embedder, text, seed_entity_ids=seeds, seed_keys=seed_keys(names),
                              config=config, extra_lists=rt.extra_lists).chunks
    _note_chunks(rt, record, chunks)
    return chunks


def search_question(rt: Runtime, question: str) -> list[RankedChunk]:
    """The run's ``Search`` record: single-shot search (``question_search.search``, recipe ``hybrid``)
    for the question itself, ``question_k`` chunks, before any step; noted and kept in memory like a
    step's. Nothing when ``question_k`` is 0."""
    if not rt.config.question_k:
        return []
    record = rt.new_record("Search", question=question, lf=f"search({question!r})")
    began = time.perf_counter()
    found = search(rt.runner(record), rt.embedder, question, k=rt.config.question_k, extra_lists=rt.extra_lists)
    record.source = "chunks"
    record.note = f"mentions: {', '.join(found.mentions)}" if found.mentions else "no mentions"
    _note_chunks(rt, record, found.chunks)
    record.ms = round((time.perf_counter() - began) * 1000, 2)
    return found.chunks


def _note_chunks(rt: Runtime, record: StepRecord, chunks: list[RankedChunk]) -> None:
    start = sum(1 for used in record.used if used.kind == "Chunk")
    for rank, chunk in enumerate(chunks, start=start + 1):
        record.used.append(Used(kind="Chunk", id=chunk.chunk_id, rank=rank, score=round(chunk.score, 6)))
    rt.memory.add_chunks(chunks)


def remember_fact_chunks(rt: Runtime, record: StepRecord, chunk_ids: list[str]) -> None:
    """Fetch the chunks graph facts cite (for citations) and note them as used.

    Chunks of documents still loading are not fetched (``chunks_by_id`` leaves them out), so they
    are neither noted nor cited."""
    missing = [cid for cid in dict.fromkeys(chunk_ids) if rt.memory.chunk(cid) is None]
    if missing:
        rows = rt.read(record, "solver/chunks_by_id", chunk_ids=missing)
        rt.memory.add_chunks(
            RankedChunk(chunk_id=r["chunk_id"], document_id=r["document_id"], title=r["title"], text=r["text"] or "")
            for r in rows
        )
    have = {used.id for used in record.used if used.kind == "Chunk"}
    for rank, cid in enumerate(dict.fromkeys(chunk_ids), start=len(have) + 1):
        if cid not in have and rt.memory.chunk(cid) is not None:
            record.used.append(Used(kind="Chunk", id=cid, rank=rank, score=1.0))

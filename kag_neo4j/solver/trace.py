"""The trace: every run stored in the graph, next to the knowledge it used.

Shape (one write transaction per run, after the answer; ``trace=False`` skips it)::

    (:KagRun {id, question, answer, known, mode, language, plan, ms, llm_calls, tokens, model,
              config, embedder, graph_version, prompt_versions, ranked_lists, ...})
      -[:HAS_STEP {index}]->(:KagStep {id, index, op, step, action, question, lf, layer, source,
                                      cypher, params, result, outputs, facts, ms, llm_calls,
                                      prompt_tokens, completion_tokens, tokens, note, error})
    (:KagStep)-[:USED {rank, score}]->(:Chunk | :Entity)
    (:KagStep)-[:DEPENDS_ON]->(:KagStep)
    (:KagRun)-[:CITES {rank}]->(:Chunk)

Nested data (the queries' parameters, outputs, facts) is stored as JSON text. The Browser query
(:func:`browser_query`, ``cypher/solver/trace_browser.cypher``) draws the reasoning path.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, Field

from kag_neo4j.errors import KagError
from kag_neo4j.solver.results import Answer, StepRecord
from kag_neo4j.store import cypher
from kag_neo4j.store.database import Database, Transaction
from kag_neo4j.store.knowledge_base import KnowledgeBase

__all__ = [
    "RUN_ID_PATTERN",
    "TraceNotFoundError",
    "TraceView",
    "browser_query",
    "check_run_id",
    "latest_runs",
    "read_trace",
    "step_properties",
    "write_trace",
]

RUN_ID_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class TraceNotFoundError(KagError):
    """No ``(:KagRun)`` has the requested id."""


def check_run_id(run_id: str) -> str:
    if not isinstance(run_id, str) or not RUN_ID_PATTERN.fullmatch(run_id):
        raise KagError(
            f"run id {run_id!r} is not valid: run ids are letters, digits, '-' and '_' "
            "(copy the id `kag-neo4j ask` printed)"
        )
    return run_id


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)


def step_id(run_id: str, index: int) -> str:
    return f"{run_id}:{index}"


def step_properties(run_id: str, record: StepRecord) -> dict[str, Any]:
    """The primitive properties of one ``(:KagStep)``."""
    cypher_text = "\n".join(f"// {q.name} ({q.rows} rows, {q.ms} ms)\n{q.cypher.strip()}" for q in record.queries)
    result = record.error or "; ".join(f"{k} = {v}" for k, v in record.outputs.items()) or record.note
    props: dict[str, Any] = {
        "id": step_id(run_id, record.index),
        "index": record.index,
        "op": record.op,
        "step": record.step,
        "action": record.action,
        "question": record.question,
        "lf": record.lf,
        "layer": record.layer,
        "source": record.source,
        "cypher": cypher_text,
        "params": _json([
            {"name": q.name, "params": q.params, **({"error": q.error} if q.error else {})} for q in record.queries
        ]),
        "result": result,
        "outputs": _json(record.outputs),
        "facts": _json([fact.model_dump() for fact in record.facts]),
        "evidence": list(record.evidence),
        "ms": record.ms,
        "llm_calls": record.llm_calls,
        "prompt_tokens": record.prompt_tokens,
        "completion_tokens": record.completion_tokens,
        "tokens": record.prompt_tokens + record.completion_tokens,
        "note": record.note,
        "error": record.error,
    }
    return {key: value for key, value in props.items() if value is not None}


def run_properties(answer: Answer, run_id: str, model: str | None) -> dict[str, Any]:
    usage = answer.usage
    props: dict[str, Any] = {
        "id": run_id,
        "question": answer.question,
        "answer": answer.answer,
        "known": answer.known,
        "mode": answer.mode,
        "language": answer.language,
        "plan": answer.plan,
        "ms": answer.ms,
        "llm_calls": int(usage.get("llm_calls", 0)),
        "prompt_tokens": int(usage.get("prompt_tokens", 0)),
        "completion_tokens": int(usage.get("completion_tokens", 0)),
        "tokens": int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0)),
        "usage": _json(usage),
        "citations": [c.chunk_id for c in answer.citations],
        "kg_path": _json([fact.model_dump() for fact in answer.kg_path]),
        "model": model,
    }
    if answer.config is not None:  # what the run was configured with (kag_neo4j.solver.run_config)
        props.update({
            "config": _json(answer.config.solver), "embedder": answer.config.embedder,
            "graph_version": answer.config.graph_version, "prompt_versions": _json(answer.config.prompt_versions),
            "ranked_lists": _json(answer.config.ranked_lists),
        })
    return {key: value for key, value in props.items() if value is not None}


def _used_rows(run_id: str, records: list[StepRecord], kind: str) -> list[dict[str, Any]]:
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for record in records:
        for used in record.used:
            if used.kind != kind:
                continue
            key = (step_id(run_id, record.index), used.id)
            have = rows.get(key)
            if have is None or used.rank < have["rank"]:
                rows[key] = {"step": key[0], "id": used.id, "rank": used.rank, "score": used.score}
    return list(rows.values())


def write_trace(db: Database, answer: Answer, run_id: str, *, model: str | None = None) -> None:
    """Store the run in one write transaction."""
    check_run_id(run_id)
    steps = [step_properties(run_id, record) for record in answer.steps]
    edges = [
        {"source": step_id(run_id, record.index), "target": step_id(run_id, dep)}
        for record in answer.steps
        for dep in dict.fromkeys(record.depends_on)
        if dep != record.index
    ]
    chunks = _used_rows(run_id, answer.steps, "Chunk")
    entities = _used_rows(run_id, answer.steps, "Entity")
    cites = [{"id": c.chunk_id, "rank": rank} for rank, c in enumerate(answer.citations, start=1)]
    run = run_properties(answer, run_id, model)

    def work(tx: Transaction) -> None:
        tx.run(cypher.query("solver/trace_run"), run=run).consume()
        if steps:
            tx.run(cypher.query("solver/trace_steps"), run_id=run_id, steps=steps).consume()
        if edges:
            tx.run(cypher.query("solver/trace_depends"), edges=edges).consume()
        if chunks:
            tx.run(cypher.query("solver/trace_used_chunks"), rows=chunks).consume()
        if entities:
            tx.run(cypher.query("solver/trace_used_entities"), rows=entities).consume()
        if cites:
            tx.run(cypher.query("solver/trace_cites"), run_id=run_id, rows=cites).consume()

    db.write_tx(work)


class TraceView(BaseModel):
    """A stored run, as `kag-neo4j trace` shows it."""

    run: dict[str, Any]
    steps: list[dict[str, Any]] = Field(default_factory=list)
    cited: list[str] = Field(default_factory=list)


def read_trace(db: Database, run_id: str) -> TraceView:
    rows = db.read(cypher.query("solver/trace_read"), run_id=check_run_id(run_id))
    if not rows:
        raise TraceNotFoundError(
            f"no run {run_id!r} in this database; `kag-neo4j trace` without an id lists recent runs"
        )
    row = rows[0]
    return TraceView(run=row["run"], steps=row["steps"], cited=row["cited"])


def latest_runs(db: Database, limit: int = 10) -> list[dict[str, Any]]:
    return db.read(cypher.query("solver/trace_latest"), limit=limit)


def browser_query(kb: KnowledgeBase | None = None) -> str:
    """The Cypher that draws a run's reasoning path in Neo4j Browser (parameter ``$run_id``), for the
    knowledge base ``kb`` (default: the default one)."""
    return (kb or KnowledgeBase()).rewrite(cypher.query("solver/trace_browser"))

"""One question, end to end: search -> plan -> execute -> judge -> generate (the trace is written by the API).

The run's first record searches the question itself (single-shot search, no model call,
``SolverConfig.question_k`` chunks): its chunks rank with the steps' in the run's chunks and the
judge reads them.

Calls to the model, in the best case: one (the plan) when graph facts and code answer every
step. Each step the graph cannot answer adds one sub-answer call; an unbound output adds at most
``max_rounds`` judge calls and one answer call. Iterative mode plans with one call per step.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any, Literal

from kag_neo4j.errors import KagError
from kag_neo4j.models.base import LLM, Embedder
from kag_neo4j.prompts.context import pick_language
from kag_neo4j.solver.evidence_search import search_question
from kag_neo4j.solver.executor import PlanExecutor
from kag_neo4j.solver.generate import compose
from kag_neo4j.solver.graph_schema import GraphSchema, read_graph_schema
from kag_neo4j.solver.judge import JudgeOutcome, answers_question, judge_loop
from kag_neo4j.solver.lf.ast import Plan
from kag_neo4j.solver.loops import run_iterative, run_static
from kag_neo4j.solver.planner import Planner
from kag_neo4j.solver.projection import graph_version
from kag_neo4j.solver.results import Answer, PlanOrigin
from kag_neo4j.solver.retrieval import RankedList
from kag_neo4j.solver.run_config import run_config
from kag_neo4j.solver.runtime import Runtime, SolverConfig
from kag_neo4j.store.database import Database

__all__ = ["Mode", "Solver"]

Mode = Literal["static", "iterative"]
_USAGE_FIELDS = ("calls", "cache_hits", "prompt_tokens", "completion_tokens", "seconds", "failures")


def _stages(llm: LLM) -> dict[str, dict[str, float]] | None:
    return {name: u.model_dump(include=set(_USAGE_FIELDS)) for name, u in llm.usage.by_stage().items()}


def _usage_delta(before: dict[str, dict[str, float]], after: dict[str, dict[str, float]]) -> dict[str, Any]:
    stages: dict[str, dict[str, float]] = {}
    for name, totals in after.items():
        base = before.get(name, {})
        delta = {f: round(totals[f] - base.get(f, 0), 3) for f in _USAGE_FIELDS}
        if any(delta.values()):
            stages[name] = delta
    total = {f: round(sum(s[f] for s in stages.values()), 3) for f in _USAGE_FIELDS}
    return {
        "llm_calls": int(total["calls"]), "cache_hits": int(total["cache_hits"]),
        "prompt_tokens": int(total["prompt_tokens"]), "completion_tokens": int(total["completion_tokens"]),
        "llm_seconds": total["seconds"], "by_stage": stages,
    }


class Solver:
    """Answers questions over one database with one LLM and one embedder."""

    def __init__(
        self, db: Database, llm: LLM, embedder: Embedder, config: SolverConfig | None = None,
        *, ranked_lists: Sequence[RankedList] = (),
    ) -> None:
        self.db = db
        self.llm = llm
        self.embedder = embedder
        self.config = config or SolverConfig()
        #: custom ranked lists fused into every chunk retrieval
        self.ranked_lists = tuple(ranked_lists)
        self._schema: tuple[int, GraphSchema] | None = None
        self._lock = threading.Lock()

    def graph_schema(self) -> GraphSchema:
        """The graph's vocabulary, re-read only when the graph version changed."""
        return self._versioned_schema()[1]

    def _versioned_schema(self) -> tuple[int, GraphSchema]:
        version = graph_version(self.db)
        with self._lock:
            if self._schema is None or self._schema[0] != version:
                self._schema = (version, read_graph_schema(self.db))
            return version, self._schema[1]

    def solve(self, question: str, *, mode: Mode = "static", language: str = "auto") -> Answer:
        if not isinstance(question, str) or not question.strip():
            raise KagError("the question is empty; ask something, e.g. kag-neo4j ask \"Who founded X?\"")
        if mode not in ("static", "iterative"):
            raise KagError(f"mode {mode!r} is not supported; use 'static' or 'iterative'")
        question = " ".join(question.split())
        began = time.perf_counter()
        before = _stages(self.llm)
        rt = Runtime(self.db, self.llm, self.embedder, config=self.config, language=pick_language(language, question),
                     extra_lists=self.ranked_lists, question=question)
        version, schema = self._versioned_schema()
        planner = Planner(rt, schema_summary=schema.summary(), classes=bool(schema.classes),
                          causal=schema.causal[0] if schema.causal else None)
        executor = PlanExecutor(rt)
        search_question(rt, question)
        plan: Plan | None
        origin: PlanOrigin | None = None
        if mode == "static":
            plan, origin = run_static(rt, planner, executor, schema, question)
        else:
            plan = run_iterative(rt, planner, executor, schema, question, max_iterations=self.config.max_iterations)
        outputs = plan.output.names if plan is not None else []
        judged: JudgeOutcome | None = None
        if not answers_question(rt, outputs, question):
            judged = judge_loop(rt, question)
        # a judged run answers from the judge: its outputs are unbound, or a yes/no to a choice
        composed = compose(rt, outputs if judged is None else [], judged, question)
        after = _stages(self.llm)
        if before is not None and after is not None:
            usage = _usage_delta(before, after)
        else:
            usage = {
                "llm_calls": sum(r.llm_calls for r in rt.records),
                "prompt_tokens": sum(r.prompt_tokens for r in rt.records),
                "completion_tokens": sum(r.completion_tokens for r in rt.records),
            }
        return Answer(
            question=question, answer=composed.answer, known=composed.known, citations=composed.citations,
            kg_path=composed.kg_path, steps=rt.records, usage=usage, plan=plan.to_text() if plan else "",
            mode=mode, plan_origin=origin, language=rt.language, ms=round((time.perf_counter() - began) * 1000, 1),
            config=run_config(self.config, self.embedder.model_id, version, self.ranked_lists),
            warnings=[*self.db.capabilities.warnings, *rt.warnings],
        )

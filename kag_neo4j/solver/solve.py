"""One question, end to end: plan -> execute -> judge -> generate (the trace is written by the API).

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
from kag_neo4j.solver.executor import PlanExecutor
from kag_neo4j.solver.generate import compose
from kag_neo4j.solver.graph_schema import GraphSchema, read_graph_schema
from kag_neo4j.solver.judge import JudgeOutcome, answers_question, judge_loop
from kag_neo4j.solver.logical_form import OutputOp, Plan, Step
from kag_neo4j.solver.planner import Planner
from kag_neo4j.solver.projection import graph_version
from kag_neo4j.solver.results import Answer
from kag_neo4j.solver.retrieval import RankedList
from kag_neo4j.solver.run_config import run_config
from kag_neo4j.solver.runtime import Runtime, SolverConfig
from kag_neo4j.solver.validate import ValidatedPlan, validate_plan
from kag_neo4j.store.database import Database

__all__ = ["Mode", "Solver"]

Mode = Literal["static", "iterative"]
_USAGE_FIELDS = ("calls", "cache_hits", "prompt_tokens", "completion_tokens", "seconds", "failures")


def _stages(llm: LLM) -> dict[str, dict[str, float]] | None:
    usage = getattr(llm, "usage", None)
    if usage is None or not hasattr(usage, "by_stage"):
        return None
    return {name: {f: getattr(u, f) for f in _USAGE_FIELDS} for name, u in usage.by_stage().items()}


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
                     extra_lists=self.ranked_lists)
        version, schema = self._versioned_schema()
        planner = Planner(rt, schema_summary=schema.summary())
        executor = PlanExecutor(rt)
        plan: Plan | None
        if mode == "static":
            plan = self._static(rt, planner, executor, schema, question)
        else:
            plan = self._iterative(rt, planner, executor, schema, question)
        outputs = plan.output.names if plan is not None else []
        judged: JudgeOutcome | None = None
        if not answers_question(rt, outputs, question):
            judged = judge_loop(rt, question)
        # a judged run answers from the judge: its outputs are unbound, or a yes/no to a choice
        composed = compose(rt, outputs if judged is None else [], judged)
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
            mode=mode, language=rt.language, ms=round((time.perf_counter() - began) * 1000, 1),
            config=run_config(self.config, self.embedder.model_id, version, self.ranked_lists),
        )

    # ---- modes --------------------------------------------------------------------------------

    def _validate(self, plan: Plan, schema: GraphSchema) -> ValidatedPlan:
        return validate_plan(plan, schema.simple_schema())

    def _static(
        self, rt: Runtime, planner: Planner, executor: PlanExecutor, schema: GraphSchema, question: str
    ) -> Plan:
        record = rt.new_record("Plan", question=question, source="plan")
        began = time.perf_counter()
        plan, fallback = planner.plan(question, record)
        validated = self._validate(plan, schema)
        record.lf = plan.to_text()
        record.note += "; ".join(issue.message for issue in validated.warnings)
        if fallback:
            record.note = record.note or "fallback plan"
        record.ms = round((time.perf_counter() - began) * 1000, 2)
        executor.written = {action.number: action.operator.to_text() for _, action in plan.actions()}
        executor.run(validated)
        return plan

    def _iterative(
        self, rt: Runtime, planner: Planner, executor: PlanExecutor, schema: GraphSchema, question: str
    ) -> Plan | None:
        done: list[Step] = []
        results: dict[int, dict[str, str]] = {}
        current: Plan | None = None
        for iteration in range(self.config.max_iterations):
            record = rt.new_record("Plan", question=question, source="plan")
            began = time.perf_counter()
            step = planner.next_step(question, done, results, record)
            record.ms = round((time.perf_counter() - began) * 1000, 2)
            if step is None:
                break
            validated = self._validate(step.plan, schema)
            new_numbers = {s.number for s in step.new_steps}
            record.lf = "\n".join(s.to_text() for s in step.plan.steps if s.number in new_numbers) or (
                step.plan.output.to_text()
            )
            current = step.plan
            executor.written = {action.number: action.operator.to_text() for _, action in step.plan.actions()}
            known = {s.number for s in done}
            executor.run(validated, skip=known, first_layer=iteration, run_outputs=step.done)
            if step.done:  # an Output appended to a step that already ran
                for plan_step, action in validated.plan.actions():
                    if isinstance(action.operator, OutputOp) and plan_step.number in known:
                        executor.run_action(validated, plan_step, action, iteration)
            definitions = validated.plan.definitions()
            done = [_without_output(s) for s in step.plan.steps] if not step.done else list(step.plan.steps)
            for number in new_numbers:
                results[number] = {
                    alias: binding.text()
                    for alias, site in definitions.items()
                    if site.step == number and (binding := rt.memory.get(alias)) is not None and not binding.empty
                }
            if step.done:
                break
        return current


def _without_output(step: Step) -> Step:
    actions = [a for a in step.actions if not isinstance(a.operator, OutputOp)]
    return step.model_copy(update={"actions": actions}) if actions else step

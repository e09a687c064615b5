"""Run a validated plan: steps layer by layer (independent steps concurrently), actions in order.

Operators and where they run:

* ``Retrieval`` — :mod:`kag_neo4j.solver.hop` (Cypher in Neo4j; a sub-answer call only when the
  graph facts do not answer the step).
* ``Math`` — :func:`kag_neo4j.solver.math_eval.evaluate`, in code (never ``eval``).
* ``Sort`` and ``Deduce(op=greater|less|equal)`` — :mod:`kag_neo4j.solver.operators`, in code.
* ``Deduce(op=judgement|entailment|choice|multiChoice|extract)`` — one LLM call
  (:func:`kag_neo4j.prompts.subanswer.build_deduce_messages`), checked by
  :meth:`~kag_neo4j.solver.operators.DeduceRequest.resolve`.
* ``Output`` — names the answer aliases.

Every action becomes a :class:`~kag_neo4j.solver.results.StepRecord`. A failing action (a Math
error, an unbound input) is recorded with its error and leaves its alias unbound; the run goes
on and the judge decides what to do about the gap.
"""

from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from kag_neo4j.errors import (
    KagError,
    ModelUnavailableError,
    Neo4jUnavailableError,
    OperatorError,
)
from kag_neo4j.prompts.deduce import DeduceResponse
from kag_neo4j.prompts.subanswer import build_deduce_messages
from kag_neo4j.solver.hop import run_retrieval
from kag_neo4j.solver.logical_form import (
    Action,
    DeduceOp,
    MathOp,
    OutputOp,
    RetrievalOp,
    SortOp,
    Step,
)
from kag_neo4j.solver.math_eval import evaluate
from kag_neo4j.solver.memory import Binding, Item
from kag_neo4j.solver.operators import (
    DeduceOutcome,
    DeduceRequest,
    run_deduce,
    sort_items,
)
from kag_neo4j.solver.results import StepRecord
from kag_neo4j.solver.runtime import Runtime
from kag_neo4j.solver.validate import ValidatedPlan

__all__ = ["PlanExecutor", "json_value"]


def json_value(value: Any) -> Any:
    """A bound value made JSON- and Neo4j-friendly (dates as ISO text)."""
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return [json_value(v) for v in value]
    return value


class PlanExecutor:
    """Executes the steps of a :class:`ValidatedPlan` against a :class:`Runtime`."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self._run_outputs = True
        #: action number -> the action as the planner wrote it (types and predicates before
        #: standardisation), shown in records and the trace
        self.written: dict[int, str] = {}

    # ---- scheduling ---------------------------------------------------------------------------

    def run(
        self, plan: ValidatedPlan, *, skip: set[int] | None = None, first_layer: int = 0, run_outputs: bool = True
    ) -> None:
        """Run every step of ``plan`` not in ``skip``, DAG layer by DAG layer (``run_outputs=False``
        leaves out ``Output`` actions: the iterative planner's placeholder)."""
        skip = skip or set()
        self._run_outputs = run_outputs
        for offset, layer in enumerate(plan.plan.layers()):
            steps = [step for step in layer if step.number not in skip]
            if steps:
                self.run_layer(plan, steps, first_layer + offset)

    def run_layer(self, plan: ValidatedPlan, steps: Sequence[Step], layer: int) -> None:
        workers = min(len(steps), self.rt.config.concurrency)
        if workers <= 1:
            for step in steps:
                self.run_step(plan, step, layer)
            return
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="kag-step") as pool:
            futures = [pool.submit(self.run_step, plan, step, layer) for step in steps]
            for future in futures:
                future.result()

    def run_step(self, plan: ValidatedPlan, step: Step, layer: int) -> None:
        for action in step.actions:
            if isinstance(action.operator, OutputOp) and not self._run_outputs:
                continue
            self.run_action(plan, step, action, layer)

    # ---- one action ---------------------------------------------------------------------------

    def run_action(self, plan: ValidatedPlan, step: Step, action: Action, layer: int) -> StepRecord:
        op = action.operator
        record = self.rt.new_record(
            op.kind, step=step.number, action=action.number, question=step.question,
            lf=self.written.get(action.number, op.to_text()), layer=layer,
        )
        record.depends_on = self._reads(plan, action)
        began = time.perf_counter()
        try:
            if isinstance(op, RetrievalOp):
                run_retrieval(
                    self.rt, record, op, plan, step_number=step.number, action_number=action.number,
                    question=step.question,
                )
                record.depends_on = sorted(set(record.depends_on) | set(self._reads(plan, action)))
            elif isinstance(op, MathOp):
                self._math(record, op, plan, action)
            elif isinstance(op, DeduceOp):
                self._deduce(record, op, plan, action, step)
            elif isinstance(op, SortOp):
                self._sort(record, op)
            elif isinstance(op, OutputOp):
                record.source = "output"
                for alias in op.names:
                    binding = self.rt.memory.get(alias)
                    if binding is not None and not binding.empty:
                        record.outputs[alias] = binding.text()
        except (ModelUnavailableError, Neo4jUnavailableError):
            raise
        except KagError as exc:
            record.error = str(exc)
            output = getattr(op, "output", None)
            if output:
                self.rt.memory.bind(Binding(alias=output, source="none", record=record.index, question=step.question))
        finally:
            record.ms = round((time.perf_counter() - began) * 1000, 2)
        return record

    def _reads(self, plan: ValidatedPlan, action: Action) -> list[int]:
        records = set()
        for alias in plan.plan.uses(action.number):
            binding = self.rt.memory.get(alias)
            if binding is not None and binding.record is not None:
                records.add(binding.record)
        return sorted(records)

    def _bind(self, record: StepRecord, alias: str, items: list[Item], question: str) -> None:
        self.rt.memory.bind(
            Binding(alias=alias, items=items, source=record.source, record=record.index, question=question)
        )
        if items:
            record.outputs[alias] = ", ".join(item.text for item in items)

    def _inputs(self, plan: ValidatedPlan, action: Action, what: str) -> dict[str, Any]:
        values = self.rt.memory.values()
        missing = [alias for alias in plan.plan.uses(action.number) if alias not in values]
        if missing:
            raise OperatorError(
                f"{what} reads {', '.join(repr(a) for a in missing)}, which the earlier steps could not find"
            )
        return values

    # ---- operators ----------------------------------------------------------------------------

    def _math(self, record: StepRecord, op: MathOp, plan: ValidatedPlan, action: Action) -> None:
        values = self._inputs(plan, action, "Math")
        result = evaluate(op.target, values)
        record.source = "math"
        record.note = f"{op.target} = {json_value(result)}"
        items = [Item(value=json_value(v)) for v in result] if isinstance(result, list) else [Item(value=json_value(result))]
        self._bind(record, op.output, items, record.question)

    def _deduce(self, record: StepRecord, op: DeduceOp, plan: ValidatedPlan, action: Action, step: Step) -> None:
        values = self._inputs(plan, action, "Deduce")
        outcome = run_deduce(op, values, question=step.question)
        if isinstance(outcome, DeduceRequest):
            outcome = self._ask_deduce(record, outcome, step)
            record.source = "deduce+llm"
        else:
            record.source = "deduce"
        record.note = outcome.explanation
        answer = outcome.answer
        items = [Item(value=v) for v in answer] if isinstance(answer, list) else [Item(value=answer)]
        self._bind(record, op.output, items, step.question)

    def _ask_deduce(self, record: StepRecord, request: DeduceRequest, step: Step) -> DeduceOutcome:
        evidence = []
        for index in record.depends_on:
            for chunk_id in self.rt.records[index].evidence:
                chunk = self.rt.memory.chunk(chunk_id)
                if chunk is not None and chunk not in evidence:
                    evidence.append(chunk)
        messages = build_deduce_messages(
            request.op, language=self.rt.language, question=request.target or request.question or step.question,
            content=[(item.alias, item.text) for item in request.content], options=request.options,
            passages=[chunk.passage() for chunk in evidence[:3]], budget=self.rt.config.budget,
        )
        response = self.rt.ask(record, messages, DeduceResponse, stage="deduce", max_tokens=self.rt.config.deduce_max_tokens)
        return request.resolve(response)

    def _sort(self, record: StepRecord, op: SortOp) -> None:
        source = self.rt.memory.get(op.source.alias)
        if source is None or source.empty:
            raise OperatorError(f"Sort reads {op.source.alias!r}, which the earlier steps could not find")
        if source.record is not None:
            record.depends_on = sorted(set(record.depends_on) | {source.record})
        rows: list[dict[str, Any]] = []
        order_alias = (op.orderby or "").partition(".")[0]
        order = self.rt.memory.get(order_alias) if op.orderby else None
        if order is not None and order.record is not None:
            record.depends_on = sorted(set(record.depends_on) | {order.record})
        for item in source.items:
            if op.orderby is None:
                key: Any = item.value
            elif order is not None:
                matches = [o.value for o in order.items if o.key is not None and o.key == item.entity_id]
                if not matches and len(source.items) == 1 and len(order.items) == 1:
                    matches = [order.items[0].value]
                key = matches[0] if matches else None
            else:
                key = None
            rows.append({"item": item, "key": key})
        ordered = sort_items(rows, key="key", direction=op.direction, limit=op.limit)
        record.source = "sort"
        record.note = "; ".join(f"{row['item'].text}: {row['key']}" for row in ordered)
        self._bind(record, op.output, [row["item"] for row in ordered], record.question)

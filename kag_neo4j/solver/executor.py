"""Run a validated plan: steps layer by layer (independent steps concurrently), actions in order.

The executor only schedules. Each action's operator is looked up in the operator registry
(:data:`~kag_neo4j.solver.lf.registry.OPERATORS`) and its handler runs with an
:class:`~kag_neo4j.solver.action.ActionContext`. The built-in handlers live in
:mod:`kag_neo4j.solver.ops`: ``Retrieval`` (:mod:`~kag_neo4j.solver.ops.retrieval`: Cypher in
Neo4j, a sub-answer call only when the graph facts do not answer the step), ``Math``
(:mod:`~kag_neo4j.solver.ops.math`, in code), ``Sort`` (:mod:`~kag_neo4j.solver.ops.sort`, in
code), ``Deduce`` (:mod:`~kag_neo4j.solver.ops.deduce`: greater/less/equal in code, the other ops
one LLM call) and ``Output`` (:mod:`~kag_neo4j.solver.ops.output`).

Every action becomes a :class:`~kag_neo4j.solver.results.StepRecord`. A failing action (a Math
error, an unbound input) is recorded with its error and leaves its alias unbound; the run goes
on and the judge decides what to do about the gap.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

from kag_neo4j.errors import KagError, ModelUnavailableError, Neo4jUnavailableError
from kag_neo4j.solver.action import ActionContext
from kag_neo4j.solver.lf.ast import Action, Step
from kag_neo4j.solver.lf.registry import OPERATORS, OperatorRegistry
from kag_neo4j.solver.results import StepRecord
from kag_neo4j.solver.runtime import Runtime
from kag_neo4j.solver.validate import ValidatedPlan

__all__ = ["PlanExecutor"]


class PlanExecutor:
    """Executes the steps of a :class:`ValidatedPlan` against a :class:`Runtime`."""

    def __init__(self, rt: Runtime, operators: OperatorRegistry | None = None) -> None:
        self.rt = rt
        self.operators = OPERATORS if operators is None else operators
        self._run_outputs = True
        # action number -> the action as the planner wrote it (types and predicates before
        # standardisation), shown in records and the trace
        self._written: dict[int, str] = {}

    def run(
        self,
        plan: ValidatedPlan,
        *,
        written: Mapping[int, str] | None = None,
        skip: Collection[int] = (),
        first_layer: int = 0,
        run_outputs: bool = True,
    ) -> None:
        """Run every step of ``plan`` not in ``skip``, DAG layer by DAG layer.

        ``written`` maps action numbers to the text the planner wrote (before validation), shown
        in the records; ``run_outputs=False`` leaves out ``Output`` actions (the iterative
        planner's placeholder)."""
        self._written = dict(written or {})
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
            if action.operator.kind == "Output" and not self._run_outputs:
                continue
            self.run_action(plan, step, action, layer)

    def run_outputs(self, plan: ValidatedPlan, steps: Collection[int], layer: int) -> None:
        """Run the ``Output`` actions of the steps numbered ``steps`` (they ran already)."""
        for step, action in plan.plan.actions():
            if action.operator.kind == "Output" and step.number in steps:
                self.run_action(plan, step, action, layer)

    def run_action(self, plan: ValidatedPlan, step: Step, action: Action, layer: int) -> StepRecord:
        op = action.operator
        handler = self.operators.for_node(op).handler
        record = self.rt.new_record(
            op.kind, step=step.number, action=action.number, question=step.question,
            lf=self._written.get(action.number, op.to_text()), layer=layer,
        )
        ctx = ActionContext(self.rt, plan, step, action, record)
        began = time.perf_counter()
        try:
            handler(ctx, op)
        except (ModelUnavailableError, Neo4jUnavailableError):
            raise
        except KagError as exc:
            record.error = str(exc)
            if op.bound_alias is not None:
                ctx.bind(op.bound_alias, [], source="none")
        finally:
            record.ms = round((time.perf_counter() - began) * 1000, 2)
        return record

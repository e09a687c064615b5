"""The two ways a question's plan is made and run.

* :func:`run_static` — one planner call writes the whole plan (or, with ``SolverConfig.one_step``,
  none: the one-step plan); the executor runs it.
* :func:`run_iterative` — the planner writes one step at a time, shown the steps run so far
  with their results; each new step runs before the next is planned.

Both note the planning on a ``Plan`` record and leave the step records on the runtime.
"""

from __future__ import annotations

import time

from kag_neo4j.solver.executor import PlanExecutor
from kag_neo4j.solver.graph_schema import GraphSchema
from kag_neo4j.solver.lf.ast import Plan, Step
from kag_neo4j.solver.planner import Planner, fallback_plan
from kag_neo4j.solver.results import PlanOrigin
from kag_neo4j.solver.runtime import Runtime
from kag_neo4j.solver.validate import ValidatedPlan, validate_plan

__all__ = ["run_iterative", "run_static"]


def _validate(plan: Plan, schema: GraphSchema) -> ValidatedPlan:
    return validate_plan(plan, schema.simple_schema())


def _written(plan: Plan) -> dict[int, str]:
    """Each action as the planner wrote it (before validation standardises names)."""
    return {action.number: action.operator.to_text() for _, action in plan.actions()}


def run_static(
    rt: Runtime, planner: Planner, executor: PlanExecutor, schema: GraphSchema, question: str
) -> tuple[Plan, PlanOrigin]:
    """Plan the whole question with one call (none with ``SolverConfig.one_step``), then run the
    plan; the plan and how it came about."""
    record = rt.new_record("Plan", question=question, source="plan")
    began = time.perf_counter()
    origin: PlanOrigin
    plan, origin = (fallback_plan(question), "one step") if rt.config.one_step else planner.plan(question, record)
    validated = _validate(plan, schema)
    record.lf = plan.to_text()
    record.note += "; ".join(issue.message for issue in validated.warnings)
    if origin in ("fallback", "one step"):
        record.note = record.note or f"{origin} plan"
    record.ms = round((time.perf_counter() - began) * 1000, 2)
    executor.run(validated, written=_written(plan))
    return plan, origin


def run_iterative(
    rt: Runtime, planner: Planner, executor: PlanExecutor, schema: GraphSchema, question: str, *, max_iterations: int
) -> Plan | None:
    """Plan and run one step at a time, at most ``max_iterations`` planner rounds."""
    done: list[Step] = []
    results: dict[int, dict[str, str]] = {}
    current: Plan | None = None
    for iteration in range(max_iterations):
        record = rt.new_record("Plan", question=question, source="plan")
        began = time.perf_counter()
        step = planner.next_step(question, done, results, record)
        record.ms = round((time.perf_counter() - began) * 1000, 2)
        if step is None:
            break
        validated = _validate(step.plan, schema)
        new_numbers = {s.number for s in step.new_steps}
        record.lf = "\n".join(s.to_text() for s in step.plan.steps if s.number in new_numbers) or (
            step.plan.output.to_text()
        )
        current = step.plan
        known = {s.number for s in done}
        executor.run(
            validated, written=_written(step.plan), skip=known, first_layer=iteration, run_outputs=step.done
        )
        if step.done:  # an Output appended to a step that already ran
            executor.run_outputs(validated, known, iteration)
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
    actions = [a for a in step.actions if a.operator.kind != "Output"]
    return step.model_copy(update={"actions": actions}) if actions else step

"""How a solver method's static plans came about, counted over a run, and what planning cost each kind.

:meth:`kag_neo4j.solver.planner.Planner.plan` says how each plan came about (``Answer.plan_origin``):
its first reply parsed (``first try``), the reply to a repair message did (``repaired``), or neither,
and the run went on with the one-step fallback plan (``fallback``: retrieval on the question itself, then
a sub-answer, so a multi-hop question loses its hops); or the solver was configured to run that plan
without planning (``one step``, ``SolverConfig.one_step``). ``kag-neo4j eval`` counts them per solver method
with the mean seconds of the ``plan`` stage for each kind: what a repair and a fallback cost next to a plan
that parsed at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import get_args

from pydantic import BaseModel, Field

from kag_neo4j.eval.stages import StageCost
from kag_neo4j.solver.results import PlanOrigin

__all__ = ["ORIGINS", "PlanOrigins", "tally_plans"]

#: the kinds, in the order reports list them
ORIGINS: tuple[PlanOrigin, ...] = get_args(PlanOrigin)


class PlanOrigins(BaseModel):
    """Questions per kind of plan, and the mean seconds their planning took."""

    questions: dict[str, int] = Field(default_factory=dict, description="origin -> questions")
    plan_seconds: dict[str, float] = Field(default_factory=dict, description=(
        "origin -> mean seconds of the plan stage per question"))

    @property
    def total(self) -> int:
        return sum(self.questions.values())


def tally_plans(rows: Sequence[tuple[PlanOrigin | None, Mapping[str, StageCost]]]) -> PlanOrigins | None:
    """Count ``(plan origin, the question's stage costs)`` pairs; ``None`` when no row has an origin
    (not a solver method, or iterative planning)."""
    seconds: dict[PlanOrigin, list[float]] = {}
    for origin, stages in rows:
        if origin is not None:
            seconds.setdefault(origin, []).append(stages["plan"].seconds if "plan" in stages else 0.0)
    if not seconds:
        return None
    ordered = [origin for origin in ORIGINS if origin in seconds]
    return PlanOrigins(questions={origin: len(seconds[origin]) for origin in ordered},
                       plan_seconds={origin: sum(seconds[origin]) / len(seconds[origin]) for origin in ordered})

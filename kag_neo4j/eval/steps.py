"""How a solver run answered its Retrieval steps, scored against a question's gold hop answers.

A Retrieval step is answered *from the graph* (``StepRecord.source == "graph"``: stored facts bound its
output, no LLM call) or from chunks (a sub-answer call over retrieved passages). ``kag-neo4j eval``
counts both per question, and checks what graph-answered steps bound against the gold intermediate
answers the dataset gives (MuSiQue's ``question_decomposition``, 2Wiki's ``evidences``) and the final
answer: the figures a confidence policy for graph facts is judged by (``SolverConfig.graph_confidence``).

A bound value *matches* a gold answer when their normalised texts (:func:`kag_neo4j.eval.metrics.normalize_answer`)
are equal or one holds the other as whole words ("Ermengarde of Tours" matches "Ermengarde"; a step that
bound "Paris, Lyon" matches "Lyon"). A step matches when any value it bound matches any gold answer.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from kag_neo4j.eval import metrics
from kag_neo4j.solver.results import Answer

__all__ = ["StepOutcome", "StepTally", "step_outcomes", "tally_steps"]


class StepOutcome(BaseModel):
    """One Retrieval step of a run: where its answer came from and what it bound."""

    source: str
    values: list[str] = Field(default_factory=list)


class StepTally(BaseModel):
    """One question's Retrieval steps: how many, how many the graph answered, and how many of those
    bound a gold hop answer (``None`` when the question has no gold hop answers)."""

    steps: int
    graph: int
    graph_gold: int | None = None


def step_outcomes(answer: Answer) -> list[StepOutcome]:
    """The run's Retrieval steps, in execution order."""
    return [StepOutcome(source=record.source, values=[str(value) for value in record.outputs.values()])
            for record in answer.steps if record.op == "Retrieval"]


def _matches(value: str, gold: str) -> bool:
    a, b = metrics.normalize_answer(value), metrics.normalize_answer(gold)
    if not a or not b:
        return False
    return a == b or f" {b} " in f" {a} " or f" {a} " in f" {b} "


def tally_steps(outcomes: Sequence[StepOutcome], gold: Sequence[str]) -> StepTally:
    """Count ``outcomes``; ``gold``: the question's hop answers and final answers (empty: not scored)."""
    graph = [outcome for outcome in outcomes if outcome.source == "graph"]
    hits = None
    if gold:
        hits = sum(any(_matches(value, answer) for value in outcome.values for answer in gold) for outcome in graph)
    return StepTally(steps=len(outcomes), graph=len(graph), graph_gold=hits)

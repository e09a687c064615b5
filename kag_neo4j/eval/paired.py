"""Paired differences of each method to a baseline, with bootstrap intervals over the questions.

A table of means cannot say whether +2 points of recall over 50 questions is a gain or chance:
one question is worth 2 points. Every method is therefore compared with a baseline *on the same
questions*: the per-question difference of a metric, its mean, and a percentile bootstrap 95 %
interval (:func:`kag_neo4j.eval.metrics.paired_bootstrap`, 10,000 resamples, seed 0). An interval
that excludes 0 marks a difference the questions support.

Baselines: recall (R@k) is compared with ``dense``, or with ``naive`` (dense top-k too) when the
run has no ``dense``; EM and F1 with ``naive``. A failed question scores 0, as in the means; a
question without gold passages has no recall and is left out of the recall pairs.

For exact match the pairs are also counted by outcome (:class:`Outcomes`): the questions both
methods got right, those only one of them got right, and those neither did. The two middle counts
are what the EM difference is made of.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel

from kag_neo4j.eval.metrics import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, PairedDifference, paired_bootstrap

if TYPE_CHECKING:
    from kag_neo4j.eval.runner import MethodSummary, QuestionResult

__all__ = ["QA_BASELINES", "RECALL_BASELINES", "Bootstrap", "Difference", "Outcomes", "compare_to_baselines", "outcomes"]

#: the first of these in a run is the recall baseline
RECALL_BASELINES: tuple[str, ...] = ("dense", "naive")
#: the first of these in a run is the EM / F1 baseline
QA_BASELINES: tuple[str, ...] = ("naive",)


class Bootstrap(BaseModel):
    """How the intervals were drawn (stored with the run)."""

    resamples: int = BOOTSTRAP_RESAMPLES
    seed: int = BOOTSTRAP_SEED
    confidence: float = 0.95


class Difference(PairedDifference):
    """A method minus ``baseline`` on ``metric`` (``R@2``, ``R@5``, ``EM``, ``F1``), as fractions."""

    metric: str
    baseline: str


class Outcomes(BaseModel):
    """Exact-match outcomes of a method and ``baseline`` on the same questions, counted."""

    baseline: str
    both: int
    only_method: int
    only_baseline: int
    neither: int


def outcomes(mine: Sequence[float], theirs: Sequence[float], baseline: str) -> Outcomes:
    """Count the paired exact-match scores (1 right, 0 wrong; a failed question is wrong)."""
    pairs = [(a >= 1.0, b >= 1.0) for a, b in zip(mine, theirs, strict=True)]
    return Outcomes(baseline=baseline, both=pairs.count((True, True)), only_method=pairs.count((True, False)),
                    only_baseline=pairs.count((False, True)), neither=pairs.count((False, False)))


def _score(row: QuestionResult, metric: str) -> float | None:
    if row.error is not None:
        return 0.0  # a failed question is a miss, as in the means (`_measured` says whether it is measured)
    if metric.startswith("R@"):
        return row.recall.get(metric[2:])
    return row.em if metric == "EM" else row.f1


def _measured(rows: Mapping[str, QuestionResult], metric: str) -> bool:
    return any(row.error is None and _score(row, metric) is not None for row in rows.values())


def _pairs(
    rows: Mapping[str, QuestionResult], base: Mapping[str, QuestionResult], metric: str, question_ids: Sequence[str]
) -> tuple[list[float], list[float]]:
    mine: list[float] = []
    theirs: list[float] = []
    for question_id in question_ids:
        if question_id not in rows or question_id not in base:
            continue
        a, b = _score(rows[question_id], metric), _score(base[question_id], metric)
        if a is not None and b is not None:
            mine.append(a)
            theirs.append(b)
    return mine, theirs


def compare_to_baselines(
    summaries: Sequence[MethodSummary],
    results: Mapping[str, Mapping[str, QuestionResult]],
    question_ids: Sequence[str],
    k_values: Sequence[int],
    bootstrap: Bootstrap,
) -> None:
    """Fill each summary's ``differences`` (metric -> :class:`Difference`) against its baselines, and
    its EM ``outcomes`` against the QA baseline.

    ``results`` maps method -> question id -> row. A baseline is not compared with itself; a
    metric a method (or its baseline) does not measure gets no difference.
    """
    names = [summary.method for summary in summaries]
    recall_base = next((name for name in RECALL_BASELINES if name in names), None)
    qa_base = next((name for name in QA_BASELINES if name in names), None)
    plan = [(f"R@{k}", recall_base) for k in k_values] + [("EM", qa_base), ("F1", qa_base)]
    for summary in summaries:
        rows = results.get(summary.method, {})
        for metric, baseline in plan:
            if baseline is None or baseline == summary.method:
                continue
            base = results.get(baseline, {})
            if not (_measured(rows, metric) and _measured(base, metric)):
                continue
            mine, theirs = _pairs(rows, base, metric, question_ids)
            found = paired_bootstrap(mine, theirs, resamples=bootstrap.resamples, seed=bootstrap.seed,
                                     confidence=bootstrap.confidence)
            if metric == "EM" and mine:
                summary.outcomes = outcomes(mine, theirs, baseline)
            if found is not None:
                summary.differences[metric] = Difference(**found.model_dump(), metric=metric, baseline=baseline)

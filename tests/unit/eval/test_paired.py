"""Paired differences to a baseline with bootstrap intervals: the bootstrap, the pairing, the table."""

from __future__ import annotations

import pytest

from kag_neo4j.eval.metrics import paired_bootstrap
from kag_neo4j.eval.paired import Bootstrap, compare_to_baselines
from kag_neo4j.eval.report import markdown
from kag_neo4j.eval.runner import EvalRun, MethodSummary, QuestionResult


def test_identical_methods_differ_by_zero() -> None:
    scores = [0.0, 0.5, 1.0, 1.0, 0.25, 0.0, 1.0]
    found = paired_bootstrap(scores, list(scores))
    assert found is not None
    assert (found.mean, found.low, found.high, found.n) == (0.0, 0.0, 0.0, 7)
    assert not found.excludes_zero


def test_a_constant_gain_of_one_has_the_interval_one_one() -> None:
    base = [0.0, 0.0, 0.0, 0.0, 0.0]
    found = paired_bootstrap([1.0] * 5, base)
    assert found is not None and (found.mean, found.low, found.high) == (1.0, 1.0, 1.0)
    assert found.excludes_zero


def test_the_interval_matches_the_normal_approximation_for_many_questions() -> None:
    # 200 questions, half gain one point of a unit metric: mean 0.5, standard error 0.5 / sqrt(200)
    gains = [1.0, 0.0] * 100
    found = paired_bootstrap(gains, [0.0] * 200)
    assert found is not None and found.mean == 0.5
    half_width = 1.96 * 0.5 / 200**0.5
    assert found.low == pytest.approx(0.5 - half_width, abs=0.01)
    assert found.high == pytest.approx(0.5 + half_width, abs=0.01)


def test_a_balanced_difference_straddles_zero() -> None:
    found = paired_bootstrap([1.0, 0.0] * 25, [0.0, 1.0] * 25)
    assert found is not None and found.mean == 0.0
    assert found.low < 0 < found.high and not found.excludes_zero


def test_the_same_seed_gives_the_same_interval_and_another_seed_another() -> None:
    a = [(7 * i % 13) / 13 for i in range(30)]  # many distinct values: the resampled means rarely tie
    b = [(5 * i % 11) / 11 for i in range(30)]
    first = paired_bootstrap(a, b, seed=7, resamples=200)
    assert first == paired_bootstrap(a, b, seed=7, resamples=200)
    other = paired_bootstrap(a, b, seed=8, resamples=200)
    assert other is not None and first is not None and (other.low, other.high) != (first.low, first.high)
    assert other.mean == first.mean


def test_bad_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match="one value per question"):
        paired_bootstrap([1.0], [1.0, 0.0])
    with pytest.raises(ValueError, match="resample"):
        paired_bootstrap([1.0], [1.0], resamples=0)
    assert paired_bootstrap([], []) is None


def _row(method: str, qid: str, r5: float | None, *, f1: float | None = None, error: str | None = None) -> QuestionResult:
    return QuestionResult(method=method, question_id=qid, question="?", gold_answers=["a"], gold_units=["t"],
                          recall={"5": r5}, f1=f1, em=f1,
                          answer=None if f1 is None else "x", error=error)


def _summary(method: str, rows: list[QuestionResult]) -> MethodSummary:
    return MethodSummary(method=method, questions=len(rows), errors=0, recall={})


def test_methods_are_paired_with_dense_question_by_question() -> None:
    results = {
        "dense": {"q1": _row("dense", "q1", 1.0), "q2": _row("dense", "q2", 0.0), "q3": _row("dense", "q3", 0.5)},
        # q2 failed: a miss (0), as in the means; q3 is scored against dense's q3, not its mean
        "ours": {"q1": _row("ours", "q1", 1.0), "q2": _row("ours", "q2", None, error="boom"),
                 "q3": _row("ours", "q3", 1.0)},
    }
    summaries = [_summary(name, list(rows.values())) for name, rows in results.items()]
    compare_to_baselines(summaries, results, ["q1", "q2", "q3"], [5], Bootstrap(resamples=500))
    dense, ours = summaries
    assert dense.differences == {}, "the baseline is not compared with itself"
    difference = ours.differences["R@5"]
    assert difference.baseline == "dense" and difference.n == 3
    assert difference.mean == pytest.approx((0.0 + 0.0 + 0.5) / 3)
    assert 0.0 <= difference.low <= difference.mean <= difference.high <= 0.5


def test_qa_is_compared_with_naive_and_recall_falls_back_to_it_without_dense() -> None:
    results = {
        "naive": {"q1": _row("naive", "q1", 0.5, f1=1.0), "q2": _row("naive", "q2", 0.5, f1=0.0)},
        "ours": {"q1": _row("ours", "q1", 1.0, f1=1.0), "q2": _row("ours", "q2", 1.0, f1=1.0)},
        "graphrag-vector": {"q1": _row("graphrag-vector", "q1", 0.5), "q2": _row("graphrag-vector", "q2", 0.0)},
    }
    summaries = [_summary(name, list(rows.values())) for name, rows in results.items()]
    compare_to_baselines(summaries, results, ["q1", "q2"], [5], Bootstrap(resamples=500))
    naive, ours, vector = summaries
    assert naive.differences == {}
    assert ours.differences["R@5"].baseline == "naive" and ours.differences["R@5"].mean == 0.5
    assert ours.differences["F1"].baseline == "naive" and ours.differences["F1"].mean == 0.5
    assert set(vector.differences) == {"R@5"}, "a retrieval-only method has no EM/F1 difference"


def _run_with_differences() -> EvalRun:
    results = {
        "dense": {f"q{i}": _row("dense", f"q{i}", 0.0) for i in range(10)},
        "ours": {f"q{i}": _row("ours", f"q{i}", 1.0 if i < 5 else 0.0) for i in range(10)},
    }
    summaries = [MethodSummary(method=name, questions=10, errors=0, recall={"5": 0.0 if name == "dense" else 0.5})
                 for name in results]
    bootstrap = Bootstrap()
    compare_to_baselines(summaries, results, [f"q{i}" for i in range(10)], [5], bootstrap)
    return EvalRun(dataset="d", format="musique", questions_file="q.json", corpus_file="c.json", recall_unit="title",
                   questions=10, k_values=[5], embedder="e", database="neo4j", started_at="now", seconds=1.0,
                   methods=summaries, rows=[], bootstrap=bootstrap)


def test_the_table_has_a_difference_column_with_its_interval() -> None:
    run = _run_with_differences()
    ours = run.methods[1].differences["R@5"]
    text = markdown(run)
    assert "| method | R@5 | ΔR@5 vs dense | ms p50/p95 | errors |" in text
    assert "| dense | 0.0 | base |" in text
    cell = f"+50.0 [{100 * ours.low:+.1f}, {100 * ours.high:+.1f}]*"
    assert f"| ours | 50.0 | {cell} |" in text and ours.low > 0
    assert "10,000 resamples, seed 0" in text


def test_exact_match_outcomes_are_counted_question_by_question() -> None:
    em = {"naive": [1.0, 1.0, 0.0, 0.0, 0.0, 1.0], "ours": [1.0, 0.0, 1.0, 1.0, 0.0, None]}
    results = {
        name: {f"q{i}": _row(name, f"q{i}", None, f1=score, error=None if score is not None else "timeout")
               for i, score in enumerate(scores)}
        for name, scores in em.items()
    }
    summaries = [_summary(name, list(rows.values())) for name, rows in results.items()]
    compare_to_baselines(summaries, results, [f"q{i}" for i in range(6)], [5], Bootstrap(resamples=200))
    naive, ours = summaries
    assert naive.outcomes is None, "the baseline is not compared with itself"
    assert ours.outcomes is not None
    # q0 both; q1 and q5 (ours failed: wrong) only naive; q2, q3 only ours; q4 neither
    counts = (ours.outcomes.both, ours.outcomes.only_method, ours.outcomes.only_baseline, ours.outcomes.neither)
    assert counts == (1, 2, 2, 1)
    assert ours.differences["EM"].mean == pytest.approx((2 - 2) / 6)
    run = EvalRun(dataset="d", format="musique", questions_file="q.json", corpus_file="c.json", recall_unit="title",
                  questions=6, k_values=[5], embedder="e", database="neo4j", started_at="now", seconds=1.0,
                  methods=summaries, rows=[], bootstrap=Bootstrap(resamples=200))
    assert ("ours vs naive, exact match per question: both right 1, only ours 2, only naive 2, neither 1"
            in markdown(run))

"""Metrics against hand-computed examples: SQuAD normalisation, EM/F1 over aliases, recall@k."""

from __future__ import annotations

import pytest

from kag_neo4j.eval.metrics import (
    best_exact_match,
    best_f1,
    exact_match,
    first_distinct,
    mean,
    normalize_answer,
    percentile,
    recall_at_k,
    token_f1,
)


@pytest.mark.parametrize(
    ("raw", "normal"),
    [
        ("The Eiffel Tower", "eiffel tower"),
        ("  G. Stanley   Hall. ", "g stanley hall"),
        ("an apple, a pear & the fig!", "apple pear fig"),
        ("Theater", "theater"),  # 'the' only as a whole word
        ("Anne-Marie O'Neil", "annemarie oneil"),  # punctuation is dropped, not turned into spaces
        ("A", ""),
        ("1,000 (approx.)", "1000 approx"),
    ],
)
def test_squad_normalisation(raw: str, normal: str) -> None:
    assert normalize_answer(raw) == normal


def test_exact_match_after_normalisation() -> None:
    assert exact_match("the Stanley Hall.", "Stanley Hall") == 1.0
    assert exact_match("Stanley Hall Jr", "Stanley Hall") == 0.0


def test_token_f1_by_hand() -> None:
    # prediction tokens: [g, stanley, hall, university] ; gold: [stanley, hall] -> 2 common
    # precision 2/4, recall 2/2, F1 = 2 * 0.5 * 1 / 1.5 = 0.6667
    assert token_f1("G. Stanley Hall University", "Stanley Hall") == pytest.approx(2 / 3)
    # repeated tokens count once per occurrence in both: [new, new, york] vs [new, york] -> 2 common
    # precision 2/3, recall 1 -> 0.8
    assert token_f1("new new York", "New York") == pytest.approx(0.8)
    assert token_f1("Paris", "London") == 0.0
    assert token_f1("the", "a") == 0.0, "nothing is left after normalisation: no common token"


def test_the_best_alias_wins() -> None:
    golds = ["G. Stanley Hall", "Stanley Hall"]
    assert best_exact_match("stanley hall", golds) == 1.0
    # against alias 2: precision 2/3, recall 1 -> 0.8; against the answer: 2 common of 3 and 3 -> 0.6667
    assert best_f1("Stanley Hall psychologist", golds) == pytest.approx(0.8)
    assert best_exact_match("Hall", golds) == 0.0 and best_f1("Hall", golds) == pytest.approx(2 * (1 * 0.5) / 1.5)
    with pytest.raises(ValueError, match="at least one gold answer"):
        best_f1("x", [])


def test_recall_at_k_by_hand() -> None:
    retrieved = ["a", "x", "a", "b", "y", "c"]  # 'a' twice: two chunks of one passage count once
    assert first_distinct(retrieved, 3) == ["a", "x", "b"]
    assert recall_at_k(retrieved, {"a", "b"}, 2) == 0.5
    assert recall_at_k(retrieved, {"a", "b"}, 3) == 1.0
    assert recall_at_k(retrieved, ["a", "b", "c", "d"], 5) == 0.75  # a, x, b, y, c -> 3 of 4
    assert recall_at_k([], {"a"}, 5) == 0.0
    assert recall_at_k(retrieved, set(), 5) is None
    with pytest.raises(ValueError):
        recall_at_k(retrieved, {"a"}, 0)


def test_mean_skips_missing_values_and_percentiles_interpolate() -> None:
    assert mean([1.0, None, 0.0]) == 0.5 and mean([None]) is None
    values = [10.0, 20.0, 30.0, 40.0]
    assert percentile(values, 50) == 25.0  # halfway between 20 and 30
    assert percentile(values, 95) == pytest.approx(38.5)  # position 2.85 -> 30 + 0.85 * 10
    assert percentile([7.0], 95) == 7.0 and percentile([], 50) is None
    with pytest.raises(ValueError):
        percentile(values, 101)

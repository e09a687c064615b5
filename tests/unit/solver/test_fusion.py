"""Reciprocal Rank Fusion: the reference the Cypher version is tested against."""

from __future__ import annotations

import math

import pytest

from kag_neo4j.solver.fusion import DEFAULT_K, rrf


def test_hand_computed_example() -> None:
    # dense: a b c ; ppr: c a d ; fulltext: d c     weights dense 1.0, ppr 0.5, fulltext 2.0, k = 60
    lists = {"dense": ["a", "b", "c"], "ppr": ["c", "a", "d"], "fulltext": ["d", "c"]}
    weights = {"dense": 1.0, "ppr": 0.5, "fulltext": 2.0}
    a = 1.0 / (60 + 1) + 0.5 / (60 + 2)  # 0.016393 + 0.008065 = 0.024458
    b = 1.0 / (60 + 2)  # 0.016129
    c = 1.0 / (60 + 3) + 0.5 / (60 + 1) + 2.0 / (60 + 2)  # 0.015873 + 0.008197 + 0.032258 = 0.056328
    d = 0.5 / (60 + 3) + 2.0 / (60 + 1)  # 0.007937 + 0.032787 = 0.040724
    result = rrf(lists, weights)
    assert [doc for doc, _ in result] == ["c", "d", "a", "b"]
    for (doc, score), expected in zip(result, [c, d, a, b], strict=True):
        assert score == pytest.approx(expected, rel=1e-12), doc
    assert result[0][1] == pytest.approx(0.056328, abs=1e-6)


def test_default_weights_and_k() -> None:
    assert DEFAULT_K == 60
    result = dict(rrf({"x": ["a", "b"], "y": ["b"]}))
    assert result["a"] == pytest.approx(1 / 61)
    assert result["b"] == pytest.approx(1 / 62 + 1 / 61)


def test_custom_k() -> None:
    assert rrf({"x": ["a", "b"]}, k=0) == [("a", 1.0), ("b", 0.5)]


@pytest.mark.parametrize("lists", [{}, {"x": []}, {"x": [], "y": []}])
def test_empty_inputs(lists: dict[str, list[str]]) -> None:
    assert rrf(lists) == []


def test_one_list_keeps_its_order() -> None:
    docs = ["d3", "d1", "d2", "d9"]
    result = rrf({"only": docs})
    assert [doc for doc, _ in result] == docs
    assert [score for _, score in result] == [1 / 61, 1 / 62, 1 / 63, 1 / 64]


def test_ties_break_by_best_rank_then_id() -> None:
    # a: rank 1 + rank 3 ; b: rank 3 + rank 1  -> equal scores and equal best rank -> id order
    result = rrf({"x": ["a", "m", "b"], "y": ["b", "n", "a"]})
    assert [doc for doc, _ in result][:2] == ["a", "b"]
    assert result[0][1] == result[1][1]
    # equal scores, different best ranks: a2 at rank 2 of x (weight 1) scores 1/62; z9 at rank 1
    # of y (weight 61/62) scores (61/62)/61 = 1/62. z9 has the better best rank (1 < 2), so it comes
    # first although id order alone would put a2 first.
    tie = rrf({"x": ["q", "a2"], "y": ["z9"]}, {"x": 1.0, "y": 61 / 62})
    scores = dict(tie)
    assert scores["a2"] == pytest.approx(1 / 62) and scores["z9"] == pytest.approx(1 / 62)
    assert [doc for doc, _ in tie] == ["q", "z9", "a2"]
    # the order is the same whatever order the lists are given in
    assert rrf({"y": ["b", "n", "a"], "x": ["a", "m", "b"]}) == result


def test_ties_between_floating_sums_are_not_decided_by_summation_order() -> None:
    lists = {"l1": ["p", "q"], "l2": ["q", "p"], "l3": ["p", "q"], "l4": ["q", "p"]}
    result = rrf(lists)
    assert result[0][1] == pytest.approx(result[1][1])
    assert [doc for doc, _ in result] == ["p", "q"]  # tie on score and best rank -> id


def test_zero_weights() -> None:
    result = rrf({"dense": ["a", "b"], "ppr": ["c", "a"]}, {"dense": 1.0, "ppr": 0.0})
    assert result == [("a", 1 / 61), ("b", 1 / 62)]  # c, only in the zero-weight list, is left out
    assert rrf({"dense": ["a"]}, {"dense": 0.0}) == []


def test_duplicates_in_one_list_count_once_at_their_best_rank() -> None:
    assert rrf({"x": ["a", "b", "a"]}) == [("a", 1 / 61), ("b", 1 / 62)]


def test_weights_validation() -> None:
    with pytest.raises(ValueError, match="no RRF weight for ranked list"):
        rrf({"dense": ["a"], "ppr": ["b"]}, {"dense": 1.0})
    with pytest.raises(ValueError, match=">= 0"):
        rrf({"dense": ["a"]}, {"dense": -1.0})
    with pytest.raises(ValueError, match=">= 0"):
        rrf({"dense": ["a"]}, {"dense": math.nan})
    with pytest.raises(ValueError, match="k must be"):
        rrf({"dense": ["a"]}, k=-1)
    # extra weights for absent lists are fine
    assert rrf({"dense": ["a"]}, {"dense": 1.0, "ppr": 0.3}) == [("a", 1 / 61)]

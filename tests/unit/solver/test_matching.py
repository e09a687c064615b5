"""The deterministic matching that decides when graph facts answer a step without a model."""

from __future__ import annotations

import pytest

from kag_neo4j.solver.matching import (
    fits_type,
    looks_like_value,
    name_similarity,
    predicate_similarity,
    stem,
)
from kag_neo4j.solver.validate import VALUE_TYPES


@pytest.mark.parametrize(
    ("wanted", "found"),
    [("foundedIn", "founded_in"), ("founded", "found in"), ("founder", "founded"), ("openedIn", "opened"),
     ("bornIn", "born in"), ("designed", "design")],
)
def test_same_meaning_predicates_match_strongly(wanted: str, found: str) -> None:
    assert predicate_similarity(wanted, found) >= 0.85


@pytest.mark.parametrize(
    ("wanted", "found"),
    [("foundedIn", "merged"), ("birthPlace", "born in"), ("openedIn", "designed"), ("bornIn", "")],
)
def test_different_predicates_do_not(wanted: str, found: str) -> None:
    assert predicate_similarity(wanted, found) < 0.85


def test_chinese_predicates_compare_by_bigrams() -> None:
    assert predicate_similarity("出生地", "出生地") == 1.0
    assert predicate_similarity("出生于", "出生地") < 0.85
    assert predicate_similarity("创立", "出生于") == 0.0


def test_stems() -> None:
    assert {stem(w) for w in ("founded", "founder", "founding", "found")} == {"found"}
    assert stem("running") == "run" and stem("merged") == stem("merge")


@pytest.mark.parametrize(
    ("mention", "name", "close"),
    [("Harrow Valley Rail Company", "the Harrow Valley Rail Company", True), ("ada pembroke", "Ada Pembroke", True),
     ("王明远", "王明远", True), ("Millbrook Viaduct", "Millbrook", True), ("Kestrel Bay", "Saltmere", False),
     ("Harrow Valley Rail Company", "Harrow River", False)],
)
def test_name_similarity(mention: str, name: str, close: bool) -> None:
    assert (name_similarity(mention, name) >= 0.8) is close


def test_fits_type() -> None:
    assert fits_type("1871", "Year", VALUE_TYPES) and fits_type(1871, "Date", VALUE_TYPES)
    assert not fits_type("Ada Pembroke", "Year", VALUE_TYPES)
    assert fits_type("412 metres", "Integer", VALUE_TYPES) and not fits_type("many", "Number", VALUE_TYPES)
    assert fits_type("Kestrel Bay", "Town", VALUE_TYPES) and not fits_type("1871", "Person", VALUE_TYPES)
    assert fits_type("anything", None, VALUE_TYPES) and not fits_type("  ", None, VALUE_TYPES)
    assert looks_like_value("1950年") and not looks_like_value("杭州")


def test_a_concept_membership_answers_a_step_asking_for_its_class() -> None:
    from kag_neo4j.solver.matching import membership_similarity

    classes = ["TaxOfRiskUser"]
    # KAG's form: the object typed by the concept type, whatever the predicate word
    assert membership_similarity("anything", "TaxOfRiskUser", classes, "赌博App开发者") == 1.0
    # the predicate's words are the class type's, or it spells out the concept's name
    assert membership_similarity("isRiskUser", "Boolean", classes, "赌博App开发者") >= 0.85
    assert membership_similarity("是赌博App老板", None, classes, "赌博App老板") >= 0.85
    # a word the class shares by accident, or an unrelated predicate, is no match
    assert membership_similarity("app", "App", classes, "赌博App开发者") < 0.85
    assert membership_similarity("bornIn", None, classes, "赌博App老板") < 0.85
    assert membership_similarity("riskLevel", None, classes, "赌博App开发者") < 0.85


def test_a_hierarchical_name_answers_to_its_leaf() -> None:
    from kag_neo4j.solver.matching import hierarchy_leaf

    assert hierarchy_leaf("商品化工-橡胶-合成橡胶-顺丁橡胶") == "顺丁橡胶"
    assert hierarchy_leaf("materials-chemicals-rubber") == "rubber"
    for name in ("Jean-Paul Sartre", "Baden-Württemberg", "a--b", "顺丁橡胶", "x-y-"):
        assert hierarchy_leaf(name) is None, name

"""Deterministic Sort and Deduce, and the LLM Deduce boundary."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from kag_neo4j.errors import OperatorError
from kag_neo4j.prompts.deduce import DeduceResponse
from kag_neo4j.solver.lf.ast import DeduceOp
from kag_neo4j.solver.lf.parse import parse_plan
from kag_neo4j.solver.ops.deduce import (
    DeduceOutcome,
    DeduceRequest,
    compare_values,
    deduce,
    deduce_compare,
    run_deduce,
)
from kag_neo4j.solver.ops.sort import sort_items

MUSEUMS = [
    {"name": "Rijksmuseum", "visitors": "2,700,000"},
    {"name": "Van Gogh Museum", "visitors": 2_100_000},
    {"name": "Anne Frank House", "visitors": ["1,300,000"]},
    {"name": "Unknown Museum"},
    {"name": "Stedelijk", "visitors": "700000"},
]


def names(items: list[dict[str, object]]) -> list[object]:
    return [item["name"] for item in items]


def test_sort_numbers_read_from_text() -> None:
    assert names(sort_items(MUSEUMS, "visitors", "max", 1)) == ["Rijksmuseum"]
    assert names(sort_items(MUSEUMS, "visitors", "min", 2)) == ["Stedelijk", "Anne Frank House"]
    assert names(sort_items(MUSEUMS, "visitors", "max", None)) == [
        "Rijksmuseum",
        "Van Gogh Museum",
        "Anne Frank House",
        "Stedelijk",
        "Unknown Museum",
    ]  # missing values go last in both directions
    assert names(sort_items(MUSEUMS, "visitors", "min", None))[-1] == "Unknown Museum"


def test_sort_dates_of_mixed_precision_and_formats() -> None:
    clubs = [
        {"name": "Real Madrid", "founded": "6 March 1902"},
        {"name": "Barcelona", "founded": "1899-11-29"},
        {"name": "Atlético", "founded": "1903"},
        {"name": "Sevilla", "founded": "1890年1月25日"},
    ]
    assert names(sort_items(clubs, "founded", "min", None)) == [
        "Sevilla",
        "Barcelona",
        "Real Madrid",
        "Atlético",
    ]
    assert names(sort_items(clubs, "founded", "max", 1)) == ["Atlético"]


def test_sort_text_is_case_and_width_insensitive() -> None:
    assert sort_items(["banana", "Apple", "ｃherry"], None, "min", None) == ["Apple", "banana", "ｃherry"]


def test_sort_ties_keep_input_order_and_are_deterministic() -> None:
    items = [{"id": i, "score": s} for i, s in enumerate([3, 1, 3, 2, 1, 3])]
    assert [i["id"] for i in sort_items(items, "score", "max", None)] == [0, 2, 5, 3, 1, 4]
    assert [i["id"] for i in sort_items(items, "score", "min", None)] == [1, 4, 3, 0, 2, 5]
    for _ in range(3):
        assert sort_items(items, "score", "max", 3) == sort_items(list(items), "score", "max", 3)


def test_sort_keys_callable_path_and_models() -> None:
    class Item(BaseModel):
        name: str
        size: int

    models = [Item(name="a", size=3), Item(name="b", size=1)]
    assert [m.name for m in sort_items(models, "size", "min", 1)] == ["b"]
    assert [m.name for m in sort_items(models, lambda m: -m.size, "min", 1)] == ["a"]
    nested = [{"stats": {"height": "1.87 m"}}, {"stats": {"height": "1.70 m"}}]
    assert sort_items(nested, "stats.height", "min", 1) == [nested[1]]
    # private attributes are never read by name
    assert sort_items(models, "__class__", "min", None) == models


def test_sort_rejects_bad_arguments() -> None:
    with pytest.raises(OperatorError, match="direction"):
        sort_items([1], None, "up", 1)  # type: ignore[arg-type]
    with pytest.raises(OperatorError, match="at least 1"):
        sort_items([1], None, "min", 0)
    with pytest.raises(OperatorError, match="holds 2 values"):
        sort_items([{"v": [1, 2]}], "v", "min", 1)
    assert sort_items([], "v", "min", 1) == []


@pytest.mark.parametrize(
    ("op", "values", "expected"),
    [
        ("greater", ["2,700,000", 2_100_000], True),
        ("greater", [1899, "1902"], False),
        ("less", ["1899-11-29", "6 March 1902"], True),
        ("less", [["12"], "12"], False),
        ("greater", ["1902", "1902-03-06"], False),  # equal at the shared (year) precision
        ("equal", ["1,000", 1000, "1000.0"], True),
        ("equal", ["1902-03-06", "6 March 1902", "1902年3月6日"], True),
        ("equal", ["Real Madrid", "  real madrid ", "REAL MADRID."], True),
        ("equal", ["Real Madrid", "Barcelona"], False),
        ("equal", [["Spain", "Portugal"], ["portugal", "spain"]], True),
        ("equal", [["Spain", "Portugal"], "Spain"], False),
        ("equal", [0.1 + 0.2, 0.3], True),
    ],
)
def test_deduce_compare(op: str, values: list[object], expected: bool) -> None:
    outcome = deduce_compare(op, values)  # type: ignore[arg-type]
    assert outcome.answer is expected
    assert outcome.deterministic
    assert outcome.explanation.endswith("true" if expected else "false")


def test_deduce_compare_refuses_what_it_cannot_decide() -> None:
    with pytest.raises(OperatorError, match="neither numbers nor dates"):
        deduce_compare("greater", ["Real Madrid", "Barcelona"])
    with pytest.raises(OperatorError, match="exactly two"):
        deduce_compare("less", [1, 2, 3])
    with pytest.raises(OperatorError, match="at least two"):
        deduce_compare("equal", [1])
    with pytest.raises(OperatorError, match="missing"):
        compare_values(None, 1)
    with pytest.raises(OperatorError, match="not a deterministic"):
        deduce_compare("judgement", [1, 2])  # type: ignore[arg-type]


def test_compare_values() -> None:
    assert compare_values("1,000", 999) == 1
    assert compare_values("1902", "1902") == 0
    assert compare_values("1 May 2011", "2011-05-02") == -1


def test_llm_ops_return_a_request() -> None:
    request = deduce(
        "choice",
        [("o1", ["Real Madrid", "Barcelona"]), (None, "Sevilla")],
        target="Which is oldest?",
        question="Which club is the oldest?",
    )
    assert isinstance(request, DeduceRequest)
    assert request.options == ["Real Madrid", "Barcelona", "Sevilla"]
    assert [e.alias for e in request.content] == ["o1", None]
    assert request.content[0].text == "Real Madrid, Barcelona"
    assert request.response_model is DeduceResponse


@pytest.mark.parametrize(
    ("op", "response", "expected"),
    [
        ("judgement", DeduceResponse(answer="Yes"), "yes"),
        ("judgement", DeduceResponse(answer="否"), "no"),
        ("judgement", DeduceResponse(answer="unknown"), "unknown"),
        ("entailment", DeduceResponse(answer="Contradiction."), "contradiction"),
        ("choice", DeduceResponse(answer="barcelona"), "Barcelona"),
        (
            "multiChoice",
            DeduceResponse(answers=["Sevilla", "real madrid", "Sevilla"]),
            ["Sevilla", "Real Madrid"],
        ),
        ("extract", DeduceResponse(answer="1902"), ["1902"]),
        ("extract", DeduceResponse(answers=["a", " ", "b"]), ["a", "b"]),
    ],
)
def test_request_resolves_a_fitting_response(op: str, response: DeduceResponse, expected: object) -> None:
    request = deduce(op, [(None, "Real Madrid"), (None, "Barcelona"), (None, "Sevilla")])
    assert isinstance(request, DeduceRequest)
    outcome = request.resolve(response)
    assert isinstance(outcome, DeduceOutcome)
    assert outcome.answer == expected
    assert not outcome.deterministic


@pytest.mark.parametrize(
    ("op", "response", "message"),
    [
        ("judgement", DeduceResponse(answer="maybe"), "not one of yes, no, unknown"),
        ("entailment", DeduceResponse(answer="yes"), "not one of entailment, contradiction, neutral"),
        ("choice", DeduceResponse(answer="Valencia"), "not one of the options"),
        ("multiChoice", DeduceResponse(answers=["Real Madrid", "Valencia"]), "not one of the options"),
    ],
)
def test_request_rejects_a_response_that_does_not_fit(
    op: str, response: DeduceResponse, message: str
) -> None:
    request = deduce(op, [(None, "Real Madrid"), (None, "Barcelona")])
    assert isinstance(request, DeduceRequest)
    with pytest.raises(OperatorError, match=message):
        request.resolve(response)


def test_unknown_op() -> None:
    with pytest.raises(OperatorError, match="unknown Deduce op"):
        deduce("guess", [])


def test_run_deduce_on_parsed_nodes() -> None:
    plan = parse_plan(
        "Step1: a\nAction1: Retrieval(s=s1:River[`Danube`], p=p1:length, o=o1)\n"
        "Step2: b\nAction2: Retrieval(s=s2:River[`Rhine`], p=p2:length, o=o2)\n"
        "Step3: c\nAction3: Deduce(op=greater, content=[`o1`, `o2`], target=`Is the Danube longer?`)->d1\n"
        'Action4: Deduce(op=judgement, content=[`o1`, "a fact"], target=`Is it long?`)->d2\n'
        "Action5: Output(d1, d2)"
    )
    greater, judgement = (a.operator for _, a in plan.actions() if isinstance(a.operator, DeduceOp))
    bindings = {"o1": ["2,850 km"], "o2": "1,230 km"}
    outcome = run_deduce(greater, bindings)
    assert isinstance(outcome, DeduceOutcome) and outcome.answer is True
    request = run_deduce(judgement, bindings, question="c")
    assert isinstance(request, DeduceRequest)
    assert request.target == "Is it long?" and request.question == "c"
    assert [(e.alias, e.text) for e in request.content] == [("o1", "2,850 km"), (None, "a fact")]
    with pytest.raises(OperatorError, match="has no value yet"):
        run_deduce(greater, {"o1": 1})

"""Counting how a solver method's static plans came about, and what planning cost each kind."""

from __future__ import annotations

import pytest

from kag_neo4j.eval.datasets import Question
from kag_neo4j.eval.methods import EvalMethod, MethodContext, QAOutput, RetrievalOutput
from kag_neo4j.eval.plans import tally_plans
from kag_neo4j.eval.runner import evaluate_question, summarise
from kag_neo4j.eval.stages import StageCost
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.models.usage import Usage
from kag_neo4j.solver.results import PlanOrigin

QUESTION = Question(id="q1", question="Where was Ada born?", answers=["Millbrook"], gold=[])


def _plan(seconds: float) -> dict[str, StageCost]:
    return {"plan": StageCost(calls=1, seconds=seconds), "subanswer": StageCost(calls=1, seconds=100.0)}


def test_kinds_are_counted_in_a_fixed_order_with_their_mean_planning_seconds() -> None:
    tally = tally_plans([("fallback", _plan(40.0)), ("first try", _plan(8.0)), ("fallback", _plan(30.0)),
                         ("first try", _plan(12.0)), (None, _plan(99.0)), ("first try", {})])
    assert tally is not None
    assert list(tally.questions.items()) == [("first try", 3), ("fallback", 2)]
    assert tally.plan_seconds["fallback"] == pytest.approx(35.0)
    assert tally.plan_seconds["first try"] == pytest.approx(20.0 / 3), "a question without a plan stage counts 0 s"
    assert tally.total == 5


def test_no_origin_no_tally() -> None:
    assert tally_plans([(None, _plan(1.0))]) is None
    assert tally_plans([]) is None


def test_the_runner_takes_the_origin_from_the_answer_or_else_from_the_retrieval() -> None:
    usage = Usage()
    origins: list[PlanOrigin] = ["repaired", "first try", "repaired"]

    def answer(_question: str, _retrieval: RetrievalOutput | None) -> QAOutput:
        usage.record_call("plan", prompt_tokens=1000, completion_tokens=100, seconds=10.0)
        return QAOutput(answer="Millbrook", plan_origin=origins.pop(0))

    ctx = MethodContext(db=None, embedder=HashingEmbedder(), usage=usage)  # type: ignore[arg-type]
    method = EvalMethod(name="ours", description="", answer=answer)
    rows = [evaluate_question(method, QUESTION, [], {}, ctx) for _ in range(3)]
    assert [row.plan_origin for row in rows] == ["repaired", "first try", "repaired"]
    plans = summarise(method, rows).plans
    assert plans is not None and plans.questions == {"first try": 1, "repaired": 2}
    assert plans.plan_seconds == {"first try": pytest.approx(10.0), "repaired": pytest.approx(10.0)}

    def retrieve(_question: str) -> RetrievalOutput:
        return RetrievalOutput(chunks=[], plan_origin="fallback")

    recall = EvalMethod(name="ours-solver", description="", retrieve=retrieve)
    row = evaluate_question(recall, QUESTION, [], {}, ctx)
    assert row.plan_origin == "fallback"
    dense = EvalMethod(name="dense", description="", retrieve=lambda _q: RetrievalOutput(chunks=[]))
    assert summarise(dense, [evaluate_question(dense, QUESTION, [], {}, ctx)]).plans is None

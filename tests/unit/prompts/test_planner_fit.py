"""benchmarks/planner_fit.py: one question's planning outcome and the report, with a scripted model."""

from __future__ import annotations

from kag_neo4j.models.scripted import ScriptedLLM
from tests.unit.benchmark_scripts import load_script

planner_fit = load_script("planner_fit")

TWO_HOPS = (
    "Step1: Who founded Orrin Press?\nAction1: Retrieval(s=s1:Organization[`Orrin Press`], p=p1:foundedBy, o=o1:Person)\n"
    "Step2: Where was that person born?\nAction2: Retrieval(s=o1, p=p2:bornIn, o=o2:City)\nAction3: Output(o2)"
)
UNDEFINED = "Step1: q\nAction1: Retrieval(s=s1:Person[`Ida Venn`], p=p1:bornIn, o=City)\nAction2: Output(o1)"
RECORD = {"id": "q1", "question": "Where was the founder of Orrin Press born?",
          "question_decomposition": [{"question": "a"}, {"question": "b"}]}


def test_a_repaired_plan_is_counted_with_both_replies_kept() -> None:
    llm = ScriptedLLM([{"logical_form": UNDEFINED}, {"logical_form": TWO_HOPS}])
    outcome = planner_fit.plan_one(llm, RECORD, "", 400)
    assert (outcome.gold_hops, outcome.planned_hops) == (2, 2)
    assert (outcome.first_try, outcome.repaired, outcome.calls) == (False, True, 2)
    assert outcome.replies == [UNDEFINED, TWO_HOPS]
    assert len(llm.calls[1].messages) == len(llm.calls[0].messages) + 2  # the reply and the error went back


def test_two_bad_replies_are_the_fallback_and_the_report_counts_them() -> None:
    fallback = planner_fit.plan_one(ScriptedLLM([{"logical_form": UNDEFINED}] * 2), RECORD, "", 400)
    assert fallback.planned_hops is None and fallback.calls == 2 and fallback.error
    first = planner_fit.plan_one(ScriptedLLM([{"logical_form": TWO_HOPS}]), RECORD, "", 400)
    assert first.first_try and first.replies == [TWO_HOPS]
    cells = [[cell.strip() for cell in line.strip("|").split("|")] for line in planner_fit.report([first, fallback]).splitlines()]
    rows = {row[0]: row[1:] for row in cells if row and row[0]}
    assert rows["fallback plan"] == ["50% (1/2)"]
    assert rows["Retrieval hops = gold hops"] == ["50% (1/2)"]
    assert rows["2"] == ["1", "1"]  # gold 2 hops: one plan with 2 Retrievals, one fallback


def test_a_call_whose_reply_never_validates_is_still_counted() -> None:
    llm = ScriptedLLM(["{\"logical_form\": \"Step1: cut off"] * 4)
    outcome = planner_fit.plan_one(llm, RECORD, "", 400)
    assert outcome.planned_hops is None and outcome.error and outcome.replies == []
    assert outcome.calls == len(llm.calls) >= 1
    assert outcome.prompt_tokens > 0

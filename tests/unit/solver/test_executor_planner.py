"""The planner: one call for a good plan, ``plan_repairs`` repairs for a bad one (none by default), a
fallback after that; the iterative planner composes the steps run so far with the model's next step."""

from __future__ import annotations

from typing import Any

import pytest

from kag_neo4j.errors import LogicalFormError, StructuredOutputError
from kag_neo4j.models.scripted import ScriptedLLM
from kag_neo4j.solver.lf.ast import OutputOp, RetrievalOp
from kag_neo4j.solver.lf.parse import parse_plan
from kag_neo4j.prompts.plan import EXAMPLES
from kag_neo4j.solver.planner import Planner, copied_example, fallback_plan
from kag_neo4j.solver.runtime import Runtime, SolverConfig

GOOD = """\
Step1: When was the Harrow Valley Rail Company founded?
Action1: Retrieval(s=s1:Company[`Harrow Valley Rail Company`], p=p1:foundedIn, o=o1:Year)
Action2: Output(o1)"""
BAD = "Step1: When?\nAction1: Retrive(s=s1, p=p1, o=o1)\nAction2: Output(o1)"


def _planner(llm: ScriptedLLM, repairs: int = 1) -> tuple[Planner, Runtime]:
    config = SolverConfig(plan_repairs=repairs)
    rt = Runtime(None, llm, None, config=config, language="en")  # type: ignore[arg-type]
    return Planner(rt, schema_summary="Relations: foundedIn"), rt


def test_a_valid_plan_costs_one_call_and_sees_the_schema() -> None:
    llm = ScriptedLLM([{"logical_form": GOOD}])
    planner, rt = _planner(llm)
    record = rt.new_record("Plan")
    plan, origin = planner.plan("When was the Harrow Valley Rail Company founded?", record)
    assert origin == "first try" and plan.steps[0].actions[0].operator.kind == "Retrieval"
    assert len(llm.calls) == 1 and record.llm_calls == 1 and record.prompt_tokens > 0
    assert "Relations: foundedIn" in llm.calls[0].messages[0].content


def test_an_invalid_plan_is_sent_back_once_with_the_error() -> None:
    llm = ScriptedLLM([{"logical_form": BAD}, {"logical_form": GOOD}])
    planner, rt = _planner(llm)
    plan, origin = planner.plan("When was it founded?", rt.new_record("Plan"))
    assert origin == "repaired" and len(llm.calls) == 2 and plan.output.names == ["o1"]
    repair = llm.calls[1].messages[-1].content
    assert "Retrive" in repair and "Retrieval" in repair


def test_by_default_an_invalid_plan_falls_back_without_a_second_call() -> None:
    llm = ScriptedLLM([{"logical_form": BAD}, {"logical_form": GOOD}])
    rt = Runtime(None, llm, None, config=SolverConfig(), language="en")  # type: ignore[arg-type]
    record = rt.new_record("Plan")
    plan, origin = Planner(rt).plan("When was it founded?", record)
    assert origin == "fallback" and plan == fallback_plan("When was it founded?") and len(llm.calls) == 1 and "Retrive" in (record.error or "")


def test_each_repair_shows_the_latest_reply_and_its_error() -> None:
    wrong_alias = "Step1: When?\nAction1: Retrieval(s=s1, p=p1, o=o1)\nAction2: Output(o9)"
    llm = ScriptedLLM([{"logical_form": BAD}, {"logical_form": wrong_alias}, {"logical_form": GOOD}])
    planner, rt = _planner(llm, repairs=2)
    plan, origin = planner.plan("When was it founded?", rt.new_record("Plan"))
    assert origin == "repaired" and len(llm.calls) == 3 and plan.output.names == ["o1"]
    second_repair = llm.calls[2].messages
    assert "o9" in second_repair[-1].content and "Retrive" in second_repair[-3].content


@pytest.mark.parametrize(
    "responses",
    [
        [{"logical_form": BAD}, {"logical_form": BAD}],
        [{"logical_form": "I think the answer is 1871."}, {"logical_form": "Step1: still no actions"}],
        [StructuredOutputError("no valid JSON")],
    ],
)
def test_planning_failure_falls_back_to_one_chunk_retrieval_step(responses: list[Any]) -> None:
    llm = ScriptedLLM(responses)
    planner, rt = _planner(llm)
    record = rt.new_record("Plan")
    plan, origin = planner.plan("When was the Harrow Valley Rail Company founded?", record)
    assert origin == "fallback" and record.error
    assert plan == fallback_plan("When was the Harrow Valley Rail Company founded?")
    assert len(llm.calls) <= 2


def test_a_copy_of_a_worked_example_is_rejected_then_falls_back() -> None:
    copy = EXAMPLES["zh"][-1].logical_form  # the museums of Amsterdam, for a question about someone else
    llm = ScriptedLLM([{"logical_form": BAD}, {"logical_form": copy}])
    planner, rt = _planner(llm)
    record = rt.new_record("Plan")
    plan, origin = planner.plan("柏*是赌博App老板吗？", record)
    assert origin == "fallback" and plan == fallback_plan("柏*是赌博App老板吗？")
    assert "阿姆斯特丹" in (record.error or "") and len(llm.calls) == 2


def test_a_copied_example_is_sent_back_with_the_name_it_copied() -> None:
    copy = EXAMPLES["en"][0].logical_form
    llm = ScriptedLLM([{"logical_form": copy}, {"logical_form": GOOD}])
    planner, rt = _planner(llm)
    plan, origin = planner.plan("When was the Harrow Valley Rail Company founded?", rt.new_record("Plan"))
    assert origin == "repaired" and plan == parse_plan(GOOD)
    assert "The Little Prince" in llm.calls[1].messages[-1].content


def _one_step(element: str) -> str:
    return f"Step1: x\nAction1: Retrieval(s={element}, p=p1:about, o=o1:Thing)\nAction2: Output(o1)"


@pytest.mark.parametrize(
    ("question", "plan", "copied"),
    [
        ("How old was the author of The Little Prince?", _one_step("s1:Book[`The Little Prince`]"), None),
        ("阿姆斯特丹的博物馆有哪些？", EXAMPLES["zh"][-1].logical_form, None),  # the question names it
        ("When did the Rhine Valley Railway open?", _one_step("s1:Railway[`Rhine Valley Railway`]"), None),
        ("Who designed the Rijksmuseum?", EXAMPLES["en"][1].logical_form, "Amsterdam"),
        ("Who designed the Rijksmuseum?", _one_step("s1:Museum[`the Rhine`]"), "the Rhine"),
    ],
)
def test_only_example_names_the_question_does_not_write_count_as_copied(question: str, plan: str, copied: str | None) -> None:
    assert copied_example(parse_plan(plan), question) == copied


def test_the_fallback_plan_retrieves_for_the_question_itself() -> None:
    plan = fallback_plan("Who founded  the\ncompany?")
    (step,) = plan.steps
    assert step.question == "Who founded the company?"
    assert isinstance(step.actions[0].operator, RetrievalOp) and step.actions[0].operator.s.is_bare
    assert isinstance(step.actions[1].operator, OutputOp) and plan.output.names == ["o1"]
    assert parse_plan(plan.to_text()) == plan


DONE = parse_plan(
    """\
Step1: Who founded the Harrow Valley Rail Company?
Action1: Retrieval(s=s1:Company[`Harrow Valley Rail Company`], p=p1:founder, o=o1:Person)
Action2: Output(o1)"""
).steps


def _done_without_output() -> list[Any]:
    step = DONE[0]
    return [step.model_copy(update={"actions": step.actions[:1]})]


def test_next_step_continues_from_the_results_known() -> None:
    llm = ScriptedLLM([{"logical_form": "Step2: Where was the founder born?\nAction2: Retrieval(s=o1, p=p2:bornIn, o=o2:Town)"}])
    planner, rt = _planner(llm)
    step = planner.next_step("Where was the founder born?", _done_without_output(), {1: {"o1": "Ada Pembroke"}},
                             rt.new_record("Plan"))
    assert step is not None and not step.done
    assert [s.number for s in step.new_steps] == [2]
    assert step.plan.output.names == ["o2"], "a placeholder Output names the newest alias"
    prompt = llm.calls[0].messages[-1].content
    assert "// o1 = Ada Pembroke" in prompt and "Step1:" in prompt


def test_next_step_output_only_means_done() -> None:
    llm = ScriptedLLM([{"logical_form": "Action2: Output(o1)"}])
    planner, rt = _planner(llm)
    step = planner.next_step("Who founded it?", _done_without_output(), {1: {"o1": "Ada"}}, rt.new_record("Plan"))
    assert step is not None and step.done and step.new_steps == [] and step.plan.output.names == ["o1"]


def test_unusable_next_step_gives_none_after_one_repair() -> None:
    llm = ScriptedLLM([{"logical_form": "Step1: again\nAction1: Retrieval(s=s9, p=p1, o=o1)"}] * 2)
    planner, rt = _planner(llm)
    record = rt.new_record("Plan")
    assert planner.next_step("q?", _done_without_output(), {}, record) is None
    assert len(llm.calls) == 2 and record.error


def test_compose_rejects_a_reply_without_steps_or_output() -> None:
    with pytest.raises(LogicalFormError):
        Planner._compose(_done_without_output(), "I cannot plan this.")

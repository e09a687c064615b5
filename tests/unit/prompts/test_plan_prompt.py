"""The planner prompt, its few-shot examples and reading the model's reply."""

from __future__ import annotations

import json

import pytest

from kag_neo4j.errors import LogicalFormError
from kag_neo4j.models.base import ChatMessage
from kag_neo4j.models.scripted import ScriptedLLM
from kag_neo4j.prompts.plan import (
    CAUSAL_EXAMPLES,
    EXAMPLES,
    PlanResponse,
    build_plan_messages,
    causal_example,
    detect_language,
    repair_plan_messages,
    system_prompt,
)
from kag_neo4j.solver.lf.ast import Plan, RetrievalOp
from kag_neo4j.solver.lf.parse import plan_from_response

GOOD = (
    "Step1: Which club did Cristiano Ronaldo play for in 2011?\n"
    "Action1: Retrieval(s=s1:Person[`Cristiano Ronaldo`], p=p1:playsFor, o=o1:SportsTeam, p.year=2011)\n"
    "Step2: When was that club founded?\n"
    "Action2: Retrieval(s=o1, p=p2:foundedIn, o=o2:Year)\n"
    "Action3: Math(content=[`o2`], target=`2011 - o2`)->m1\n"
    "Action4: Output(m1)"
)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_every_few_shot_example_parses_and_round_trips(language: str) -> None:
    examples = EXAMPLES[language]  # type: ignore[index]
    assert 2 <= len(examples) <= 3
    for example in examples:
        plan = plan_from_response(PlanResponse(logical_form=example.logical_form))
        assert Plan.parse(plan.to_text()) == plan
        assert plan.output.names


def test_examples_show_parallel_steps_chaining_and_each_operator() -> None:
    for language in ("en", "zh"):
        plans = [Plan.parse(e.logical_form) for e in EXAMPLES[language]]  # type: ignore[index]
        kinds = {a.operator.kind for p in plans for _, a in p.actions()}
        assert {"Retrieval", "Math", "Sort", "Deduce", "Output"} <= kinds
        assert any(any(len(layer) > 1 for layer in p.layers()) for p in plans)


@pytest.mark.parametrize(
    ("language", "question", "prefix", "marker"),
    [
        ("en", "How old is the Eiffel Tower?", "Question: ", "You are the planner"),
        ("zh", "埃菲尔铁塔有多少年历史？", "问题：", "你是知识图谱问答系统的规划器"),
        ("auto", "埃菲尔铁塔有多少年历史？", "问题：", "你是知识图谱问答系统的规划器"),
        ("auto", "How old is the Eiffel Tower?", "Question: ", "You are the planner"),
        ("zh-CN", "How old is it?", "问题：", "你是"),
    ],
)
def test_build_plan_messages(language: str, question: str, prefix: str, marker: str) -> None:
    schema = "types: Person, SportsTeam\npredicates: playsFor(Person -> SportsTeam)"
    messages = build_plan_messages(question, schema, language)
    assert all(isinstance(m, ChatMessage) for m in messages)
    assert messages[0].role == "system" and messages[0].content.startswith(marker)
    assert schema in messages[0].content
    assert "{schema}" not in messages[0].content and "{{" not in messages[0].content
    assert [m.role for m in messages[1:]] == ["user", "assistant"] * (len(messages) // 2 - 1) + ["user"]
    assert messages[-1].content == prefix + question
    for message in messages[1:-1]:
        if message.role == "assistant":
            Plan.parse(json.loads(message.content)["logical_form"])  # the shots are valid replies


def test_system_prompt_without_schema_says_so() -> None:
    assert "no schema given" in system_prompt("", "en")
    assert "未提供模式" in system_prompt("  ", "zh")
    assert '{"logical_form"' in system_prompt("", "en")


def test_build_plan_messages_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="question is empty"):
        build_plan_messages("  ", "", "en")
    with pytest.raises(ValueError, match="'fr' is not supported"):
        build_plan_messages("Quel âge?", "", "fr")


def test_detect_language() -> None:
    assert detect_language("鲁迅") == "zh"
    assert detect_language("Lu Xun") == "en"


@pytest.mark.parametrize(
    "reply",
    [
        PlanResponse(logical_form=GOOD),
        {"logical_form": GOOD},
        json.dumps({"logical_form": GOOD}),
        "```json\n" + json.dumps({"logical_form": GOOD}, indent=2) + "\n```",
        "Sure! Here is the plan:\n" + json.dumps({"logical_form": GOOD}) + "\nHope it helps.",
        '{"logical_form": "' + GOOD.replace("\n", "\n") + '"}',  # raw newlines inside the JSON string
        GOOD,
        {"logical_form": GOOD.replace("\n", "\\n")},  # line breaks escaped twice by the model
        "Here is the plan:\n\n```\n" + GOOD + "\n```\n",
        "Plan:\n" + GOOD + "\n\nThe answer is the number of years.",
        "\n".join(
            "**" + line.replace(":", "**:", 1) if line.startswith(("Step", "Action")) else line
            for line in GOOD.splitlines()
        ),
        {
            "steps": [
                {
                    "sub_question": "Which club did Cristiano Ronaldo play for in 2011?",
                    "actions": [
                        "Retrieval(s=s1:Person[`Cristiano Ronaldo`], p=p1:playsFor, o=o1:SportsTeam, p.year=2011)"
                    ],
                },
                {
                    "sub_question": "When was that club founded?",
                    "actions": [
                        "Retrieval(s=o1, p=p2:foundedIn, o=o2:Year)",
                        "Math(content=[`o2`], target=`2011 - o2`)->m1",
                        "Output(m1)",
                    ],
                },
            ]
        },
    ],
)
def test_plan_from_response_accepts_the_usual_shapes(reply: object) -> None:
    plan = plan_from_response(reply)  # type: ignore[arg-type]
    assert plan == Plan.parse(GOOD)


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("", "empty"),
        ("I don't know.", "expected 'Step<n>"),
        (
            '{"logical_form": "Step1: q\\nAction1: Retreive(s=s1, p=p1, o=o1)\\nAction2: Output(o1)"}',
            "unknown operator",
        ),
        ('{"answer": "1902"}', 'no "logical_form"'),
        ('{"logical_form": ', "not valid JSON"),
        ("[1, 2, 3]", "expected 'Step<n>"),
        ({"steps": [{"sub_question": "q"}]}, "needs a sub_question and a list of actions"),
        (PlanResponse(logical_form="Step1: q\nAction1: Retrieval(s=s1:A[`x`], p=p1, o=o1)"), "no Output"),
        (42, "must be text or JSON"),
    ],
)
def test_plan_from_response_raises_logical_form_errors_on_garbage(reply: object, message: str) -> None:
    with pytest.raises(LogicalFormError, match=message):
        plan_from_response(reply)  # type: ignore[arg-type]


def test_with_the_scripted_llm_and_one_repair_round() -> None:
    bad = {
        "logical_form": "Step1: q\nAction1: Retrieval(s=s1:Person[`Ronaldo`], p=p1:playsFor, o=o1)\nAction2: Output(o9)"
    }
    llm = ScriptedLLM([bad, {"logical_form": GOOD}])
    messages = build_plan_messages("How many years had Ronaldo's 2011 club existed?", "types: Person", "en")
    first = llm.generate_object(messages, PlanResponse, stage="plan")
    with pytest.raises(LogicalFormError) as info:
        plan_from_response(first)
    assert (info.value.line, info.value.column) == (3, 17)
    retry = repair_plan_messages(messages, first.model_dump_json(), info.value)
    assert retry[-2].role == "assistant" and retry[-1].role == "user"
    assert "alias 'o9'" in retry[-1].content and "line 3, column 17" in retry[-1].content
    second = llm.generate_object(retry, PlanResponse, stage="plan")
    plan = plan_from_response(second)
    assert isinstance(plan.steps[0].actions[0].operator, RetrievalOp)
    assert [[s.number for s in layer] for layer in plan.layers()] == [[1], [2]]
    assert len(llm.calls) == 2


def test_repair_messages_in_chinese() -> None:
    error = LogicalFormError("bad", line=1, column=2)
    messages = repair_plan_messages([ChatMessage(role="user", content="问题：x")], "garbage", error, "zh")
    assert messages[-1].content.startswith("这个计划无效")


def test_the_class_example_parses_and_is_shown_only_for_a_graph_with_classes() -> None:
    from kag_neo4j.prompts.plan import CLASS_EXAMPLES, build_plan_messages

    for language, example in CLASS_EXAMPLES.items():
        plan = plan_from_response(PlanResponse(logical_form=example.logical_form))
        (retrieval,) = [a.operator for _, a in plan.actions() if a.operator.kind == "Retrieval"]
        assert retrieval.p.type == "belongTo"
        question = "Is X a Y?" if language == "en" else "X是Y吗？"
        plain = build_plan_messages(question, "schema", language)
        with_classes = build_plan_messages(question, "schema", language, classes=True)
        assert len(with_classes) == len(plain) + 2
        assert example.question in with_classes[-3].content and all(example.question not in m.content for m in plain)


def test_the_causal_example_follows_the_graphs_causal_relation_and_is_shown_only_with_one() -> None:
    for language, example in CAUSAL_EXAMPLES.items():
        question = "What does X affect?" if language == "en" else "X影响了哪些公司？"
        plain = build_plan_messages(question, "schema", language)
        with_causal = build_plan_messages(question, "schema", language, causal="causes")
        assert len(with_causal) == len(plain) + 2 and all(example.question not in m.content for m in plain)
        shown = with_causal[-2].content
        plan = plan_from_response(PlanResponse(logical_form=json.loads(shown)["logical_form"]))
        effects, subjects = [a.operator for _, a in plan.actions() if a.operator.kind == "Retrieval"]
        assert effects.p.type == "causes" and "leadTo" not in shown, "the graph's own causal relation"
        assert effects.s.name and effects.o.alias == subjects.s.alias and subjects.p.type == "subject"
        assert causal_example(language, "leadTo") == example


def test_a_last_step_line_holding_the_output_is_read_as_the_output_action() -> None:
    reply = (
        "Step1: Which county is Alder Flats in?\n"
        "Action1: Retrieval(s=s1:Town[`Alder Flats`], p=p1:locatedIn, o=o1:County)\n"
        "Step2: Which counties border it?\n"
        "Action2: Retrieval(s=o1, p=p2:bordersOn, o=o2:County)\n"
        "Step3: Output(o2)"
    )
    plan = plan_from_response(PlanResponse(logical_form=reply))
    assert [s.number for s in plan.steps] == [1, 2] and plan.output.names == ["o2"]
    assert plan.to_text().splitlines()[-1] == "Action3: Output(o2)"
    with pytest.raises(LogicalFormError):  # a Step line with Output in the middle is still an error
        plan_from_response(PlanResponse(logical_form=reply.replace("Step2:", "Step2: Output(o1)\nStep9:", 1)))


def test_an_output_per_step_becomes_one_output_of_every_alias() -> None:
    reply = (
        "Step1: Which drugs treat thyroid nodules?\n"
        "Action1: Retrieval(s=s1:Disease[`thyroid nodule`], p=p1:applicableMedicine, o=o1:Medicine)\n"
        "Step2: Report them.\n"
        "Action2: Output(o1)\n"
        "Step3: Which department treats them?\n"
        "Action3: Retrieval(s=s1, p=p2:hospitalDepartment, o=o2:HospitalDepartment)\n"
        "Action4: Output(o2, o1)\n"
        "Action5: Output(o2)"
    )
    plan = plan_from_response(PlanResponse(logical_form=reply))
    assert plan.output.names == ["o1", "o2"]
    assert [a.number for _, a in plan.actions()] == [1, 3, 5], "the earlier Outputs are gone, the last kept"
    assert [s.number for s in plan.steps] == [1, 3], "a step whose only action was an Output is dropped"
    single = reply.replace("Action4: Output(o2, o1)\n", "").replace("Step2: Report them.\nAction2: Output(o1)\n", "")
    assert plan_from_response(PlanResponse(logical_form=single)).output.names == ["o2"]
    with pytest.raises(LogicalFormError, match="o9"):  # what the Outputs name is still checked
        plan_from_response(PlanResponse(logical_form=reply.replace("Output(o1)", "Output(o9)")))

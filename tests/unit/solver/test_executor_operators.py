"""Math, Deduce, Sort and Output run in code (Deduce judgement/choice through the scripted LLM)."""

from __future__ import annotations

from typing import Any

import pytest

from kag_neo4j.errors import LogicalFormError
from kag_neo4j.models.scripted import ScriptedLLM
from kag_neo4j.solver.executor import PlanExecutor
from kag_neo4j.solver.lf.parse import parse_plan
from kag_neo4j.solver.memory import Binding, Item
from kag_neo4j.solver.runtime import Runtime, SolverConfig
from kag_neo4j.solver.validate import SimpleSchema, validate_plan


class _NoDatabase:
    """These operators never touch Neo4j; any attempt fails the test loudly."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the operator tried to use the database ({name})")


class _NoEmbedder(_NoDatabase):
    pass


def _runtime(llm: ScriptedLLM | None = None, language: str = "en") -> Runtime:
    return Runtime(
        _NoDatabase(),  # type: ignore[arg-type]
        llm or ScriptedLLM([]),
        _NoEmbedder(),  # type: ignore[arg-type]
        config=SolverConfig(),
        language=language,  # type: ignore[arg-type]
    )


def _run(rt: Runtime, text: str, bindings: dict[str, list[Item]]) -> None:
    plan = validate_plan(parse_plan(text), SimpleSchema.build([]))
    for alias, items in bindings.items():
        record = rt.new_record("Retrieval", lf=f"bind {alias}")
        rt.memory.bind(Binding(alias=alias, items=items, source="graph", record=record.index))
    executor = PlanExecutor(rt)
    for step in plan.plan.steps:
        if all(action.operator.kind != "Retrieval" for action in step.actions):
            executor.run_step(plan, step, layer=0)


_TWO_YEARS = """\
Step1: When was the company founded?
Action1: Retrieval(s=s1:Company[`Harrow Valley Rail Company`], p=p1:foundedIn, o=o1:Year)
Step2: When did the viaduct open?
Action2: Retrieval(s=s2:Bridge[`Millbrook Viaduct`], p=p2:openedIn, o=o2:Year)
Step3: How many years later?
Action3: Math(content=[`o1`, `o2`], target=`{target}`)->m1
Action4: Output(m1)
"""


def test_math_computes_in_code_from_bound_text_values() -> None:
    rt = _runtime()
    _run(rt, _TWO_YEARS.format(target="o2 - o1"), {"o1": [Item(value="1871")], "o2": [Item(value="in 1899")]})
    math = next(r for r in rt.records if r.op == "Math")
    assert math.source == "math" and math.error is None
    assert rt.memory.get("m1").value() == 28  # type: ignore[union-attr]
    assert math.depends_on == [0, 1], "Math depends on the records that bound o1 and o2"
    output = next(r for r in rt.records if r.op == "Output")
    assert output.outputs == {"m1": "28"}


def test_math_dates_and_years_between() -> None:
    rt = _runtime()
    _run(rt, _TWO_YEARS.format(target="years_between(o1, o2)"),
         {"o1": [Item(value="6 March 1902")], "o2": [Item(value="2011-05-01")]})
    assert rt.memory.get("m1").value() == 109  # type: ignore[union-attr]


@pytest.mark.parametrize("target", ["__import__('os').system('echo pwned')", "o1.__class__", "[o1 for o1 in o2]"])
def test_model_written_math_is_rejected_by_the_parser(target: str) -> None:
    text = _TWO_YEARS.replace("target=`{target}`", 'target="' + target.replace('"', "'") + '"')
    with pytest.raises(LogicalFormError):
        parse_plan(text)


def test_hostile_retrieved_values_are_data_not_code() -> None:
    rt = _runtime()
    _run(rt, _TWO_YEARS.format(target="o2 - o1"),
         {"o1": [Item(value="__import__('os').system('echo pwned')")], "o2": [Item(value="1899")]})
    math = next(r for r in rt.records if r.op == "Math")
    assert "holds no single number" in (math.error or "") and not rt.memory.bound("m1")


def test_math_with_an_unfound_input_fails_that_step_only() -> None:
    rt = _runtime()
    _run(rt, _TWO_YEARS.format(target="o2 - o1"), {"o1": [Item(value="1871")], "o2": []})
    math = next(r for r in rt.records if r.op == "Math")
    assert "'o2'" in (math.error or "") and not rt.memory.bound("m1")


_COMPARE = """\
Step1: How long is the Danube?
Action1: Retrieval(s=s1:River[`Danube`], p=p1:length, o=o1:Number)
Step2: How long is the Rhine?
Action2: Retrieval(s=s2:River[`Rhine`], p=p2:length, o=o2:Number)
Step3: Is the Danube longer?
Action3: Deduce(op={op}, content=[`o1`, `o2`], target=`Is the Danube longer than the Rhine?`)->d1
Action4: Output(d1)
"""


def test_deterministic_deduce_needs_no_model_call() -> None:
    llm = ScriptedLLM([])
    rt = _runtime(llm)
    _run(rt, _COMPARE.format(op="greater"), {"o1": [Item(value="2,850 km")], "o2": [Item(value="1,230 km")]})
    deduce = next(r for r in rt.records if r.op == "Deduce")
    assert deduce.source == "deduce" and rt.memory.get("d1").value() is True  # type: ignore[union-attr]
    assert llm.calls == []


def test_judgement_deduce_asks_the_model_once_and_checks_the_verdict() -> None:
    llm = ScriptedLLM([{"answer": "yes", "reasoning": "2850 > 1230"}])
    rt = _runtime(llm)
    _run(rt, _COMPARE.format(op="judgement"), {"o1": [Item(value="2,850 km")], "o2": [Item(value="1,230 km")]})
    deduce = next(r for r in rt.records if r.op == "Deduce")
    assert deduce.source == "deduce+llm" and deduce.llm_calls == 1
    assert rt.memory.get("d1").value() == "yes"  # type: ignore[union-attr]
    prompt = llm.calls[0].messages[-1].content
    assert "o1 = 2,850 km" in prompt and "Is the Danube longer" in prompt


def test_choice_outside_the_options_is_an_error_not_an_answer() -> None:
    llm = ScriptedLLM([{"answer": "the Volga"}])
    rt = _runtime(llm)
    _run(rt, _COMPARE.format(op="choice"), {"o1": [Item(value="Danube")], "o2": [Item(value="Rhine")]})
    deduce = next(r for r in rt.records if r.op == "Deduce")
    assert "not one of the options" in (deduce.error or "") and not rt.memory.bound("d1")


def test_sort_pairs_each_item_with_its_own_key() -> None:
    text = """\
Step1: Which museums are in Amsterdam?
Action1: Retrieval(s=s1:Museum, p=p1:locatedIn, o=o1:City[`Amsterdam`])
Step2: Visitors of each?
Action2: Retrieval(s=s1, p=p2:annualVisitors, o=o2:Integer)
Step3: Which has the most?
Action3: Sort(set=s1, orderby=o2, direction=max, limit=1)->a1
Action4: Output(a1)
"""
    rt = _runtime()
    museums = [Item(value="Rijksmuseum", entity_id="rijks"), Item(value="Van Gogh Museum", entity_id="vg"),
               Item(value="Hermitage", entity_id="herm")]
    visitors = [Item(value="2,700,000", key="rijks"), Item(value="2,100,000", key="vg"), Item(value="300000", key="herm")]
    _run(rt, text, {"s1": museums, "o2": visitors})
    assert rt.memory.get("a1").names == ["Rijksmuseum"]  # type: ignore[union-attr]


def test_chinese_answers_render_yes_no_in_chinese() -> None:
    from kag_neo4j.prompts.answer import render_answer

    assert render_answer([True], "zh") == "是" and render_answer([False, "x"], "en") == "no, x"

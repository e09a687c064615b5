"""The custom-operator example (examples/custom_operator.py) through the real parser, planner
prompt and executor: registering its one spec is all it takes."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from kag_neo4j.errors import ConfigError, LogicalFormError
from kag_neo4j.models.scripted import ScriptedLLM
from kag_neo4j.solver.executor import PlanExecutor
from kag_neo4j.solver.lf.ast import Action, Plan
from kag_neo4j.solver.lf.parse import parse_plan
from kag_neo4j.solver.lf.registry import OPERATORS
from kag_neo4j.solver.planner import Planner
from kag_neo4j.solver.runtime import Runtime, SolverConfig
from kag_neo4j.solver.validate import SimpleSchema, validate_plan

EXAMPLE = Path(__file__).resolve().parents[4] / "examples" / "custom_operator.py"


@pytest.fixture(scope="module")
def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("custom_operator_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # pydantic resolves the node's annotations through it
    spec.loader.exec_module(module)
    return module


def test_the_operator_parses_only_once_registered_and_round_trips(example: ModuleType) -> None:
    with pytest.raises(LogicalFormError, match="unknown operator 'Upper'"):
        parse_plan(example.PLAN)
    operators = OPERATORS.extended(example.SPEC)
    plan = parse_plan(example.PLAN, operators)
    upper = plan.step(2).actions[0].operator
    assert upper.kind == "Upper" and upper.output == "u2"
    assert plan.uses(2) == ("u1",) and plan.dependencies() == {1: frozenset(), 2: frozenset({1})}
    assert parse_plan(plan.to_text(), operators) == plan
    dumped = Plan.model_validate(plan.model_dump())  # the node class comes back from its kind
    assert dumped == plan and isinstance(dumped.step(1).actions[0], Action)
    with pytest.raises(LogicalFormError, match="must bind its result"):
        parse_plan('Step1: q\nAction1: Upper(content=["x"])\nAction2: Output(s1)', operators)
    with pytest.raises(LogicalFormError, match="alias 'u9'"):
        parse_plan('Step1: q\nAction1: Upper(content=[`u9`])->u1\nAction2: Output(u1)', operators)


def test_the_planner_prompt_lists_it_and_the_executor_runs_it(example: ModuleType) -> None:
    operators = OPERATORS.extended(example.SPEC)
    assert example.demo(operators) == {"u2": "ADA PEMBROKE, HARROW VALLEY RAIL COMPANY"}

    llm = ScriptedLLM([{"logical_form": example.PLAN}])
    rt = Runtime(None, llm, None, config=SolverConfig(), language="en")  # type: ignore[arg-type]
    plan, origin = Planner(rt, operators=operators).plan(example.QUESTION, rt.new_record("Plan"))
    assert origin == "first try"
    system = llm.calls[0].messages[0].content
    assert example.SPEC.prompt["en"] in system and "- Sort(" in system
    assert "Upper(" not in Planner(rt).operators.prompt_lines("en")[-1]  # the default registry is unchanged
    PlanExecutor(rt, operators).run(validate_plan(plan, SimpleSchema.build([])))
    first, second = rt.records[1], rt.records[2]
    assert (first.op, first.source, first.outputs) == ("Upper", "operator", {"u1": "ADA PEMBROKE"})
    assert second.depends_on == [first.index] and not second.error


def test_a_name_can_be_registered_once(example: ModuleType) -> None:
    operators = OPERATORS.extended(example.SPEC)
    with pytest.raises(ConfigError, match="already taken"):
        operators.register(example.SPEC)
    operators.unregister("Upper")
    assert operators.lookup("upper") is None and OPERATORS.lookup("Retrieval") is not None


def test_the_example_runs_as_a_script() -> None:
    env = {**os.environ, "PYTHONPATH": str(EXAMPLE.parents[1])}
    done = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"u2": "ADA PEMBROKE, HARROW VALLEY RAIL COMPANY"}

"""Three slips a small planner makes whose meaning is unambiguous, read as what they mean (the repair
call rarely fixes them: a greedy model tends to send the same plan back)."""

from __future__ import annotations

import pytest

from kag_neo4j.errors import LogicalFormError
from kag_neo4j.solver.lf.ast import (
    DeduceOp,
    Element,
    OperatorNode,
    OutputOp,
    Plan,
    RetrievalOp,
)
from kag_neo4j.solver.lf.parse import parse_plan

CHAIN = """\
Step1: Who wrote Dead Ernest?
Action1: Retrieval(s=s1:Book[`Dead Ernest`], p=p1:writtenBy, o=o1:Person)
Step2: Where was the author born?
Action2: Retrieval(s=o1, p=p2:birthPlace, {second})
Step3: Which river is by that place?
Action3: Retrieval(s=o2, p=p3:nearRiver, o=o3:River){arrow}
Action4: Output({out})
"""


def _operator(plan: Plan, number: int) -> OperatorNode:
    return next(action.operator for _, action in plan.actions() if action.number == number)


def _retrieval(plan: Plan, number: int) -> RetrievalOp:
    operator = _operator(plan, number)
    assert isinstance(operator, RetrievalOp)
    return operator


@pytest.mark.parametrize("second", ["o2:City", "o2", "o2:City[`Brno`]"])
def test_an_object_written_without_o_equals_is_the_object(second: str) -> None:
    plan = parse_plan(CHAIN.format(second=second, arrow="", out="o3"))
    hop = _retrieval(plan, 2)
    assert hop.o.alias == "o2"
    assert hop.o.type == ("City" if ":" in second else None)
    assert hop.o.name == ("Brno" if "[" in second else None)
    assert plan.dependencies()[3] == {2}  # step 3 reads o2, which the repaired hop defines
    assert "o=o2" in plan.to_text()


def test_a_retrieval_result_named_with_an_arrow_renames_its_new_object() -> None:
    plan = parse_plan(CHAIN.format(second="o=o2:City", arrow="->a1", out="a1"))
    hop = _retrieval(plan, 3)
    assert hop.o == Element(alias="a1", type="River")
    output = _operator(plan, 4)
    assert isinstance(output, OutputOp) and [ref.alias for ref in output.aliases] == ["a1"]
    assert plan.dependencies()[3] == {2}
    assert "o=a1:River" in plan.to_text() and "->" not in plan.to_text()
    assert parse_plan(plan.to_text()) == plan


@pytest.mark.parametrize(
    ("action", "found"),
    [
        # the object is a known entity or an alias read from elsewhere: which result '->' names is unclear
        ("Retrieval(s=o2, p=p3:nearRiver, o=o3:River[`Vltava`])->a1", "does not bind a result"),
        ("Retrieval(s=o2, p=p3:nearRiver, o=o1)->a1", "does not bind a result"),
        ("Retrieval(s=o2, p=p3:nearRiver, o=o3:River)->true", "reserved"),
        # the role left is not o, or o is given too
        ("Retrieval(s=o2, o=o3:River, p=p3:nearRiver, x4:Lake)", "expected '=' or '.' after 'x4'"),
        ("Retrieval(s=o2, p3:nearRiver, o=o3:River)", "expected '=' or '.' after 'p3'"),
    ],
)
def test_what_stays_an_error(action: str, found: str) -> None:
    text = CHAIN.replace("Action3: Retrieval(s=o2, p=p3:nearRiver, o=o3:River){arrow}", "Action3: " + action)
    with pytest.raises(LogicalFormError, match=found):
        parse_plan(text.format(second="o=o2:City", out="a1"))


SPOUSE = """\
Step1: Who directed Jump for Glory?
Action1: Retrieval(s=s1:Movie[`Jump for Glory`], p=p1:director, o=o1:Person)
Step2: Who is the spouse of the director?
Action2: Deduce(op=equal, content=[{content}], target=`the spouse of the director`)->d1
Step3: Where was the spouse born?
Action3: Retrieval(s=d1, p=p3:birthPlace, o=o3:City)
Action4: Output(o3)
"""


@pytest.mark.parametrize(("content", "subject"), [("`o1`, `o2`", "o1"), ("`o1`, `Spouse`", "o1"), ("`Spouse`", "s2")])
def test_a_deduce_reading_an_alias_nothing_defines_is_the_steps_hop(content: str, subject: str) -> None:
    plan = parse_plan(SPOUSE.format(content=content))
    hop = _retrieval(plan, 2)
    assert hop.s == Element(alias=subject) and hop.o == Element(alias="d1")
    assert hop.p.is_bare and hop.p.alias not in {"p1", "p3"}
    assert plan.dependencies()[2] == ({1} if subject == "o1" else set())
    assert plan.dependencies()[3] == {2}
    assert parse_plan(plan.to_text()) == plan


def test_a_deduce_over_defined_aliases_stays_a_deduce() -> None:
    text = SPOUSE.format(content="`o1`").replace("Action3: Retrieval(s=d1", "Action3: Retrieval(s=o1")
    assert isinstance(_operator(parse_plan(text), 2), DeduceOp)

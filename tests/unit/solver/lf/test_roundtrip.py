"""plan.to_text() round-trips, and the dependency DAG / layers."""

from __future__ import annotations

import pytest

from kag_neo4j.solver.lf.ast import (
    Action,
    AliasRef,
    Constraint,
    DeduceOp,
    Element,
    LiteralItem,
    OutputOp,
    Plan,
    RetrievalOp,
    SortOp,
    Step,
)
from kag_neo4j.solver.lf.parse import parse_plan

from .test_parse import BRIEF_EXAMPLE

PLANS = [
    BRIEF_EXAMPLE,
    """\
Step1: 鲁迅出生在哪个城市？
Action1: Retrieval(s=s1:人物[`鲁迅`], p=p1:出生于, o=o1:城市)
Step2: 该城市属于哪个省份？
Action2: Retrieval(s=o1, p=p2:位于, o=o2:省份, o.name!="浙江")
Action3: Output(o2)
""",
    """\
Step1: Which museums are in Amsterdam?
Action1: Retrieval(s=s1:Museum, p=p1:locatedIn, o=o1:City[`Amsterdam`], s.open=true, s.rating>=4.5)
Step2: Visitors?
Action2: Retrieval(s=s1, p=p2:annualVisitors, o=o2:Integer)
Action3: Sort(set=s1, orderby="visitors per year", direction=max)->a1
Action4: Sort(set=s1, orderby=o2, direction=min, limit=3)->a2
Action5: Deduce(op=choice, content=[`a1`, `a2`, "the Rijksmuseum", 42, 2.5, false], target=`Which one?`)->d1
Action6: Deduce(op=extract, content=[`o2`])->d2
Action7: Math(content=[`o2`], target=`round(avg(o2) * 1.1, 2) + 15% - date('2011-05-01') % 7`)->m1
Action8: Output(a1, a2, d1, d2, m1)
""",
    """\
Step1: q
Action1: Retrieval(s=s1:`Sports Team`["Name with a ` backtick"], p=p1:`plays for`, o=o1:Person["He said \\"hi\\""])
Step2: r
Action2: Retrieval(s=s2:SportsTeam[o1], p=p2, o=o2, p.note="a \\"quoted\\" value", p.path=`C:\\dir\\file`)
Action3: Output(o2)
""",
]


@pytest.mark.parametrize("text", PLANS)
def test_round_trip(text: str) -> None:
    plan = parse_plan(text)
    printed = plan.to_text()
    again = parse_plan(printed)
    assert again == plan
    assert again.to_text() == printed
    assert again.dependencies() == plan.dependencies()


def test_round_trip_preserves_tricky_strings() -> None:
    plan = parse_plan(PLANS[3])
    op = plan.steps[0].actions[0].operator
    assert isinstance(op, RetrievalOp)
    assert op.s.type == "Sports Team"
    assert op.s.name == "Name with a ` backtick"
    assert op.p.type == "plays for"
    assert op.o.name == 'He said "hi"'
    second = plan.steps[1].actions[0].operator
    assert isinstance(second, RetrievalOp)
    assert second.s.ref == "o1"
    assert second.constraints[0].value == 'a "quoted" value'
    assert second.constraints[1].value == "C:\\dir\\file"


def test_python_built_plan_round_trips_odd_text() -> None:
    plan = Plan(
        steps=[
            Step(
                number=1,
                question="What is `odd`?",
                actions=[
                    Action(
                        number=1,
                        operator=RetrievalOp(
                            s=Element(alias="s1", type="Thing", name='back`tick and "quote"\nnewline'),
                            p=Element(alias="p1", type="has part"),
                            o=Element(alias="o1"),
                            constraints=[Constraint(target="o", prop="label", op="=", value="x`y")],
                        ),
                    ),
                    Action(
                        number=2,
                        operator=DeduceOp(
                            op="judgement",
                            content=[AliasRef(alias="o1"), LiteralItem(value="t`ext")],
                            target="Is it `odd`?",
                            output="d1",
                        ),
                    ),
                    Action(
                        number=3,
                        operator=SortOp(
                            source=AliasRef(alias="o1"),
                            orderby="size in cm",
                            direction="min",
                            limit=2,
                            output="a1",
                        ),
                    ),
                    Action(number=4, operator=OutputOp(aliases=[AliasRef(alias="d1"), AliasRef(alias="a1")])),
                ],
            )
        ]
    )
    assert parse_plan(plan.to_text()) == plan


def test_to_text_is_canonical() -> None:
    messy = (
        "step 1 :  q  \n"
        'action 1：retrieval( s = s1 : Person [ "Ada" ] , p=p1 : knows , o = o1 , p.since == 1840 )  // c\n'
        "ACTION2: output( o1 )\n"
    )
    assert parse_plan(messy).to_text() == (
        "Step1: q\n"
        "Action1: Retrieval(s=s1:Person[`Ada`], p=p1:knows, o=o1, p.since=1840)\n"
        "Action2: Output(o1)"
    )


# ---- DAG ---------------------------------------------------------------------------------

DIAMOND = """\
Step1: Who wrote The Little Prince?
Action1: Retrieval(s=s1:Book[`The Little Prince`], p=p1:writtenBy, o=o1:Person)
Step2: When was the author born?
Action2: Retrieval(s=o1, p=p2:birthDate, o=o2:Date)
Step3: When was the book published?
Action3: Retrieval(s=s1, p=p3:publicationDate, o=o3:Date)
Step4: Years between?
Action4: Math(content=[`o2`, `o3`], target=`years_between(o2, o3)`)->m1
Action5: Output(m1)
"""


def test_diamond_layers() -> None:
    plan = parse_plan(DIAMOND)
    assert plan.dependencies() == {1: frozenset(), 2: frozenset({1}), 3: frozenset({1}), 4: frozenset({2, 3})}
    assert [[s.number for s in layer] for layer in plan.layers()] == [[1], [2, 3], [4]]


def test_independent_steps_share_a_layer() -> None:
    plan = parse_plan(
        "Step1: a\nAction1: Retrieval(s=s1:River[`Danube`], p=p1:length, o=o1)\n"
        "Step2: b\nAction2: Retrieval(s=s2:River[`Rhine`], p=p2:length, o=o2)\n"
        "Step3: c\nAction3: Deduce(op=greater, content=[`o1`, `o2`])->d1\nAction4: Output(d1)\n"
    )
    assert [[s.number for s in layer] for layer in plan.layers()] == [[1, 2], [3]]


def test_forward_reference_without_cycle_is_ordered_by_the_dag() -> None:
    plan = parse_plan(
        "Step1: final\nAction1: Math(content=[`m2`], target=`m2 + 1`)->m1\nAction2: Output(m1)\n"
        "Step2: first\nAction3: Math(content=[], target=`41`)->m2\n"
    )
    assert plan.dependencies() == {1: frozenset({2}), 2: frozenset()}
    assert [[s.number for s in layer] for layer in plan.layers()] == [[2], [1]]


def test_layers_cover_every_step_once() -> None:
    plan = parse_plan(PLANS[2])
    numbers = [s.number for layer in plan.layers() for s in layer]
    assert sorted(numbers) == sorted(s.number for s in plan.steps)
    seen: set[int] = set()
    for layer in plan.layers():
        for step in layer:
            assert plan.dependencies()[step.number] <= seen
        seen.update(s.number for s in layer)

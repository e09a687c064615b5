"""Parsing the logical-form surface syntax into the AST."""

from __future__ import annotations

import pytest

from kag_neo4j.solver.lf.ast import (
    AliasRef,
    Constraint,
    DeduceOp,
    Element,
    LiteralItem,
    MathOp,
    OutputOp,
    Plan,
    RetrievalOp,
    SortOp,
)
from kag_neo4j.solver.lf.parse import parse_plan

# BRIEF §4, verbatim (including the "..." placeholders and the // comment)
BRIEF_EXAMPLE = """\
Step1: <sub-question>
Action1: Retrieval(s=s1:Person[`Cristiano Ronaldo`], p=p1:playsFor, o=o1:SportsTeam, p.year=2011)
Step2: ...
Action2: Retrieval(s=o1, p=p2:foundedIn, o=o2:Year)      // re-using alias o1 chains the hop
Action3: Math(content=[`o2`], target=`2011 - o2`)->m1
Action4: Output(m1)
"""


def test_brief_example_parses_verbatim() -> None:
    plan = parse_plan(BRIEF_EXAMPLE)
    assert [step.number for step in plan.steps] == [1, 2]
    assert plan.steps[0].question == "<sub-question>"
    assert [a.number for a in plan.steps[1].actions] == [2, 3, 4]

    first = plan.steps[0].actions[0].operator
    assert isinstance(first, RetrievalOp)
    assert first.s == Element(alias="s1", type="Person", name="Cristiano Ronaldo")
    assert first.p == Element(alias="p1", type="playsFor")
    assert first.o == Element(alias="o1", type="SportsTeam")
    assert first.constraints == [Constraint(target="p", prop="year", op="=", value=2011)]
    assert isinstance(first.constraints[0].value, int)

    hop = plan.steps[1].actions[0].operator
    assert isinstance(hop, RetrievalOp)
    assert hop.s.is_bare and hop.s.alias == "o1"

    math = plan.steps[1].actions[1].operator
    assert isinstance(math, MathOp)
    assert math.content == [AliasRef(alias="o2")]
    assert math.target == "2011 - o2"
    assert math.output == "m1"
    assert plan.output.names == ["m1"]


def test_brief_example_aliases_and_reads() -> None:
    plan = parse_plan(BRIEF_EXAMPLE)
    sites = plan.definitions()
    assert {alias: (site.step, site.action, site.role) for alias, site in sites.items()} == {
        "s1": (1, 1, "s"),
        "p1": (1, 1, "p"),
        "o1": (1, 1, "o"),
        "p2": (2, 2, "p"),
        "o2": (2, 2, "o"),
        "m1": (2, 3, "Math"),
    }
    assert sites["o1"].type == "SportsTeam"
    assert plan.uses(2) == ("o1",)
    assert plan.uses(3) == ("o2",)
    assert plan.uses(4) == ("m1",)
    assert plan.uses(1) == ()


def test_positions_are_recorded_but_not_compared() -> None:
    plan = parse_plan(BRIEF_EXAMPLE)
    element = plan.steps[0].actions[0].operator.s  # type: ignore[union-attr]
    line = BRIEF_EXAMPLE.splitlines()[1]
    assert element.pos is not None
    assert (element.pos.line, element.pos.column) == (2, line.index("s1:") + 1)
    assert element == Element(alias="s1", type="Person", name="Cristiano Ronaldo")  # no pos
    assert "pos" not in element.model_dump()


def test_chained_aliases_over_three_hops() -> None:
    plan = parse_plan(
        "Step1: Who directed Inception?\n"
        "Action1: Retrieval(s=s1:Film[`Inception`], p=p1:directedBy, o=o1:Person)\n"
        "Step2: Where was the director born?\n"
        "Action2: Retrieval(s=o1, p=p2:bornIn, o=o2:City)\n"
        "Step3: Which country is that city in?\n"
        "Action3: Retrieval(s=o2, p=p3:locatedIn, o=o3:Country)\n"
        "Action4: Output(o3)\n"
    )
    assert plan.dependencies() == {1: frozenset(), 2: frozenset({1}), 3: frozenset({2})}
    assert plan.uses(3) == ("o2",)


def test_constraints_all_operators_and_value_kinds() -> None:
    plan = parse_plan(
        "Step1: q\n"
        "Action1: Retrieval(s=s1:Person, p=p1:playsFor, o=o1:SportsTeam, p.year>=2009, p.year <= 2012, "
        'o.country=`Spain`, s.active=true, o.budget>1.5e8, s1.age!=30, o1.rank<3, s.name=="Ronaldo", '
        "o.city=Madrid)\n"
        "Action2: Output(o1)\n"
    )
    op = plan.steps[0].actions[0].operator
    assert isinstance(op, RetrievalOp)
    got = [(c.target, c.prop, c.op, c.value) for c in op.constraints]
    assert got == [
        ("p", "year", ">=", 2009),
        ("p", "year", "<=", 2012),
        ("o", "country", "=", "Spain"),
        ("s", "active", "=", True),
        ("o", "budget", ">", 1.5e8),
        ("s1", "age", "!=", 30),
        ("o1", "rank", "<", 3),
        ("s", "name", "=", "Ronaldo"),
        ("o", "city", "=", "Madrid"),
    ]
    assert isinstance(got[3][3], bool)
    assert isinstance(got[4][3], float)


def test_quoted_number_stays_text() -> None:
    plan = parse_plan('Step1: q\nAction1: Retrieval(s=s1, p=p1, o=o1, p.year="2011")\nAction2: Output(o1)')
    constraint = plan.steps[0].actions[0].operator.constraints[0]  # type: ignore[union-attr]
    assert constraint.value == "2011" and isinstance(constraint.value, str)


def test_chinese_questions_names_and_types() -> None:
    text = (
        "Step1: 鲁迅出生在哪个城市？\n"
        "Action1: Retrieval(s=s1:人物[`鲁迅`], p=p1:出生于, o=o1:城市)\n"
        "Step2：该城市属于哪个省份？\n"
        "Action2：Retrieval（s=o1，p=p2:位于，o=o2:省份）\n"
        "Action3: Output(o2)\n"
    )
    plan = parse_plan(text)
    first = plan.steps[0].actions[0].operator
    assert isinstance(first, RetrievalOp)
    assert (first.s.type, first.s.name, first.p.type, first.o.type) == ("人物", "鲁迅", "出生于", "城市")
    assert plan.steps[1].question == "该城市属于哪个省份？"
    second = plan.steps[1].actions[0].operator
    assert isinstance(second, RetrievalOp)
    assert (second.s.alias, second.p.type, second.o.type) == ("o1", "位于", "省份")
    assert plan.dependencies()[2] == frozenset({1})


def test_name_quoting_styles_and_bare_names() -> None:
    plan = parse_plan(
        "Step1: q\n"
        "Action1: Retrieval(s=s1:Person[\"Cristiano Ronaldo\"], p=p1:knows, o=o1:Person['Lionel Messi'])\n"
        "Step2: r\n"
        "Action2: Retrieval(s=s2:Person[Kylian Mbappé], p=p2:knows, o=o2:Person[“Erling Haaland”])\n"
        "Action3: Output(o1, o2)\n"
    )
    first = plan.steps[0].actions[0].operator
    second = plan.steps[1].actions[0].operator
    assert isinstance(first, RetrievalOp) and isinstance(second, RetrievalOp)
    assert (first.s.name, first.o.name) == ("Cristiano Ronaldo", "Lionel Messi")
    assert (second.s.name, second.o.name) == ("Kylian Mbappé", "Erling Haaland")


def test_bare_bracket_that_names_an_alias_binds_it() -> None:
    # the KAG paper's form: s=s2:SportsTeam[o1] means "the o1 found before"
    plan = parse_plan(
        "Step1: q\n"
        "Action1: Retrieval(s=s1:Person[`Cristiano Ronaldo`], p=p1:playsFor, o=o1:SportsTeam, p.year=2011)\n"
        "Step2: r\n"
        "Action2: Retrieval(s=s2:SportsTeam[o1], p=p2:foundedIn, o=o2:Year)\n"
        "Action3: Output(o2)\n"
    )
    hop = plan.steps[1].actions[0].operator
    assert isinstance(hop, RetrievalOp)
    assert hop.s.ref == "o1" and hop.s.name is None
    assert plan.dependencies()[2] == frozenset({1})
    # backticks force a literal name even when it looks like an alias
    literal = parse_plan(
        "Step1: q\nAction1: Retrieval(s=s1:A[`x`], p=p1, o=o1)\n"
        "Step2: r\nAction2: Retrieval(s=s2:Code[`o1`], p=p2, o=o2)\nAction3: Output(o2)"
    )
    assert literal.steps[1].actions[0].operator.s.name == "o1"  # type: ignore[union-attr]
    assert literal.dependencies()[2] == frozenset()


def test_restating_an_alias_with_its_type_reads_it() -> None:
    plan = parse_plan(
        "Step1: q\nAction1: Retrieval(s=s1:Person[`A`], p=p1:worksFor, o=o1:Company)\n"
        "Step2: r\nAction2: Retrieval(s=o1:company, p=p2:foundedIn, o=o2:Year)\nAction3: Output(o2)"
    )
    assert plan.definitions()["o1"].step == 1
    assert plan.uses(2) == ("o1",)


def test_multiline_action_and_comments() -> None:
    text = """\
// plan for the Ronaldo question
Step1: Which club?
Action1: Retrieval(
    s=s1:Person["Cristiano Ronaldo"],   // the player
    p=p1:playsFor,
    o=o1:SportsTeam,
    p.year=2011
)
Step2: Founded when?
Action2: Retrieval(s=o1, p=p2:foundedIn, o=o2:Year)
Action3: Math(content=[`o2`], target=`2011 - o2`)->m1 // arithmetic

Action4: Output(m1)
"""
    plan = parse_plan(text)
    op = plan.steps[0].actions[0].operator
    assert isinstance(op, RetrievalOp)
    assert op.s.name == "Cristiano Ronaldo"
    assert op.constraints[0].value == 2011
    assert op.p.pos is not None and op.p.pos.line == 5
    assert plan.steps[1].actions[0].pos.line == 10  # type: ignore[union-attr]


def test_comment_marker_inside_quotes_is_text() -> None:
    plan = parse_plan(
        "Step1: q\nAction1: Retrieval(s=s1:Website[`http://example.org`], p=p1:ownedBy, o=o1)\n"
        "Action2: Output(o1)"
    )
    assert plan.steps[0].actions[0].operator.s.name == "http://example.org"  # type: ignore[union-attr]


def test_math_deduce_sort_output_forms() -> None:
    plan = parse_plan(
        "Step1: Which rivers flow through Germany?\n"
        "Action1: Retrieval(s=s1:River, p=p1:flowsThrough, o=o1:Country[`Germany`])\n"
        "Step2: How long are they?\n"
        "Action2: Retrieval(s=s1, p=p2:length, o=o2:Number)\n"
        "Step3: Which is the longest?\n"
        "Action3: Sort(set=s1, orderby=o2, direction=max, limit=1)->a1\n"
        "Action4: Math(content=[`o2`], target=`count(o2)`)->m1\n"
        "Action5: Deduce(op=greater, content=[`m1`, 3], target=`More than three rivers?`)->d1\n"
        'Action6: Deduce(op=multichoice, content=[`a1`, "the Rhine"])->d2\n'
        "Action7: Output(`a1`, m1, d1, d2)\n"
    )
    ops = [a.operator for _, a in plan.actions()]
    sort = ops[2]
    assert isinstance(sort, SortOp)
    assert (sort.source.alias, sort.orderby, sort.direction, sort.limit, sort.output) == (
        "s1",
        "o2",
        "max",
        1,
        "a1",
    )
    deduce = ops[4]
    assert isinstance(deduce, DeduceOp)
    assert deduce.op == "greater"
    assert deduce.content == [AliasRef(alias="m1"), LiteralItem(value=3)]
    second = ops[5]
    assert isinstance(second, DeduceOp)
    assert second.op == "multiChoice" and second.target is None
    assert second.content[1] == LiteralItem(value="the Rhine")
    out = ops[6]
    assert isinstance(out, OutputOp) and out.names == ["a1", "m1", "d1", "d2"]
    assert plan.uses(3) == ("s1", "o2")
    assert plan.dependencies()[3] == frozenset({1, 2})


def test_sort_synonyms_and_unlimited() -> None:
    plan = parse_plan(
        "Step1: q\nAction1: Retrieval(s=s1:City, p=p1:population, o=o1:Integer)\n"
        "Action2: Sort(set=s1, orderby=`population`, direction=desc, limit=all)->a1\nAction3: Output(a1)"
    )
    sort = plan.steps[0].actions[1].operator
    assert isinstance(sort, SortOp)
    assert (sort.direction, sort.limit, sort.orderby) == ("max", None, "population")


def test_operator_names_are_case_insensitive_and_get_spo_is_retrieval() -> None:
    plan = parse_plan("Step1: q\nAction1: get_spo(s=s1:A[`x`], p=p1:r, o=o1)\nAction2: output(o1)")
    assert isinstance(plan.steps[0].actions[0].operator, RetrievalOp)


def test_plan_built_in_python_is_checked_too() -> None:
    from kag_neo4j.solver.lf.ast import Action, Step

    plan = Plan(
        steps=[
            Step(
                number=1,
                question="q",
                actions=[
                    Action(
                        number=1,
                        operator=RetrievalOp(
                            s=Element(alias="s1", type="A", name="x"),
                            p=Element(alias="p1"),
                            o=Element(alias="o1"),
                        ),
                    ),
                    Action(number=2, operator=OutputOp(aliases=[AliasRef(alias="o1")])),
                ],
            )
        ]
    )
    assert plan.layers()[0][0].number == 1


@pytest.mark.parametrize("bad", ["1x", "a-b", "", "x y"])
def test_alias_model_validation(bad: str) -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        AliasRef(alias=bad)


def test_plans_in_the_documentation_parse() -> None:
    import re
    from pathlib import Path

    doc = Path(__file__).resolve().parents[4] / "docs" / "logical-forms.md"
    blocks = [
        b
        for b in re.findall(r"```\n(.*?)```", doc.read_text(encoding="utf-8"), re.DOTALL)
        if b.startswith("Step1")
    ]
    assert blocks
    for block in blocks:
        plan = parse_plan(block)
        assert parse_plan(plan.to_text()) == plan

"""KAG compatibility: the cases of KAG's own logical-form parser tests, in our API.

Each case of KAG's parse tests that fits our operators is here: entity and relation elements
(ids, several types, full-width punctuation inside types, predicates and names), the old
``get_spo`` name with full-width separators, constraints (``s.value=>160``, ``s.x=s1.name``) and
the backticked name holding ``,]``. KAG's ``get``/``verify``/``extractor``/``search_s`` and its
binary expressions are not our operators: they fail with a hint naming ours, and their
punctuation cases are checked on our equivalents (Output, constraint values).
"""

from __future__ import annotations

import random

import pytest
from pydantic import ValidationError

from kag_neo4j.errors import LogicalFormError
from kag_neo4j.prompts.plan import split_thinking
from kag_neo4j.solver.lf.ast import (
    Action,
    Constraint,
    Element,
    OutputOp,
    Plan,
    PropertyRef,
    RetrievalOp,
    Step,
)
from kag_neo4j.solver.lf.parse import parse_plan, plan_from_response


def retrieval(action: str) -> RetrievalOp:
    """The operator of a one-step plan whose only Retrieval is ``action``."""
    plan = parse_plan(f"Step1: q\nAction1: {action}\nAction2: Output(o1)")
    op = plan.steps[0].actions[0].operator
    assert isinstance(op, RetrievalOp)
    return op


def subject(element: str) -> Element:
    return retrieval(f"Retrieval(s={element}, p=p1, o=o1)").s


def predicate(element: str) -> Element:
    return retrieval(f"Retrieval(s=s1, p={element}, o=o1)").p


def round_trips(plan: Plan) -> str:
    text = plan.to_text()
    assert parse_plan(text) == plan
    return text


# ---- entities -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "types", "name", "ids"),
    [
        ("s1:政务事项", ["政务事项"], None, []),
        ("s1:政务事项[浙江省-杭州市-西湖区申领]", ["政务事项"], "浙江省-杭州市-西湖区申领", []),
        ("s1:电影明星|电影导演[张三]", ["电影明星", "电影导演"], "张三", []),
        ("s1:`电影明星`[张三][1]", ["电影明星"], "张三", ["1"]),
        ("s1:电影（，明星|电影导演[张三][`1|3`|2]", ["电影（，明星", "电影导演"], "张三", ["1|3", "2"]),
        ("s1", [], None, []),
    ],
)
def test_kag_entity_forms(text: str, types: list[str], name: str | None, ids: list[str]) -> None:
    element = subject(text)
    assert element.alias == "s1"
    assert element.types == types
    assert element.type == (types[0] if types else None)
    assert element.alt_types == types[1:]
    assert element.name == name
    assert element.ids == ids
    assert element.ref is None


def test_ids_and_types_in_the_ast_and_printed_back() -> None:
    op = retrieval("Retrieval(s=s1:电影（，明星|电影导演[张三][`1|3`|2], p=p1:参演, o=o1:电影[`Alien`][ x-7 ])")
    assert op.s == Element(alias="s1", type="电影（，明星", alt_types=["电影导演"], name="张三", ids=["1|3", "2"])
    assert op.o.ids == ["x-7"]
    # types that are not plain identifiers and ids with '|' or spaces are backticked
    assert op.s.to_text() == "s1:`电影（，明星`|电影导演[`张三`][`1|3`|2]"
    assert op.o.to_text() == "o1:电影[`Alien`][x-7]"


def test_an_id_bracket_makes_the_name_literal_even_when_it_is_an_alias() -> None:
    plan = parse_plan(
        "Step1: q\nAction1: Retrieval(s=s1:A[`x`], p=p1, o=o1)\n"
        "Step2: r\nAction2: Retrieval(s=s2:Film[o1][7], p=p2, o=o2)\nAction3: Output(o2)"
    )
    element = plan.steps[1].actions[0].operator.s  # type: ignore[union-attr]
    assert (element.name, element.ref, element.ids) == ("o1", None, ["7"])
    assert plan.dependencies()[2] == frozenset()


# ---- relations ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "types"),
    [("p1", []), ("p1:演）员", ["演）员"]), ("p1:`参演`|`导演`", ["参演", "导演"]), ("p1:参演|`导 演`", ["参演", "导 演"])],
)
def test_kag_relation_forms(text: str, types: list[str]) -> None:
    element = predicate(text)
    assert element.alias == "p1"
    assert element.types == types


# ---- get_spo with full-width punctuation ----------------------------------------------------


@pytest.mark.parametrize(
    ("action", "name"),
    [
        ("get_spo(s=s1:政务事项[身份证挂失], p=p1:线上办事渠道， o=o1:办事渠道）", "身份证挂失"),
        ("get_spo(s=s1:政务事项[身份证挂失],p=p1:线上办事渠道,o=o1:办事渠道)", "身份证挂失"),
        ("get_spo(s=s1:政务事项[身份）证(挂失], p=p1:线上办事渠道， o=o1:办事渠道）", "身份）证(挂失"),
        ("get_spo(s=s1:政务事项[身份（证）挂失],p=p1:线上办事渠道,o=o1:办事渠道)", "身份（证）挂失"),
        # unbalanced on their own (these were "unclosed '(' or '['" errors)
        ("get_spo(s=s1:政务事项[身份(证挂失], p=p1:线上办事渠道, o=o1:办事渠道)", "身份(证挂失"),
        ("Retrieval(s=s1:政务事项[身份（证挂失，补办], p=p1:线上办事渠道, o=o1:办事渠道)", "身份（证挂失，补办"),
    ],
)
def test_kag_get_spo_with_full_width_punctuation(action: str, name: str) -> None:
    op = retrieval(action)
    assert op.s.name == name
    assert (op.s.type, op.p.type, op.o.type) == ("政务事项", "线上办事渠道", "办事渠道")


def test_a_full_width_closing_bracket_ends_a_bare_name() -> None:
    # '】' and '］' close a bare name like ']'; a name holding one must be quoted
    with pytest.raises(LogicalFormError, match="expected"):
        retrieval("Retrieval(s=s1:A[【身份证】挂失], p=p1, o=o1)")
    assert retrieval("Retrieval(s=s1:A【身份证】, p=p1, o=o1)").s.name == "身份证"
    assert retrieval("Retrieval(s=s1:A[`【身份证】挂失`], p=p1, o=o1)").s.name == "【身份证】挂失"


def test_full_width_comma_and_paren_end_a_type_only_at_an_argument_boundary() -> None:
    op = retrieval("Retrieval（s=s1:电影（明星）， p=p1:演，员，o=o1:奖项（国际））")
    assert (op.s.type, op.p.type, op.o.type) == ("电影（明星）", "演，员", "奖项（国际）")
    # '）' that does not end the action and '，' not followed by an argument are text
    op = retrieval("Retrieval(s=s1:A）B, p=p1:x，y，z, o=o1:C（)")
    assert (op.s.type, op.p.type, op.o.type) == ("A）B", "x，y，z", "C（")
    # a constraint after '，' ends the type as well
    op = retrieval("Retrieval(s=s1, p=p1:获奖， o=o1:奖项，o.year=2011）")
    assert (op.o.type, op.constraints[0].value) == ("奖项", 2011)


def test_full_width_types_continue_over_lines() -> None:
    # the old bracket count saw '（' as an open bracket and never closed the action
    plan = parse_plan(
        "Step1: q\n"
        "Action1: Retrieval(\n"
        "    s=s1:电影（明星[`张三`]，\n"
        "    p=p1:参演，\n"  # a '，' at the line end: the next line starts an argument
        "    o=o1:电影, o.city=杭州，\n"
        "    o.year=2011\n"
        ")\n"
        "Action2: Output(o1)\n"
    )
    op = plan.steps[0].actions[0].operator
    assert isinstance(op, RetrievalOp)
    assert (op.s.type, op.s.name, op.p.type, op.o.type) == ("电影（明星", "张三", "参演", "电影")
    assert [c.value for c in op.constraints] == ["杭州", 2011]
    assert plan.steps[0].actions[1].pos.line == 8  # type: ignore[union-attr]


def test_an_unclosed_action_stops_at_the_next_header() -> None:
    error = pytest.raises(
        LogicalFormError, parse_plan, "Step1: q\nAction1: Retrieval(s=s1:A[身份(证], p=p1, o=o1\nAction2: Output(o1)"
    ).value
    assert (error.line, error.column) == (2, 10)
    assert "unclosed '(' or '['" in str(error)


# ---- constraints ----------------------------------------------------------------------------


def test_kag_value_comparison_written_after_equals() -> None:
    op = retrieval(
        "get_spo(s=s1:检查检验结果术语[血压], p=p1:关联术语，  o=o1:检查检验结果, s.value=>160, s.brand=权健)"
    )
    assert op.o.type == "检查检验结果"
    assert op.constraints == [
        Constraint(target="s", prop="value", op=">", value=160),
        Constraint(target="s", prop="brand", op="=", value="权健"),
    ]
    more = retrieval("Retrieval(s=s1, p=p1, o=o1, o.a=<3, o.b=>=4, o.c=!=5, o.d==6, o.e=≥7)")
    assert [(c.op, c.value) for c in more.constraints] == [("<", 3), (">=", 4), ("!=", 5), ("=", 6), (">=", 7)]


def test_kag_search_s_as_retrieval_with_a_property_of_another_alias() -> None:
    plan = parse_plan(
        "Step1: 杭州的医院\n"
        "Action1: Retrieval(s=s1:医院, p=p1, o=o1, s.省份=浙江省, s.城市=杭州市)\n"
        "Step2: 其中心内科医生\n"
        "Action2: Retrieval(s=s2:医生, p=p2, o=o2, s.主执业医院=s1.name, s.主执业科室=心内科)\n"
        "Action3: Output(s2)\n"
    )
    first = plan.steps[0].actions[0].operator
    second = plan.steps[1].actions[0].operator
    assert isinstance(first, RetrievalOp) and isinstance(second, RetrievalOp)
    assert first.s.type == "医院"
    assert {c.prop: c.value for c in first.constraints} == {"省份": "浙江省", "城市": "杭州市"}
    assert second.constraints == [
        Constraint(target="s", prop="主执业医院", op="=", ref=PropertyRef(alias="s1", prop="name")),
        Constraint(target="s", prop="主执业科室", op="=", value="心内科"),
    ]
    assert plan.uses(2) == ("s1",)  # reading s1.name is a read of s1
    assert plan.dependencies()[2] == frozenset({1})
    assert "s.主执业医院=s1.name" in round_trips(plan)


def test_dotted_values_that_name_no_alias_stay_text() -> None:
    op = retrieval("Retrieval(s=s1, p=p1, o=o1, o.site=example.org, o.a=s.b, o.c=`s1.name`, o.d=1.5)")
    assert [(c.value, c.ref) for c in op.constraints] == [
        ("example.org", None),
        (None, PropertyRef(alias="s", prop="b")),
        ("s1.name", None),
        (1.5, None),
    ]
    assert op.constraints[0].to_text() == 'o.site="example.org"'


def test_full_width_comma_inside_a_value_is_text() -> None:
    # KAG's binary_expr case: right_expr=杭州市，abc keeps the comma
    op = retrieval("Retrieval(s=s1, p=p1, o=o1, o.city=杭州市，abc， o.year=2011）")
    assert [(c.prop, c.value) for c in op.constraints] == [("city", "杭州市，abc"), ("year", 2011)]


def test_a_property_ref_must_read_a_defined_alias() -> None:
    with pytest.raises(LogicalFormError, match="alias 'x9'.*not defined"):
        Plan(
            steps=[
                Step(
                    number=1,
                    question="q",
                    actions=[
                        Action(
                            number=1,
                            operator=RetrievalOp(
                                s=Element(alias="s1"),
                                p=Element(alias="p1"),
                                o=Element(alias="o1"),
                                constraints=[
                                    Constraint(target="s", prop="x", op="=", ref=PropertyRef(alias="x9", prop="y"))
                                ],
                            ),
                        ),
                        Action(number=2, operator=OutputOp.model_validate({"aliases": [{"alias": "o1"}]})),
                    ],
                )
            ]
        )


def test_model_rules_for_ids_types_and_refs() -> None:
    with pytest.raises(ValidationError, match="ids need a name"):
        Element(alias="s1", type="Film", ids=["1"])
    with pytest.raises(ValidationError, match="alt_types need a first type"):
        Element(alias="s1", alt_types=["Film"])
    with pytest.raises(ValidationError, match="empty item"):
        Element(alias="s1", name="x", ids=[" "])
    with pytest.raises(ValidationError, match="exactly one"):
        Constraint(target="s", prop="x", op="=", value=1, ref=PropertyRef(alias="s1", prop="y"))
    with pytest.raises(ValidationError, match="exactly one"):
        Constraint(target="s", prop="x", op="=")


def test_kag_backticked_name_holding_comma_and_bracket() -> None:
    op = retrieval("Retrieval(s=s1:医院[`,]`], p=p1:关联术语, o=o1:检查检验结果, s.value=>160, s.brand=权健)")
    assert op.s.name == ",]"
    assert op.s.to_text() == "s1:医院[`,]`]"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("s1:A|[x]", "a type after ':' or '|' is empty"),
        ("s1:A[x][]", "an id in [...] is empty"),
        ("s1:A[x][1|]", "an id in [...] is empty"),
        ("s1:A[x][1|2", "unclosed"),
    ],
)
def test_bad_types_and_ids(text: str, message: str) -> None:
    with pytest.raises(LogicalFormError, match=message.replace("[", r"\[").replace("]", r"\]").replace("|", r"\|")):
        subject(text)


# ---- KAG operators we do not accept -------------------------------------------------------


@pytest.mark.parametrize(
    ("action", "hint"),
    [
        ("get(o1)", "Output(o1"),
        ("get(o1）", "Output(o1"),
        ("verify(left_expr=o1, right_expr=身份证还没有到期,可以更换吗, op=存在）", "Deduce(op=judgement"),
        ("extractor(o1,o2)", "Deduce(op=extract"),
        ("search_s(s=s1:医院, s.省份=浙江省, s.城市=杭州市)", "s.city="),
    ],
)
def test_older_kag_operators_fail_with_a_hint(action: str, hint: str) -> None:
    with pytest.raises(LogicalFormError) as info:
        parse_plan(f"Step1: q\nAction1: Retrieval(s=s1, p=p1, o=o1)\nAction2: {action}\nAction3: Output(o1)")
    assert "older KAG operator that kag-neo4j does not accept" in str(info.value)
    assert hint in str(info.value)
    assert (info.value.line, info.value.column) == (3, 10)


@pytest.mark.parametrize("output", ["Output(o1)", "Output(o1）", "Output(o1,o2）", "Output（o1，o2）"])
def test_output_closed_by_a_full_width_paren(output: str) -> None:
    plan = parse_plan(f"Step1: q\nAction1: Retrieval(s=s1, p=p1, o=o1)\nStep2: r\nAction2: Retrieval(s=o1, p=p2, o=o2)\n"
                      f"Action3: {output}")
    assert plan.output.names[0] == "o1"


# ---- round trip -----------------------------------------------------------------------------


def test_new_forms_round_trip() -> None:
    # built in Python so that every quoting path is used (a backtick inside an id, '|' in a type)
    op = RetrievalOp(
        s=Element(alias="s1", type="电影（，明星", alt_types=["电影导演"], name="张三", ids=["1|3", "2"]),
        p=Element(alias="p1", type="参演", alt_types=["演）员", "a|b"]),
        o=Element(alias="o1", type="Film", name="身份（证）挂失", ids=["has ` and ]", "x"]),
    )
    second = RetrievalOp(
        s=Element(alias="s2", type="医生"),
        p=Element(alias="p2", type="身份）证(挂失"),
        o=Element(alias="o2", name="身份）证(挂失"),
        constraints=[
            Constraint(target="s", prop="v", op=">", value=160),
            Constraint(target="s", prop="h", op="=", ref=PropertyRef(alias="s1", prop="name")),
            Constraint(target="s", prop="w", op="=", value="s1.name"),
        ],
    )
    plan = Plan(
        steps=[
            Step(number=1, question="q", actions=[Action(number=1, operator=op)]),
            Step(
                number=2,
                question="r",
                actions=[
                    Action(number=2, operator=second),
                    Action(number=3, operator=OutputOp.model_validate({"aliases": [{"alias": "o2"}]})),
                ],
            ),
        ]
    )
    text = round_trips(plan)
    assert "s1:`电影（，明星`|电影导演[`张三`][`1|3`|2]" in text
    assert "p1:参演|`演）员`|`a|b`" in text
    assert 'o1:Film[`身份（证）挂失`]["has ` and ]"|x]' in text
    assert 's.v>160, s.h=s1.name, s.w="s1.name"' in text


# ---- KAG-Thinker replies --------------------------------------------------------------------

THINKER_REPLY = """<think>
The question asks for the club. Step1: find the club; then the founding year.
Action1: this is only reasoning, not a plan line.
</think>
Step1: Which club did Cristiano Ronaldo play for in 2011?
Action1: Retrieval(s=s1:Person[`Cristiano Ronaldo`], p=p1:playsFor, o=o1:SportsTeam, p.year=2011)
Action2: Output(o1)
"""


def test_a_kag_thinker_reply_parses_and_keeps_its_reasoning() -> None:
    plan = plan_from_response(THINKER_REPLY)
    assert [step.number for step in plan.steps] == [1]
    assert plan.steps[0].question.startswith("Which club")
    thinking, rest = split_thinking(THINKER_REPLY)
    assert thinking is not None and thinking.startswith("The question asks") and "</think>" not in thinking
    assert rest.strip().startswith("Step1: Which club")


def test_thinking_variants() -> None:
    # the opening tag may be in the prompt; JSON may follow the reasoning
    assert split_thinking("why\n</think>\nStep1: q") == ("why", "\nStep1: q")
    assert split_thinking("Step1: q") == (None, "Step1: q")
    reply = '<think>{"not": "json"}</think>\n{"logical_form": "Step1: q\\nAction1: Retrieval(s=s1, p=p1, o=o1)\\nAction2: Output(o1)"}'
    assert plan_from_response(reply).output.names == ["o1"]
    with pytest.raises(LogicalFormError, match="never closes it"):
        plan_from_response("<think>Step1: q\nAction1: Retrieval(s=s1, p=p1, o=o1)\nAction2: Output(o1)")


def test_random_types_names_and_ids_round_trip() -> None:
    """Seeded: elements made of the characters the new rules care about print and parse back."""
    rng = random.Random(14)
    alphabet = list("ab1 _-.|,()[]（）【】，：＝`\"':=/\\张")

    def token() -> str:
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6))).strip() or "x"

    for _ in range(800):
        types = [token() for _ in range(rng.randint(0, 3))]
        name = token() if rng.random() < 0.7 else None
        element = Element(
            alias="s1",
            type=types[0] if types else None,
            alt_types=types[1:],
            name=name,
            ids=[token() for _ in range(rng.randint(0, 3))] if name else [],
        )
        op = RetrievalOp(
            s=element,
            p=Element(alias="p1", type=token()),
            o=Element(alias="o1"),
            constraints=[Constraint(target="o", prop="x", op="=", value=token())],
        )
        output = OutputOp.model_validate({"aliases": [{"alias": "o1"}]})
        plan = Plan(
            steps=[Step(number=1, question="q", actions=[Action(number=1, operator=op), Action(number=2, operator=output)])]
        )
        round_trips(plan)

"""Every kind of bad plan fails with a LogicalFormError naming the line and column."""

from __future__ import annotations

import pytest

from kag_neo4j.errors import KagError, LogicalFormError
from kag_neo4j.solver.lf.ast import Action, AliasRef, Element, MathOp, OutputOp, Plan, RetrievalOp, Step
from kag_neo4j.solver.lf.parse import parse_plan

R1 = "Action1: Retrieval(s=s1:Person[`Ada Lovelace`], p=p1:bornIn, o=o1:City)"


def where(text: str, line_no: int, needle: str, nth: int = 0) -> tuple[int, int]:
    """(line, column) of the nth occurrence of ``needle`` on 1-based line ``line_no``."""
    line = text.split("\n")[line_no - 1]
    index = -1
    for _ in range(nth + 1):
        index = line.index(needle, index + 1)
    return line_no, index + 1


def fails(text: str) -> LogicalFormError:
    with pytest.raises(LogicalFormError) as info:
        parse_plan(text)
    error = info.value
    assert isinstance(error, KagError)
    assert error.line is not None and error.column is not None
    assert str(error).startswith(f"line {error.line}, column {error.column}: ")
    return error


def test_unknown_operator() -> None:
    text = f"Step1: q\n{R1}\nAction2: Retrive(s=o1, p=p2, o=o2)\nAction3: Output(o2)"
    error = fails(text)
    assert (error.line, error.column) == where(text, 3, "Retrive")
    assert "unknown operator 'Retrive'" in str(error)
    assert "did you mean 'Retrieval'" in str(error)


def test_unknown_deduce_op() -> None:
    text = f"Step1: q\n{R1}\nAction2: Deduce(op=guess, content=[`o1`], target=`x`)->d1\nAction3: Output(d1)"
    error = fails(text)
    assert (error.line, error.column) == where(text, 3, "guess")
    assert "judgement, entailment, choice, multiChoice, extract, greater, less, equal" in str(error)


def test_undefined_alias_in_content() -> None:
    text = f"Step1: q\n{R1}\nAction2: Math(content=[`o9`], target=`o1 + 1`)->m1\nAction3: Output(m1)"
    error = fails(text)
    assert (error.line, error.column) == where(text, 3, "o9")
    assert "alias 'o9'" in str(error) and "not defined" in str(error)
    assert "did you mean 'o1'" in str(error)


def test_undefined_alias_inside_math_target_points_into_the_expression() -> None:
    text = f"Step1: q\n{R1}\nAction2: Math(content=[`o1`], target=`2011 - o7`)->m1\nAction3: Output(m1)"
    error = fails(text)
    assert (error.line, error.column) == where(text, 3, "o7")


def test_undefined_alias_in_output_and_in_retrieval_binding() -> None:
    text = f"Step1: q\n{R1}\nAction2: Output(o1, answer)"
    error = fails(text)
    assert (error.line, error.column) == where(text, 3, "answer")

    text = f"Step1: q\n{R1}\nStep2: r\nAction2: Sort(set=s9, direction=max)->a1\nAction3: Output(a1)"
    error = fails(text)
    assert (error.line, error.column) == where(text, 4, "s9")


def test_invalid_math_expression_points_into_the_target() -> None:
    text = f"Step1: q\n{R1}\nAction2: Math(content=[`o1`], target=`o1.__class__`)->m1\nAction3: Output(m1)"
    error = fails(text)
    assert (error.line, error.column) == where(text, 3, ".__class__")
    assert "attribute access" in str(error)


def test_cycle_between_steps() -> None:
    text = (
        "Step1: a\n"
        "Action1: Math(content=[`m2`], target=`m2 + 1`)->m1\n"
        "Step2: b\n"
        "Action2: Math(content=[`m1`], target=`m1 * 2`)->m2\n"
        "Step3: c\n"
        "Action3: Output(m1)"
    )
    error = fails(text)
    assert (error.line, error.column) == where(text, 2, "m2")
    assert "cyclic dependency Step1 -> Step2 -> Step1" in str(error)
    assert "Step1 reads 'm2' from Step2" in str(error) and "Step2 reads 'm1' from Step1" in str(error)


def test_self_reference_is_a_cycle() -> None:
    text = "Step1: a\nAction1: Math(content=[`m1`], target=`m1 + 1`)->m1\nAction2: Output(m1)"
    error = fails(text)
    assert (error.line, error.column) == where(text, 2, "m1")
    assert "cannot use its own result" in str(error)


def test_read_before_definition_inside_one_step() -> None:
    text = "Step1: a\nAction1: Math(content=[], target=`m2 * 2`)->m1\nAction2: Math(content=[], target=`1`)->m2\nAction3: Output(m1)"
    error = fails(text)
    assert (error.line, error.column) == where(text, 2, "m2")
    assert "move Action2 above Action1" in str(error)


def test_duplicate_alias_from_two_operators() -> None:
    text = (
        f"Step1: q\n{R1}\n"
        "Action2: Math(content=[`o1`], target=`count(o1)`)->m1\n"
        "Action3: Math(content=[`o1`], target=`len(o1)`)->m1\n"
        "Action4: Output(m1)"
    )
    error = fails(text)
    line, column = where(text, 4, "->m1")
    assert (error.line, error.column) == (line, column + 2)
    assert "'m1'" in str(error) and "already defined at line 3" in str(error)


def test_duplicate_alias_retrieval_and_operator() -> None:
    text = f"Step1: q\n{R1}\nAction2: Math(content=[`o1`], target=`count(o1)`)->o1\nAction3: Output(o1)"
    error = fails(text)
    line, column = where(text, 3, "->o1")
    assert (error.line, error.column) == (line, column + 2)
    assert "already defined at line 2" in str(error)


def test_duplicate_alias_with_another_type() -> None:
    text = f"Step1: q\n{R1}\nStep2: r\nAction2: Retrieval(s=o1:Person, p=p2:knows, o=o2)\nAction3: Output(o2)"
    error = fails(text)
    assert (error.line, error.column) == where(text, 4, "o1:Person")
    assert "different type" in str(error)


def test_duplicate_alias_in_one_retrieval() -> None:
    text = "Step1: q\nAction1: Retrieval(s=x1:Person, p=p1:knows, o=x1:Person)\nAction2: Output(x1)"
    error = fails(text)
    assert (error.line, error.column) == where(text, 2, "x1", nth=1)


def test_duplicate_step_and_action_numbers() -> None:
    text = f"Step1: q\n{R1}\nStep1: again\nAction2: Output(o1)"
    error = fails(text)
    assert (error.line, error.column) == (3, 1)
    assert "Step1 appears twice" in str(error)
    text = f"Step1: q\n{R1}\nAction1: Output(o1)"
    error = fails(text)
    assert (error.line, error.column) == (3, 1)


def test_missing_output() -> None:
    text = f"Step1: q\n{R1}\n"
    error = fails(text)
    assert (error.line, error.column) == (2, len(R1) + 1)
    assert "no Output action" in str(error) and "Action2: Output(<alias>)" in str(error)


def test_two_outputs() -> None:
    text = f"Step1: q\n{R1}\nAction2: Output(o1)\nAction3: Output(s1)"
    error = fails(text)
    assert (error.line, error.column) == (4, 1)
    assert "single Output(a, b)" in str(error)


@pytest.mark.parametrize(
    ("text", "line", "needle", "message"),
    [
        ("Here is my plan:\nStep1: q\n" + R1, 1, "Here", "expected 'Step<n>: <sub-question>'"),
        ("Action1: Output(o1)", 1, "Action1", "comes before any Step"),
        ("Step1:   \n" + R1, 1, None, "has no sub-question"),
        (
            "Step1: q\nStep2: r\n" + R1.replace("Action1", "Action2") + "\nAction3: Output(o1)",
            1,
            "Step1",
            "has no Action line",
        ),
        (
            "Step1: q\nAction1: Retrieval(s=s1:A[`x`], p=p1, o=o1\nAction2: Output(o1)",
            2,
            "Retrieval",
            "unclosed",
        ),
        (
            "Step1: q\nAction1: Retrieval(s=s1:A[`x], p=p1, o=o1)\nAction2: Output(o1)",
            2,
            "Retrieval",
            "never closed",
        ),
        ("Step1: q\nAction1: Retrieval(s=s1:A[`x`], p=p1)\nAction2: Output(s1)", 2, ")", "missing o="),
        (
            "Step1: q\nAction1: Retrieval(s=s1:A[`x`], p=p1, o=o1, q=q1)\nAction2: Output(o1)",
            2,
            "q=",
            "unknown argument 'q'",
        ),
        (
            "Step1: q\nAction1: Retrieval(s=s1:A[`x`], p=p1, o=o1, s=s2)\nAction2: Output(o1)",
            2,
            "s=s2",
            "given twice",
        ),
        (
            "Step1: q\nAction1: Retrieval(s=s1:A[`x`], p=p1, o=o1, o9.year=3)\nAction2: Output(o1)",
            2,
            "o9",
            "not s, p, o or one of this Retrieval's aliases",
        ),
        (
            "Step1: q\nAction1: Retrieval(s=s1:A[`x`], p=p1, o=o1, p.year~3)\nAction2: Output(o1)",
            2,
            "~",
            "expected a comparison",
        ),
        (
            "Step1: q\nAction1: Retrieval(s=s1:A[`x`], p=p1, o=o1)\nAction2: Math(content=[`o1`], target=`o1+1`)\nAction3: Output(o1)",
            3,
            None,
            "must bind its result",
        ),
        (
            "Step1: q\nAction1: Retrieval(s=s1:A[`x`], p=p1, o=o1)->r1\nAction2: Output(o1)",
            2,
            "r1",
            "does not bind a result",
        ),
        (
            "Step1: q\nAction1: Retrieval(s=s1:A[`x`], p=p1, o=o1) trailing\nAction2: Output(o1)",
            2,
            "trailing",
            "unexpected text",
        ),
        ("Step1: q\nAction1: Math(content=[`o1`])->m1\nAction2: Output(m1)", 2, "->m1", "needs target="),
        (
            "Step1: q\nAction1: Sort(set=s1)->a1\nAction2: Output(a1)",
            2,
            "->a1",
            "direction=min or direction=max",
        ),
        (
            "Step1: q\nAction1: Retrieval(s=s1:A[`x`], p=p1, o=o1)\nAction2: Sort(set=o1, direction=up)->a1\nAction3: Output(a1)",
            3,
            "up",
            "not min or max",
        ),
        (
            "Step1: q\nAction1: Retrieval(s=s1:A[`x`], p=p1, o=o1)\nAction2: Sort(set=o1, direction=max, limit=0)->a1\nAction3: Output(a1)",
            3,
            "0)",
            "at least 1",
        ),
        (
            "Step1: q\nAction1: Retrieval(s=s1:A[`x`], p=p1, o=o1)\nAction2: Output()",
            3,
            "Output",
            "names no alias",
        ),
        (
            "Step1: q\nAction1: Math(content=[], target=`1`)->sum\nAction2: Output(sum)",
            2,
            "sum",
            "reserved word",
        ),
        (
            "Step1: q\nAction1: Retrieval(s=s1:A[`x`], p=p1, o=o1)\nAction2: Deduce(op=extract, content=[Real Madrid])->d1\nAction3: Output(d1)",
            3,
            "Real Madrid",
            "neither an alias nor quoted text",
        ),
        (
            "Step1: q\nAction1: Retrieval(s=s1:A[], p=p1, o=o1)\nAction2: Output(o1)",
            2,
            "[]",
            "the name in [...] is empty",
        ),
    ],
)
def test_syntax_errors(text: str, line: int, needle: str | None, message: str) -> None:
    error = fails(text)
    assert message in str(error)
    assert error.line == line
    if needle is not None:
        assert (error.line, error.column) == where(text, line, needle)


def test_empty_plan() -> None:
    error = fails("   \n// nothing here\n")
    assert (error.line, error.column) == (1, 1)
    assert "the plan is empty" in str(error)


def test_non_text_input() -> None:
    with pytest.raises(LogicalFormError):
        parse_plan(None)  # type: ignore[arg-type]


def test_python_built_plan_errors_name_the_action() -> None:
    step = Step(
        number=1,
        question="q",
        actions=[
            Action(
                number=1,
                operator=RetrievalOp(
                    s=Element(alias="s1", name="x"), p=Element(alias="p1"), o=Element(alias="o1")
                ),
            ),
            Action(number=2, operator=MathOp(content=[AliasRef(alias="zz")], target="zz", output="m1")),
            Action(number=3, operator=OutputOp(aliases=[AliasRef(alias="m1")])),
        ],
    )
    with pytest.raises(LogicalFormError) as info:
        Plan(steps=[step])
    assert info.value.line is None
    assert "alias 'zz' (read by Action2 of Step1) is not defined" in str(info.value)

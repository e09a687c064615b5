"""The safe Math evaluator: arithmetic, precedence, dates, bounds and refusals."""

from __future__ import annotations

import datetime as dt
import time

import pytest

from kag_neo4j.errors import MathError
from kag_neo4j.solver.lf.expression import (
    MAX_EXPRESSION_CHARS,
    MAX_TREE_DEPTH,
    evaluate,
    expression_names,
    parse_expression,
)
from kag_neo4j.solver.values import format_value


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("2011 - 1902", 109),
        ("1 + 2 * 3", 7),
        ("(1 + 2) * 3", 9),
        ("10 - 4 - 3", 3),  # left-associative
        ("2 ^ 3 ^ 2", 512),  # right-associative
        ("2 ** 10", 1024),
        ("-2 ^ 2", -4),  # unary minus binds looser than ^
        ("(-2) ^ 2", 4),
        ("2 ^ -1", 0.5),
        ("--3", 3),
        ("-3 + +4", 1),
        ("7 % 3", 1),
        ("7 / 2", 3.5),
        ("8 / 2", 4),  # exact integer division stays an int
        ("200 * 15%", 30.0),
        ("50% + 1", 1.5),
        ("45 % 7 * 2", 6),
        ("1,234,567 + 1", 1_234_568),
        ("1_000 * 3", 3000),
        ("1.5e3", 1500.0),
        (".5 + .25", 0.75),
        ("3 × 4 ÷ 2 − 1", 5),
        ("count(1, 2, 3)", 3),
        ("sum(1, 2, 3.5)", 6.5),
        ("min(4, 2, 9)", 2),
        ("max(4, 2, 9)", 9),
        ("avg(1, 2, 3, 4)", 2.5),
        ("mean(2, 4)", 3),
        ("abs(-7)", 7),
        ("round(2.5)", 3),  # half away from zero, not banker's rounding
        ("round(-2.5)", -3),
        ("round(3.14159, 2)", 3.14),
        ("round(1234, -2)", 1200),
        ("len('abcd')", 4),
        ("max(1,234)", 234),  # inside a call ',' separates arguments
        ("max(1234, 5)", 1234),
    ],
)
def test_arithmetic(expr: str, expected: object) -> None:
    result = evaluate(expr)
    assert result == expected
    assert type(result) is type(expected)


def test_aliases_bound_to_numbers_lists_and_strings() -> None:
    bindings = {
        "o2": ["1902"],  # one-element list from a Retrieval
        "pop": "3,223,334 inhabitants",
        "share": "45%",
        "wan": "1.2万",
        "teams": ["Real Madrid", "Barcelona", "Sevilla"],
        "goals": ["12", "1,005", 3],
        "money": "€1,200",
    }
    assert evaluate("2011 - o2", bindings) == 109
    assert evaluate("pop / 1000", bindings) == pytest.approx(3223.334)
    assert evaluate("share * 200", bindings) == pytest.approx(90.0)
    assert evaluate("wan + 1", bindings) == 12001
    assert evaluate("count(teams)", bindings) == 3
    assert evaluate("len(teams)", bindings) == 3
    assert evaluate("sum(goals)", bindings) == 1020
    assert evaluate("max(goals) - min(goals)", bindings) == 1002
    assert evaluate("money * 2", bindings) == 2400


def test_dates() -> None:
    assert (
        evaluate("date('2011-05-01') - date('1902-03-06')")
        == (dt.date(2011, 5, 1) - dt.date(1902, 3, 6)).days
    )
    assert evaluate("date('2011-05-01') - date('1902-03-06')") == 39868
    assert evaluate("date('2020-02-28') + 2") == dt.date(2020, 3, 1)
    assert evaluate("date('2020-03-01') - 1") == dt.date(2020, 2, 29)
    assert evaluate("year('6 March 1902')") == 1902
    assert evaluate("year(d)", {"d": dt.date(1999, 12, 31)}) == 1999
    assert evaluate("month('1902年3月6日') + day('March 6, 1902')") == 9
    assert evaluate("days_between('2011-05-01', '2011-04-01')") == 30
    assert evaluate("years_between(born, published)", {"born": "1900-06-29", "published": "1943-04-06"}) == 42
    assert evaluate("years_between('1900-06-29', '1943-06-29')") == 43
    assert evaluate("years_between('1902', '2011')") == 109
    assert evaluate("2011 - year(founded)", {"founded": "6 March 1902"}) == 109
    # two ISO date strings subtract as dates
    assert evaluate("a - b", {"a": "2011-05-01", "b": "2011-04-30"}) == 1


@pytest.mark.parametrize(
    ("expr", "bindings", "message"),
    [
        ("2011 - founded", {"founded": "6 March 1902"}, "use year(founded)"),
        ("date('1902') + 1", {}, "without a month"),
        ("date('not a date')", {}, "is not a date"),
        ("month('1902')", {}, "has no month"),
        ("date('2011-05-01') * 2", {}, "cannot compute date * number"),
        ("o1 + 1", {"o1": ["a", "b"]}, "holds 2 values; use sum()"),
        ("o1 + 1", {"o1": []}, "holds no value"),
        ("o1 + 1", {"o1": "Real Madrid"}, "holds no single number or date"),
        ("o1 + 1", {"o1": True}, "yes/no value"),
        ("o1 + 1", {"o1": None}, "has no value"),
        ("x + 1", {"o1": 1}, "unknown name 'x'; the bound aliases are: o1"),
        ("1 / 0", {}, "division by zero"),
        ("1 % 0", {}, "modulo by zero"),
        ("0 ^ -1", {}, "negative power"),
        ("(-8) ^ 0.5", {}, "fractional power"),
        ("avg(o1)", {"o1": []}, "of no values"),
        ("round(1.5, 99)", {}, "from -12 to 12"),
        ("abs(1, 2)", {}, "takes 1 argument(s), got 2"),
        ("count()", {}, "takes at least 1 argument(s), got 0"),
        ("days_between('2011-05-01')", {}, "takes 2 argument(s), got 1"),
        ("max(date('2011-01-01'), 3)", {}, "mixes dates and numbers"),
    ],
)
def test_evaluation_errors(expr: str, bindings: dict[str, object], message: str) -> None:
    with pytest.raises(MathError) as info:
        evaluate(expr, bindings)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("expr", "column", "message"),
    [
        ("__import__('os')", 1, "unknown function '__import__'"),
        ("__import__('os').system('rm -rf /')", 17, "attribute access"),
        ("exec('1')", 1, "unknown function 'exec'"),
        ("eval('1+1')", 1, "unknown function 'eval'"),
        ("o1.__class__", 3, "attribute access"),
        ("o1.__class__.__mro__", 3, "attribute access"),
        ("count.__globals__", 6, "attribute access"),
        ("(1).real", 4, "attribute access"),
        ("'a'.upper()", 4, "attribute access"),
        ("[1, 2]", 1, "unexpected character '['"),
        ("lambda: 1", 7, "unexpected character ':'"),
        ("a if b else c", 3, "unexpected 'if'"),
        ("o1; o2", 3, "unexpected character ';'"),
        ("o1 = 3", 4, "unexpected character '='"),
        ("2011x", 5, "runs into the name"),
        ("1 +", 4, "found the end of the expression"),
        ("(1 + 2", 7, "expected ')' to close the '(' at column 1"),
        ("", 1, "empty"),
        ("'open", 1, "never closed"),
        ("1_2", 2, "groups of three digits"),
        ("sum(1 2)", 7, "expected ')' to close"),
    ],
)
def test_refuses_everything_outside_the_grammar(expr: str, column: int, message: str) -> None:
    with pytest.raises(MathError) as info:
        parse_expression(expr)
    assert message in str(info.value)
    assert info.value.column == column


def test_huge_numbers_are_bounded_quickly() -> None:
    started = time.perf_counter()
    for expr in ["9 ^ 9 ^ 9", "10 ^ 5000", "2 ^ 4097", "99999999999 ^ 999", "1e308 * 10", "2.5 ^ 100000"]:
        with pytest.raises(MathError):
            evaluate(expr)
    with pytest.raises(MathError, match="longer than"):
        evaluate("1" * 400)
    with pytest.raises(MathError, match="too large"):
        evaluate("1e999")
    huge = "*".join(["99999999999999999999"] * 300)[:MAX_EXPRESSION_CHARS]
    huge = huge.rstrip("*")
    with pytest.raises(MathError):
        evaluate(huge)
    assert time.perf_counter() - started < 2.0
    assert evaluate("2 ^ 100") == 2**100  # big but bounded results are exact


def test_length_and_depth_limits() -> None:
    with pytest.raises(MathError, match="characters long"):
        parse_expression("1+" * MAX_EXPRESSION_CHARS + "1")
    with pytest.raises(MathError, match="nests deeper"):
        parse_expression("(" * 100 + "1" + ")" * 100)
    with pytest.raises(MathError, match="nested operations"):
        parse_expression("+".join(["1"] * (MAX_TREE_DEPTH + 5)))
    with pytest.raises(MathError, match="nests deeper"):
        parse_expression("-" * 200 + "1")
    assert evaluate("+".join(["1"] * (MAX_TREE_DEPTH - 1))) == MAX_TREE_DEPTH - 1


def test_expression_names_excludes_functions_and_keeps_columns() -> None:
    names = expression_names("years_between(o2, o3) + count(teams) - o2")
    assert [(n.name, n.column) for n in names] == [("o2", 15), ("o3", 19), ("teams", 31), ("o2", 40)]


def test_format_value() -> None:
    assert format_value(30.0) == "30"
    assert format_value(0.1 + 0.2) == "0.3"
    assert format_value(dt.date(1902, 3, 6)) == "1902-03-06"
    assert format_value([1, 2.5]) == "1, 2.5"
    assert format_value(True) == "yes"

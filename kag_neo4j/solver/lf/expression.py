"""A safe evaluator for ``Math(...)`` targets.

The expression language is tiny and has its own tokenizer and recursive-descent parser; model
text is never handed to ``eval``, ``exec``, ``compile`` or ``ast``. Grammar (lowest precedence
first)::

    expr    := term (("+" | "-") term)*
    term    := unary (("*" | "/" | "%") unary)*
    unary   := ("-" | "+") unary | power
    power   := postfix (("^" | "**") unary)?          right-associative; -2^2 = -4
    postfix := primary "%"*                            percent: 15% = 0.15
    primary := NUMBER | STRING | NAME | NAME "(" [expr ("," expr)*] ")" | "(" expr ")"

``%`` followed by an operand is modulo, otherwise it is a percent sign. Numbers may use
thousands separators (``1,234,567``, ``1_234``) except inside a function's argument list,
where ``,`` always separates arguments. Names are aliases bound by earlier steps; a name may
hold a number, a date, a string that contains one number or one date, or a list of those.

Functions: ``count sum min max avg mean abs round len date year month day days_between
years_between``. ``date(a) - date(b)`` is a number of days; ``date ± n`` moves by ``n`` days.
Results are bounded (:data:`MAX_INT_BITS`, :data:`MAX_EXPONENT`, :data:`MAX_DEPTH`,
:data:`MAX_EXPRESSION_CHARS`) so no expression can exhaust memory or the stack.
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, NamedTuple, Union

from kag_neo4j.errors import MathError
from kag_neo4j.solver.values import PartialDate, parse_date, parse_number

__all__ = [
    "FUNCTIONS",
    "MAX_DEPTH",
    "MAX_EXPONENT",
    "MAX_EXPRESSION_CHARS",
    "MAX_INT_BITS",
    "MAX_TREE_DEPTH",
    "Expression",
    "MathValue",
    "NameUse",
    "evaluate",
    "expression_names",
    "parse_expression",
]

MAX_EXPRESSION_CHARS = 2000
MAX_NUMBER_DIGITS = 300
MAX_DEPTH = 60
MAX_TREE_DEPTH = 200
MAX_INT_BITS = 4096  # about 1,233 decimal digits
MAX_EXPONENT = 10_000
MAX_LIST_ITEMS = 100_000

MathValue = Union[int, float, str, _dt.date, list]


# --------------------------------------------------------------------------------------------
# tokens


class _Token(NamedTuple):
    kind: str  # NUM STR NAME OP PCT LP RP COMMA EOF
    value: Any
    column: int  # 1-based


_OPERATORS = {"+": "+", "-": "-", "\u2212": "-", "*": "*", "×": "*", "/": "/", "÷": "/", "^": "^"}


def _is_name_start(ch: str) -> bool:
    return ch == "_" or ch.isalpha()


def _is_name_char(ch: str) -> bool:
    return ch == "_" or ch.isalnum()


def _starts_operand(text: str, i: int) -> bool:
    while i < len(text) and text[i].isspace():
        i += 1
    if i >= len(text):
        return False
    ch = text[i]
    return ch.isdigit() or ch == "." or _is_name_start(ch) or ch in "('\""


def _tokenize(text: str) -> list[_Token]:
    if len(text) > MAX_EXPRESSION_CHARS:
        raise MathError(f"the expression is {len(text)} characters long; the limit is {MAX_EXPRESSION_CHARS}")
    tokens: list[_Token] = []
    parens: list[bool] = []  # True = a function call's argument list
    i = 0
    while i < len(text):
        ch = text[i]
        col = i + 1
        if ch.isspace():
            i += 1
        elif ch.isdigit() or (ch == "." and i + 1 < len(text) and text[i + 1].isdigit()):
            i = _read_number(text, i, tokens, in_call=bool(parens and parens[-1]))
        elif ch in "'\"":
            i = _read_string(text, i, tokens)
        elif _is_name_start(ch):
            j = i + 1
            while j < len(text) and _is_name_char(text[j]):
                j += 1
            tokens.append(_Token("NAME", text[i:j], col))
            i = j
        elif ch == "*" and text.startswith("**", i):
            tokens.append(_Token("OP", "^", col))
            i += 2
        elif ch in _OPERATORS:
            tokens.append(_Token("OP", _OPERATORS[ch], col))
            i += 1
        elif ch == "%":
            tokens.append(_Token("OP", "%", col) if _starts_operand(text, i + 1) else _Token("PCT", "%", col))
            i += 1
        elif ch == "(":
            parens.append(bool(tokens) and tokens[-1].kind == "NAME")
            tokens.append(_Token("LP", "(", col))
            i += 1
        elif ch == ")":
            if parens:
                parens.pop()
            tokens.append(_Token("RP", ")", col))
            i += 1
        elif ch == ",":
            tokens.append(_Token("COMMA", ",", col))
            i += 1
        elif ch == "." and tokens and tokens[-1].kind in {"NAME", "RP", "STR"}:
            raise MathError(
                "attribute access ('.') is not allowed; Math targets use only numbers, aliases, "
                "operators and the listed functions",
                column=col,
            )
        else:
            raise MathError(
                f"unexpected character {ch!r}; use numbers, aliases, + - * / % ^, parentheses "
                "and functions such as sum(), count(), date()",
                column=col,
            )
    tokens.append(_Token("EOF", None, len(text) + 1))
    return tokens


def _read_number(text: str, i: int, tokens: list[_Token], *, in_call: bool) -> int:
    start = i
    j = i
    digits: list[str] = []

    def run(k: int) -> int:
        while k < len(text) and text[k].isdigit():
            k += 1
        return k

    k = run(j)
    digits.append(text[j:k])
    j = k
    # thousands separators: 1,234,567 (not inside a call's arguments) or 1_234
    sep_used = None
    if 1 <= len(digits[0]) <= 3:
        for sep in ([","] if not in_call else []) + ["_"]:
            k2 = j
            groups: list[str] = []
            while (
                k2 < len(text)
                and text[k2] == sep
                and k2 + 4 <= len(text)
                and text[k2 + 1 : k2 + 4].isdigit()
                and not (k2 + 4 < len(text) and text[k2 + 4].isdigit())
            ):
                groups.append(text[k2 + 1 : k2 + 4])
                k2 += 4
            if groups:
                digits.extend(groups)
                j = k2
                sep_used = sep
                break
    if sep_used is None and j < len(text) and text[j] == "_":
        raise MathError("a '_' in a number must separate groups of three digits", column=j + 1)
    is_float = False
    if j < len(text) and text[j] == "." and j + 1 < len(text) and text[j + 1].isdigit():
        k = run(j + 1)
        digits.append(text[j:k])
        j = k
        is_float = True
    elif j < len(text) and text[j] == "." and not (j + 1 < len(text) and _is_name_start(text[j + 1])):
        j += 1  # "3." is 3.0
        is_float = True
    if j < len(text) and text[j] in "eE":
        k = j + 1
        if k < len(text) and text[k] in "+-":
            k += 1
        if k < len(text) and text[k].isdigit():
            k = run(k)
            digits.append(text[j:k])
            j = k
            is_float = True
    literal = "".join(digits)
    if len(literal) > MAX_NUMBER_DIGITS:
        raise MathError(f"the number is longer than {MAX_NUMBER_DIGITS} characters", column=start + 1)
    if j < len(text) and _is_name_start(text[j]):
        raise MathError(
            f"a number runs into the name {text[j]!r}; put an operator between them",
            column=j + 1,
        )
    value: int | float
    if is_float:
        value = float(literal)
        if not math.isfinite(value):
            raise MathError(f"the number {literal!r} is too large", column=start + 1)
    else:
        value = int(literal)
    tokens.append(_Token("NUM", value, start + 1))
    return j


_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", "'": "'", '"': '"'}


def _read_string(text: str, i: int, tokens: list[_Token]) -> int:
    quote = text[i]
    j = i + 1
    chars: list[str] = []
    while j < len(text):
        ch = text[j]
        if ch == "\\" and j + 1 < len(text):
            chars.append(_ESCAPES.get(text[j + 1], text[j + 1]))
            j += 2
            continue
        if ch == quote:
            tokens.append(_Token("STR", "".join(chars), i + 1))
            return j + 1
        chars.append(ch)
        j += 1
    raise MathError(f"the string starting with {quote} is never closed", column=i + 1)


# --------------------------------------------------------------------------------------------
# syntax tree


@dataclass(frozen=True)
class _Num:
    value: int | float
    column: int


@dataclass(frozen=True)
class _Str:
    value: str
    column: int


@dataclass(frozen=True)
class _Name:
    name: str
    column: int


@dataclass(frozen=True)
class _Call:
    name: str
    args: tuple[_Node, ...]
    column: int


@dataclass(frozen=True)
class _Unary:
    op: str
    operand: _Node
    column: int


@dataclass(frozen=True)
class _Percent:
    operand: _Node
    column: int


@dataclass(frozen=True)
class _Binary:
    op: str
    left: _Node
    right: _Node
    column: int


_Node = Union[_Num, _Str, _Name, _Call, _Unary, _Percent, _Binary]


class _Parser:
    def __init__(self, tokens: list[_Token]) -> None:
        self.tokens = tokens
        self.i = 0
        self.depth = 0

    @property
    def tok(self) -> _Token:
        return self.tokens[self.i]

    def next(self) -> _Token:
        token = self.tokens[self.i]
        self.i += 1
        return token

    def enter(self, column: int) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise MathError(f"the expression nests deeper than {MAX_DEPTH} levels", column=column)

    def parse(self) -> _Node:
        if self.tok.kind == "EOF":
            raise MathError("the expression is empty; write e.g. `2011 - o2`", column=1)
        node = self.expr()
        if self.tok.kind != "EOF":
            raise MathError(
                f"unexpected {self._describe(self.tok)} after a complete expression", column=self.tok.column
            )
        return node

    def expr(self) -> _Node:
        node = self.term()
        while self.tok.kind == "OP" and self.tok.value in "+-":
            op = self.next()
            node = _Binary(op.value, node, self.term(), op.column)
        return node

    def term(self) -> _Node:
        node = self.unary()
        while self.tok.kind == "OP" and self.tok.value in "*/%":
            op = self.next()
            node = _Binary(op.value, node, self.unary(), op.column)
        return node

    def unary(self) -> _Node:
        if self.tok.kind == "OP" and self.tok.value in "+-":
            op = self.next()
            self.enter(op.column)
            try:
                return _Unary(op.value, self.unary(), op.column)
            finally:
                self.depth -= 1
        return self.power()

    def power(self) -> _Node:
        node = self.postfix()
        if self.tok.kind == "OP" and self.tok.value == "^":
            op = self.next()
            self.enter(op.column)
            try:
                node = _Binary("^", node, self.unary(), op.column)
            finally:
                self.depth -= 1
        return node

    def postfix(self) -> _Node:
        node = self.primary()
        while self.tok.kind == "PCT":
            node = _Percent(node, self.next().column)
        return node

    def primary(self) -> _Node:
        tok = self.next()
        if tok.kind == "NUM":
            return _Num(tok.value, tok.column)
        if tok.kind == "STR":
            return _Str(tok.value, tok.column)
        if tok.kind == "NAME":
            if self.tok.kind == "LP":
                return self.call(tok)
            return _Name(tok.value, tok.column)
        if tok.kind == "LP":
            self.enter(tok.column)
            try:
                node = self.expr()
            finally:
                self.depth -= 1
            self.expect_rp(tok)
            return node
        raise MathError(
            f"expected a number, an alias or '(' but found {self._describe(tok)}", column=tok.column
        )

    def call(self, name: _Token) -> _Node:
        lp = self.next()
        if name.value not in FUNCTIONS:
            raise MathError(
                f"unknown function {name.value!r}; allowed functions: {', '.join(sorted(FUNCTIONS))}",
                column=name.column,
            )
        self.enter(lp.column)
        try:
            args: list[_Node] = []
            if self.tok.kind != "RP":
                args.append(self.expr())
                while self.tok.kind == "COMMA":
                    self.next()
                    args.append(self.expr())
            self.expect_rp(lp)
        finally:
            self.depth -= 1
        lo, hi = FUNCTIONS[name.value].arity
        if not lo <= len(args) <= (hi if hi is not None else len(args)):
            want = f"{lo}" if lo == hi else (f"at least {lo}" if hi is None else f"{lo} to {hi}")
            raise MathError(f"{name.value}() takes {want} argument(s), got {len(args)}", column=name.column)
        return _Call(name.value, tuple(args), name.column)

    def expect_rp(self, opened: _Token) -> None:
        if self.tok.kind != "RP":
            raise MathError(
                f"expected ')' to close the '(' at column {opened.column} but found {self._describe(self.tok)}",
                column=self.tok.column,
            )
        self.next()

    @staticmethod
    def _describe(tok: _Token) -> str:
        if tok.kind == "EOF":
            return "the end of the expression"
        return repr(tok.value) if tok.kind != "STR" else "a string"


# --------------------------------------------------------------------------------------------
# evaluation


class NameUse(NamedTuple):
    """An alias used in an expression and its 1-based column."""

    name: str
    column: int


@dataclass(frozen=True)
class Expression:
    """A parsed Math expression. ``names`` lists the aliases it reads, in order."""

    text: str
    root: _Node = field(repr=False)

    @property
    def names(self) -> list[NameUse]:
        found: list[NameUse] = []
        stack: list[_Node] = [self.root]
        while stack:
            node = stack.pop()
            if isinstance(node, _Name):
                found.append(NameUse(node.name, node.column))
            elif isinstance(node, _Call):
                stack.extend(reversed(node.args))
            elif isinstance(node, _Unary | _Percent):
                stack.append(node.operand)
            elif isinstance(node, _Binary):
                stack.extend((node.right, node.left))
        return sorted(found, key=lambda use: use.column)

    def evaluate(self, bindings: Mapping[str, Any] | None = None) -> MathValue:
        return _Evaluator(bindings or {}).value_of(self.root)


def parse_expression(text: str) -> Expression:
    """Parse ``text``; raises :class:`MathError` (with the column) when it is not an expression."""
    if not isinstance(text, str):
        raise MathError(f"a Math target must be text, got {type(text).__name__}")
    root = _Parser(_tokenize(text)).parse()
    _check_tree_depth(root)
    return Expression(text, root)


def _check_tree_depth(root: _Node) -> None:
    """Chains such as ``1+1+...+1`` are parsed iteratively but evaluated recursively: bound them."""
    stack: list[tuple[_Node, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_TREE_DEPTH:
            raise MathError(
                f"the expression has more than {MAX_TREE_DEPTH} nested operations; split it "
                "into several Math steps",
                column=node.column,
            )
        if isinstance(node, _Binary):
            stack.extend(((node.left, depth + 1), (node.right, depth + 1)))
        elif isinstance(node, _Unary | _Percent):
            stack.append((node.operand, depth + 1))
        elif isinstance(node, _Call):
            stack.extend((arg, depth + 1) for arg in node.args)


def expression_names(text: str) -> list[NameUse]:
    """The aliases ``text`` reads (function names excluded), in order of appearance."""
    return parse_expression(text).names


def evaluate(text: str, bindings: Mapping[str, Any] | None = None) -> MathValue:
    """Evaluate ``text`` with aliases bound by ``bindings``; raises :class:`MathError`."""
    return parse_expression(text).evaluate(bindings)


def _describe_value(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class _Evaluator:
    def __init__(self, bindings: Mapping[str, Any]) -> None:
        self.bindings = bindings

    def value_of(self, node: _Node) -> Any:
        if isinstance(node, _Num):
            return node.value
        if isinstance(node, _Str):
            return node.value
        if isinstance(node, _Name):
            if node.name not in self.bindings:
                known = ", ".join(sorted(self.bindings)) or "none"
                raise MathError(
                    f"unknown name {node.name!r}; the bound aliases are: {known}", column=node.column
                )
            return self.bindings[node.name]
        if isinstance(node, _Unary):
            value = self.number(self.value_of(node.operand), node.operand)
            return -value if node.op == "-" else value
        if isinstance(node, _Percent):
            value = self.number(self.value_of(node.operand), node.operand)
            return _check(value / 100, node.column)
        if isinstance(node, _Binary):
            return self.binary(node)
        if isinstance(node, _Call):
            spec = FUNCTIONS[node.name]
            args = [self.value_of(arg) for arg in node.args]
            return spec.impl(self, node, args)
        raise AssertionError(node)  # pragma: no cover

    # ---- coercion -----------------------------------------------------------------------

    def scalar(self, value: Any, node: _Node) -> Any:
        """Unwrap one-element lists; reject empty and multi-valued ones."""
        label = _label(node)
        while isinstance(value, list | tuple):
            if len(value) == 1:
                value = value[0]
            elif not value:
                raise MathError(f"{label} holds no value", column=node.column)
            else:
                raise MathError(
                    f"{label} holds {len(value)} values; use sum(), count(), min(), max() or avg()",
                    column=node.column,
                )
        if value is None:
            raise MathError(f"{label} has no value", column=node.column)
        return value

    def operand(self, value: Any, node: _Node) -> int | float | _dt.date:
        """A number or a full date, read from ``value``."""
        value = self.scalar(value, node)
        label = _label(node)
        if isinstance(value, bool):
            raise MathError(f"{label} is a yes/no value, not a number", column=node.column)
        if isinstance(value, int | float):
            return value
        if isinstance(value, _dt.datetime):
            return value.date()
        if isinstance(value, _dt.date):
            return value
        if isinstance(value, PartialDate):
            return self._date_from_partial(value, node)
        if isinstance(value, str):
            number = parse_number(value)
            if number is not None:
                return number
            parsed = parse_date(value)
            if parsed is not None:
                return self._date_from_partial(parsed, node)
            raise MathError(
                f"{label} = {_describe_value(value)} holds no single number or date", column=node.column
            )
        raise MathError(f"{label} is a {type(value).__name__}, not a number", column=node.column)

    def _date_from_partial(self, value: PartialDate, node: _Node) -> _dt.date:
        if value.is_complete:
            return value.to_date()
        raise MathError(
            f"{_label(node)} = {value.isoformat()} is a date without "
            f"{'a month' if value.month is None else 'a day'}; use year({_name_hint(node)}) instead",
            column=node.column,
        )

    def number(self, value: Any, node: _Node) -> int | float:
        result = self.operand(value, node)
        if isinstance(result, _dt.date):
            raise MathError(
                f"{_label(node)} is a date; use year({_name_hint(node)}), days_between() or "
                "date(a) - date(b)",
                column=node.column,
            )
        return result

    def items(self, args: Sequence[Any], node: _Call) -> list[Any]:
        flat: list[Any] = []

        def walk(value: Any) -> None:
            if isinstance(value, list | tuple):
                for item in value:
                    walk(item)
            elif value is not None:
                flat.append(value)
            if len(flat) > MAX_LIST_ITEMS:
                raise MathError(f"{node.name}() got more than {MAX_LIST_ITEMS} values", column=node.column)

        for arg in args:
            walk(arg)
        return flat

    # ---- operators ----------------------------------------------------------------------

    def binary(self, node: _Binary) -> Any:
        left = self.operand(self.value_of(node.left), node.left)
        right = self.operand(self.value_of(node.right), node.right)
        op = node.op
        left_date = isinstance(left, _dt.date)
        right_date = isinstance(right, _dt.date)
        if left_date or right_date:
            return self.date_arithmetic(op, left, right, node)
        assert isinstance(left, int | float) and isinstance(right, int | float)
        if op == "+":
            return _check(left + right, node.column)
        if op == "-":
            return _check(left - right, node.column)
        if op == "*":
            if isinstance(left, int) and isinstance(right, int) and left and right:
                if left.bit_length() + right.bit_length() > MAX_INT_BITS + 1:
                    raise MathError(_too_large(), column=node.column)
            return _check(left * right, node.column)
        if op == "/":
            if right == 0:
                raise MathError("division by zero", column=node.column)
            if isinstance(left, int) and isinstance(right, int) and left % right == 0:
                return left // right
            return _check(left / right, node.column)
        if op == "%":
            if right == 0:
                raise MathError("modulo by zero", column=node.column)
            return _check(left % right, node.column)
        if op == "^":
            return self.power(left, right, node)
        raise AssertionError(op)  # pragma: no cover

    def power(self, base: int | float, exponent: int | float, node: _Binary) -> int | float:
        if isinstance(exponent, float) and exponent.is_integer() and abs(exponent) <= MAX_EXPONENT:
            exponent = int(exponent) if isinstance(base, int) else exponent
        if abs(exponent) > MAX_EXPONENT:
            raise MathError(f"the exponent {exponent} is larger than {MAX_EXPONENT}", column=node.column)
        if isinstance(base, int) and isinstance(exponent, int):
            if exponent < 0:
                if base == 0:
                    raise MathError("zero cannot be raised to a negative power", column=node.column)
                return _check(float(base) ** exponent, node.column)
            if abs(base) > 1 and exponent * (abs(base).bit_length() - 1) > MAX_INT_BITS:
                raise MathError(_too_large(), column=node.column)
            return _check(base**exponent, node.column)
        if base < 0 and not float(exponent).is_integer():
            raise MathError("a negative number cannot be raised to a fractional power", column=node.column)
        if base == 0 and exponent < 0:
            raise MathError("zero cannot be raised to a negative power", column=node.column)
        try:
            return _check(math.pow(base, exponent), node.column)
        except OverflowError:
            raise MathError(_too_large(), column=node.column) from None

    def date_arithmetic(self, op: str, left: Any, right: Any, node: _Binary) -> Any:
        left_date = isinstance(left, _dt.date)
        right_date = isinstance(right, _dt.date)
        try:
            if op == "-" and left_date and right_date:
                return (left - right).days
            if op in "+-" and left_date and not right_date:
                days = _whole_days(right, node)
                return left + _dt.timedelta(days=days if op == "+" else -days)
            if op == "+" and right_date and not left_date:
                return right + _dt.timedelta(days=_whole_days(left, node))
        except OverflowError:
            raise MathError("the date falls outside years 1-9999", column=node.column) from None
        dated = node.left if left_date else node.right
        hint = (
            "date - date gives days, date ± n moves by n days; use "
            f"year({_name_hint(dated)}) to compute with years"
        )
        kinds = f"{'date' if left_date else 'number'} {op} {'date' if right_date else 'number'}"
        raise MathError(f"cannot compute {kinds}; {hint}", column=node.column)


def _whole_days(value: int | float, node: _Binary) -> int:
    if isinstance(value, float) and not value.is_integer():
        raise MathError("a date can only move by a whole number of days", column=node.column)
    if abs(value) > 3_700_000:
        raise MathError("the date falls outside years 1-9999", column=node.column)
    return int(value)


def _too_large() -> str:
    return f"the result would be larger than {MAX_INT_BITS} bits; Math results are bounded"


def _check(value: int | float, column: int) -> int | float:
    if isinstance(value, float) and not math.isfinite(value):
        raise MathError(
            _too_large() if not math.isnan(value) else "the result is not a number", column=column
        )
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise MathError(_too_large(), column=column)
    return value


def _label(node: _Node) -> str:
    if isinstance(node, _Name):
        return f"alias {node.name!r}"
    if isinstance(node, _Str):
        return f"the string {_describe_value(node.value)}"
    if isinstance(node, _Call):
        return f"{node.name}(...)"
    return "the value"


def _name_hint(node: _Node) -> str:
    return node.name if isinstance(node, _Name) else "x"


# --------------------------------------------------------------------------------------------
# functions


@dataclass(frozen=True)
class _Function:
    arity: tuple[int, int | None]
    impl: Callable[[_Evaluator, _Call, list[Any]], Any]


def _numbers(ev: _Evaluator, node: _Call, args: list[Any]) -> list[int | float]:
    out = []
    for item in ev.items(args, node):
        out.append(ev.number(item, _Call(node.name, (), node.column)))
    return out


def _fn_count(ev: _Evaluator, node: _Call, args: list[Any]) -> int:
    return len(ev.items(args, node))


def _fn_sum(ev: _Evaluator, node: _Call, args: list[Any]) -> int | float:
    total: int | float = 0
    for value in _numbers(ev, node, args):
        total = _check(total + value, node.column)
    return total


def _fn_avg(ev: _Evaluator, node: _Call, args: list[Any]) -> int | float:
    values = _numbers(ev, node, args)
    if not values:
        raise MathError(f"{node.name}() of no values", column=node.column)
    total = _fn_sum(ev, node, values)  # type: ignore[arg-type]
    if isinstance(total, int) and total % len(values) == 0:
        return total // len(values)
    return _check(total / len(values), node.column)


def _extreme(pick: Callable[[Iterable[Any]], Any]) -> Callable[[_Evaluator, _Call, list[Any]], Any]:
    def impl(ev: _Evaluator, node: _Call, args: list[Any]) -> Any:
        items = ev.items(args, node)
        if not items:
            raise MathError(f"{node.name}() of no values", column=node.column)
        values = [ev.operand(item, _Call(node.name, (), node.column)) for item in items]
        dates = [isinstance(value, _dt.date) for value in values]
        if any(dates) and not all(dates):
            raise MathError(f"{node.name}() mixes dates and numbers", column=node.column)
        return pick(values)

    return impl


def _fn_abs(ev: _Evaluator, node: _Call, args: list[Any]) -> int | float:
    return abs(ev.number(args[0], node.args[0]))


def _fn_round(ev: _Evaluator, node: _Call, args: list[Any]) -> int | float:
    value = ev.number(args[0], node.args[0])
    digits = 0
    if len(args) == 2:
        raw = ev.number(args[1], node.args[1])
        if not float(raw).is_integer() or not -12 <= raw <= 12:
            raise MathError(
                "round()'s second argument must be a whole number from -12 to 12", column=node.column
            )
        digits = int(raw)
    rounded = Decimal(repr(value) if isinstance(value, float) else value).quantize(
        Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP
    )
    return int(rounded) if digits <= 0 else float(rounded)


def _fn_len(ev: _Evaluator, node: _Call, args: list[Any]) -> int:
    value = args[0]
    if isinstance(value, list | tuple | str):
        return len(value)
    if value is None:
        return 0
    return 1


def _as_partial(ev: _Evaluator, value: Any, node: _Node) -> PartialDate:
    value = ev.scalar(value, node)
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 9999:
        return PartialDate(value)
    parsed = parse_date(value)
    if parsed is None:
        raise MathError(f"{_label(node)} = {_describe_value(value)} is not a date", column=node.column)
    return parsed


def _fn_date(ev: _Evaluator, node: _Call, args: list[Any]) -> _dt.date:
    parsed = _as_partial(ev, args[0], node.args[0])
    return ev._date_from_partial(parsed, node.args[0])


def _fn_year(ev: _Evaluator, node: _Call, args: list[Any]) -> int:
    return _as_partial(ev, args[0], node.args[0]).year


def _fn_month(ev: _Evaluator, node: _Call, args: list[Any]) -> int:
    parsed = _as_partial(ev, args[0], node.args[0])
    if parsed.month is None:
        raise MathError(f"{_label(node.args[0])} = {parsed.isoformat()} has no month", column=node.column)
    return parsed.month


def _fn_day(ev: _Evaluator, node: _Call, args: list[Any]) -> int:
    parsed = _as_partial(ev, args[0], node.args[0])
    if parsed.day is None:
        raise MathError(f"{_label(node.args[0])} = {parsed.isoformat()} has no day", column=node.column)
    return parsed.day


def _fn_days_between(ev: _Evaluator, node: _Call, args: list[Any]) -> int:
    first = ev._date_from_partial(_as_partial(ev, args[0], node.args[0]), node.args[0])
    second = ev._date_from_partial(_as_partial(ev, args[1], node.args[1]), node.args[1])
    return abs((second - first).days)


def _fn_years_between(ev: _Evaluator, node: _Call, args: list[Any]) -> int:
    first = _as_partial(ev, args[0], node.args[0])
    second = _as_partial(ev, args[1], node.args[1])
    if first.sort_key() > second.sort_key():
        first, second = second, first
    years = second.year - first.year
    if first.is_complete and second.is_complete:
        if (second.month, second.day) < (first.month, first.day):
            years -= 1
    elif first.month is not None and second.month is not None and second.month < first.month:
        years -= 1
    return years


FUNCTIONS: dict[str, _Function] = {
    "count": _Function((1, None), _fn_count),
    "sum": _Function((1, None), _fn_sum),
    "min": _Function((1, None), _extreme(min)),
    "max": _Function((1, None), _extreme(max)),
    "avg": _Function((1, None), _fn_avg),
    "mean": _Function((1, None), _fn_avg),
    "abs": _Function((1, 1), _fn_abs),
    "round": _Function((1, 2), _fn_round),
    "len": _Function((1, 1), _fn_len),
    "date": _Function((1, 1), _fn_date),
    "year": _Function((1, 1), _fn_year),
    "month": _Function((1, 1), _fn_month),
    "day": _Function((1, 1), _fn_day),
    "days_between": _Function((2, 2), _fn_days_between),
    "years_between": _Function((2, 2), _fn_years_between),
}

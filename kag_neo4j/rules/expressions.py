"""Rule expressions as Cypher: every constant becomes a ``$parameter``, every name a validated,
backtick-quoted identifier; the rest is fixed keywords and operators.

Functions: ``concat(a, …)``, ``rule_value(cond, then, else)``, ``date_diff(a, b)`` (days from b
to a), ``from_unix_time(seconds, 'yyyyMMdd' | 'yyyy-MM-dd')``, ``now()`` (the "as of" instant
in epoch seconds, ``$now``). ``x like 'a%b_'`` is SQL LIKE (``%`` any run, ``_`` one character).
``x == null`` is ``x IS NULL``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from kag_neo4j.errors import InvalidIdentifierError
from kag_neo4j.rules import ast
from kag_neo4j.rules.errors import RuleCompileError
from kag_neo4j.rules.render import Fragment, ident

FUNCTIONS = ("concat", "rule_value", "date_diff", "from_unix_time", "now")
AGGREGATES = {"count": "count", "sum": "sum", "avg": "avg", "min": "min", "max": "max"}
TIME_FORMATS = ("yyyyMMdd", "yyyy-MM-dd")
_OPS = {"or": "OR", "and": "AND", "==": "=", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">=",
        "in": "IN", "+": "+", "-": "-", "*": "*", "/": "/", "%": "%"}


@dataclass
class Params:
    """The ``$parameters`` of one statement."""

    values: dict[str, object] = field(default_factory=dict)

    def add(self, value: object) -> str:
        name = f"p{len([k for k in self.values if k.startswith('p') and k[1:].isdigit()]) + 1}"
        self.values[name] = value
        return f"${name}"


def checked_ident(name: str, location: ast.Location | None, what: str) -> str:
    try:
        return ident(name, what=what)
    except InvalidIdentifierError as exc:
        raise RuleCompileError(location, f"{exc}; rename it in the rule") from exc


def literal_value(expr: ast.Expr) -> object:
    """The Python value of a constant expression (literals and lists of them), else raise."""
    if isinstance(expr, ast.Literal_):
        return expr.value
    if isinstance(expr, ast.ListExpr):
        return [literal_value(item) for item in expr.items]
    if isinstance(expr, ast.Unary) and expr.op == "-" and isinstance(expr.operand, ast.Literal_) \
            and isinstance(expr.operand.value, (int, float)) and not isinstance(expr.operand.value, bool):
        return -expr.operand.value
    raise ValueError("not a constant")


def like_parts(pattern: str) -> tuple[str, str]:
    """``(operator, operand)`` for SQL LIKE ``pattern``: CONTAINS/STARTS WITH/ENDS WITH/= when
    only leading/trailing ``%`` are used, else ``=~`` with an anchored regular expression."""
    core = pattern.strip("%")
    if "%" not in core and "_" not in core:
        lead, trail = pattern.startswith("%"), pattern.endswith("%") and len(pattern) > 1
        if lead and trail:
            return "CONTAINS", core
        if lead:
            return "ENDS WITH", core
        if trail:
            return "STARTS WITH", core
        return "=", core
    regex = "".join(".*" if c == "%" else "." if c == "_" else c if c.isalnum() else "\\" + c for c in pattern)
    return "=~", "(?s)" + regex


@dataclass
class Scope:
    """What a name means at one point of a rule: a node/edge variable or a computed value."""

    variables: set[str]
    locals: set[str] = field(default_factory=set)
    #: names visible after an aggregation (None: no aggregation yet)
    visible: set[str] | None = None
    uses_now: bool = False


def compile_expr(expr: ast.Expr, scope: Scope, params: Params) -> Fragment:
    return Fragment(_Compiler(scope, params).run(expr))


class _Compiler:
    def __init__(self, scope: Scope, params: Params) -> None:
        self.scope = scope
        self.params = params

    def run(self, expr: ast.Expr) -> str:
        methods: dict[str, Callable[..., str]] = {
            "literal": self._literal, "list": self._list, "name": self._name, "property": self._property,
            "unary": self._unary, "binary": self._binary, "call": self._call, "aggregate": self._aggregate,
        }
        return methods[expr.kind](expr)

    def _name_ref(self, name: str, location: ast.Location) -> str:
        known = self.scope.variables | self.scope.locals
        if name not in known:
            hint = ", ".join(sorted(known)) or "none"
            raise RuleCompileError(location, f"expected a variable of the rule or a value assigned before, found "
                                   f"unknown name '{name}' (known: {hint})")
        if self.scope.visible is not None and name not in self.scope.visible:
            raise RuleCompileError(location, f"'{name}' is not known after the aggregate; only "
                                   f"{', '.join(sorted(self.scope.visible))} are (group by it to keep it)")
        return checked_ident(name, location, "variable")

    def _literal(self, expr: ast.Literal_) -> str:
        return "null" if expr.value is None else self.params.add(expr.value)

    def _list(self, expr: ast.ListExpr) -> str:
        try:
            return self.params.add(literal_value(expr))
        except ValueError:
            return "[" + ", ".join(self.run(item) for item in expr.items) + "]"

    def _name(self, expr: ast.Name) -> str:
        return self._name_ref(expr.name, expr.location)

    def _property(self, expr: ast.Property) -> str:
        if expr.var not in self.scope.variables:
            if expr.var in self.scope.locals:
                raise RuleCompileError(expr.location, f"'{expr.var}' is a value, not a node or edge; "
                                       f"'{expr.var}.{expr.key}' has no meaning")
        base = self._name_ref(expr.var, expr.location)
        return f"{base}.{checked_ident(expr.key, expr.location, 'property key')}"

    def _unary(self, expr: ast.Unary) -> str:
        inner = self.run(expr.operand)
        return f"(NOT {inner})" if expr.op == "not" else f"(-{inner})"

    def _binary(self, expr: ast.Binary) -> str:
        if expr.op in ("==", "!=") and (_is_null(expr.left) or _is_null(expr.right)):
            other = expr.right if _is_null(expr.left) else expr.left
            test = "IS NULL" if expr.op == "==" else "IS NOT NULL"
            return f"({self.run(other)} {test})"
        if expr.op == "like":
            try:
                pattern = literal_value(expr.right)
            except ValueError:
                pattern = None
            if not isinstance(pattern, str):
                raise RuleCompileError(expr.location, "expected a constant text after like (e.g. '%word%'), found an expression")
            operator, operand = like_parts(pattern)
            return f"({self.run(expr.left)} {operator} {self.params.add(operand)})"
        return f"({self.run(expr.left)} {_OPS[expr.op]} {self.run(expr.right)})"

    def _call(self, expr: ast.Call) -> str:
        name = expr.name.casefold()
        args = expr.args

        def arity(count: int) -> None:
            if len(args) != count:
                raise RuleCompileError(expr.location, f"expected {count} argument(s) for {expr.name}, found {len(args)}")

        if name == "now":
            arity(0)
            self.scope.uses_now = True
            return "$now"
        if name == "concat":
            if not args:
                raise RuleCompileError(expr.location, "expected at least one argument for concat, found none")
            return "(" + " + ".join(f"toString({self.run(a)})" for a in args) + ")"
        if name == "rule_value":
            arity(3)
            cond, then, other = (self.run(a) for a in args)
            return f"CASE WHEN {cond} THEN {then} ELSE {other} END"
        if name == "date_diff":
            arity(2)
            later, earlier = (self.run(a) for a in args)
            return f"duration.inDays(date(toString({earlier})), date(toString({later}))).days"
        if name == "from_unix_time":
            arity(2)
            try:
                fmt = literal_value(args[1])
            except ValueError:
                fmt = None
            if fmt not in TIME_FORMATS:
                raise RuleCompileError(args[1].location, f"expected a date format {' or '.join(TIME_FORMATS)}, "
                                       f"found {fmt!r}")
            day = f"date(datetime({{epochSeconds: toInteger({self.run(args[0])})}}))"
            if fmt == "yyyy-MM-dd":
                return f"toString({day})"
            return f"toString({day}.year * 10000 + {day}.month * 100 + {day}.day)"
        raise RuleCompileError(expr.location, f"expected a function ({', '.join(FUNCTIONS)}) or an aggregate "
                               f"group(…).count/sum/avg/min/max(…), found unknown function '{expr.name}'")

    def _aggregate(self, expr: ast.Aggregate) -> str:
        raise RuleCompileError(expr.location, "expected an aggregate only as a whole assignment "
                               "(total = group(s).sum(x)), found one inside an expression")


def compile_aggregate(expr: ast.Aggregate, scope: Scope, params: Params) -> Fragment:
    func = AGGREGATES.get(expr.func.casefold())
    if func is None:
        raise RuleCompileError(expr.location, f"expected an aggregate ({', '.join(AGGREGATES)}), found '{expr.func}'")
    return Fragment(f"{func}({compile_expr(expr.arg, scope, params)})")


def _is_null(expr: ast.Expr) -> bool:
    return isinstance(expr, ast.Literal_) and expr.value is None


def _children(expr: ast.Expr) -> tuple[ast.Expr, ...]:
    if isinstance(expr, ast.Unary):
        return (expr.operand,)
    if isinstance(expr, ast.Binary):
        return (expr.left, expr.right)
    if isinstance(expr, ast.Call):
        return expr.args
    if isinstance(expr, ast.ListExpr):
        return expr.items
    if isinstance(expr, ast.Aggregate):
        return (expr.arg,)
    return ()


def _walk(expr: ast.Expr) -> list[ast.Expr]:
    found = [expr]
    for child in _children(expr):
        found.extend(_walk(child))
    return found


def names_in(expr: ast.Expr) -> set[str]:
    """Every variable or local name an expression refers to (``x`` of ``x.key`` and the keys of
    ``group(…)`` included)."""
    names: set[str] = set()
    for node in _walk(expr):
        if isinstance(node, ast.Name):
            names.add(node.name)
        elif isinstance(node, ast.Property):
            names.add(node.var)
        elif isinstance(node, ast.Aggregate):
            names.update(node.keys)
    return names


def properties_in(expr: ast.Expr) -> set[tuple[str, str]]:
    """``(variable, key)`` of every ``variable.key`` in an expression."""
    return {(node.var, node.key) for node in _walk(expr) if isinstance(node, ast.Property)}


def equalities(expr: ast.Expr) -> dict[tuple[str, str], object]:
    """``var.key == constant`` conjuncts of a condition (for the dependency analysis)."""
    if isinstance(expr, ast.Binary) and expr.op == "and":
        return {**equalities(expr.left), **equalities(expr.right)}
    if isinstance(expr, ast.Binary) and expr.op == "==":
        for side, other in ((expr.left, expr.right), (expr.right, expr.left)):
            if isinstance(side, ast.Property):
                try:
                    return {(side.var, side.key): literal_value(other)}
                except ValueError:
                    return {}
    return {}


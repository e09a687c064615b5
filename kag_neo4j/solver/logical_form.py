"""The logical-form language (KAG 0.8 / KAG-Thinker surface syntax): AST, parser and printer.

A plan is a list of steps. Each step is a sub-question followed by one or more actions::

    Step1: Which club did Cristiano Ronaldo play for in 2011?
    Action1: Retrieval(s=s1:Person[`Cristiano Ronaldo`], p=p1:playsFor, o=o1:SportsTeam, p.year=2011)
    Step2: When was that club founded?
    Action2: Retrieval(s=o1, p=p2:foundedIn, o=o2:Year)      // re-using alias o1 chains the hop
    Action3: Math(content=[`o2`], target=`2011 - o2`)->m1
    Action4: Output(m1)

Aliases are variables. The first mention of an alias *defines* it (a typed or named Retrieval
element, or ``->alias`` after Math/Deduce/Sort); every later mention *reads* it. Reads across
steps give the dependency DAG (:meth:`Plan.dependencies`, :meth:`Plan.layers`). See
``docs/logical-forms.md`` for the full grammar.

:func:`parse_plan` reports every problem as a :class:`~kag_neo4j.errors.LogicalFormError`
carrying the 1-based line and column. Types and predicate names are *not* trusted here: they may
hold any text until :mod:`kag_neo4j.solver.validate` standardises them against the schema.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, cast

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from kag_neo4j.errors import LogicalFormError, MathError
from kag_neo4j.solver.math_eval import FUNCTIONS as MATH_FUNCTIONS
from kag_neo4j.solver.math_eval import parse_expression

__all__ = [
    "ALIAS_PATTERN",
    "DEDUCE_OPS",
    "OPERATORS",
    "Action",
    "AliasRef",
    "AliasSite",
    "CompareOp",
    "Constraint",
    "ContentItem",
    "DeduceKind",
    "DeduceOp",
    "Element",
    "LiteralItem",
    "MathOp",
    "Operator",
    "OutputOp",
    "Plan",
    "PropertyRef",
    "RetrievalOp",
    "SortOp",
    "SourcePos",
    "Step",
    "parse_plan",
]

ALIAS_PATTERN = re.compile(r"[^\W\d]\w{0,63}")
_PROP_PATTERN = re.compile(r"[^\W\d_]\w{0,127}")
_BARE_ID = re.compile(r"[\w.\-]+")
_RESERVED_ALIASES = frozenset({"s", "p", "o", "true", "false"}) | frozenset(MATH_FUNCTIONS)

DeduceKind = Literal[
    "judgement", "entailment", "choice", "multiChoice", "extract", "greater", "less", "equal"
]
DEDUCE_OPS: tuple[str, ...] = (
    "judgement",
    "entailment",
    "choice",
    "multiChoice",
    "extract",
    "greater",
    "less",
    "equal",
)
_DEDUCE_SYNONYMS = {op.lower(): op for op in DEDUCE_OPS} | {
    "judge": "judgement",
    "judgment": "judgement",
    "entail": "entailment",
    "multichoice": "multiChoice",
    "multi_choice": "multiChoice",
    "multiple_choice": "multiChoice",
    "greaterthan": "greater",
    "lessthan": "less",
    "equals": "equal",
}
CompareOp = Literal["=", "!=", "<", "<=", ">", ">="]
_COMPARE_SYNONYMS = {"==": "=", "<>": "!=", "≠": "!=", "≤": "<=", "≥": ">="}
OPERATORS: tuple[str, ...] = ("Retrieval", "Math", "Deduce", "Sort", "Output")
_OPERATOR_SYNONYMS = {name.lower(): name for name in OPERATORS} | {"get_spo": "Retrieval"}
_OLD_KAG_OPERATORS = {
    "get": "name the answer aliases with Output(o1, ...)",
    "search_s": "write a Retrieval(s=..., p=p1, o=o1) with the filters as constraints such as "
    "s.city=`Hangzhou`",
    "verify": "write Deduce(op=judgement, content=[`o1`], target=`<statement>`)->d1",
    "extractor": "write Deduce(op=extract, content=[`o1`], target=`<what to extract>`)->d1",
    "filter": "put the condition into the Retrieval as a constraint such as o.year>2000",
    "count": "write Math(content=[`o1`], target=`count(o1)`)->m1",
    "sum": "write Math(content=[`o1`], target=`sum(o1)`)->m1",
}
_DIRECTIONS = {
    "min": "min",
    "max": "max",
    "asc": "min",
    "ascending": "min",
    "desc": "max",
    "descending": "max",
}


# ============================================================================================
# AST


class SourcePos(BaseModel):
    """A 1-based line and column in the plan text."""

    model_config = ConfigDict(frozen=True)
    line: int
    column: int

    def __str__(self) -> str:
        return f"line {self.line}, column {self.column}"


class _Node(BaseModel):
    """Base of AST nodes. ``pos`` is where the node starts in parsed text; it is not part of
    equality, dumps or :meth:`Plan.to_text`."""

    model_config = ConfigDict(extra="forbid", validate_assignment=False)
    pos: SourcePos | None = Field(default=None, exclude=True, repr=False)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.model_dump() == other.model_dump()  # type: ignore[union-attr]

    __hash__ = None  # type: ignore[assignment]


def _check_alias(value: str) -> str:
    if not isinstance(value, str) or not ALIAS_PATTERN.fullmatch(value):
        raise ValueError(
            f"alias {value!r} is not valid: use a letter followed by letters, digits or '_' "
            "(at most 64 characters), e.g. o1"
        )
    return value


def _check_property(value: str) -> str:
    if not _PROP_PATTERN.fullmatch(value):
        raise ValueError(f"property {value!r} must start with a letter and use letters, digits or '_'")
    return value


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")


def _quote(text: str) -> str:
    """Backticks when they fit (no backtick, no line break), else an escaped double-quoted string."""
    if "`" not in text and "\n" not in text and "\r" not in text:
        return f"`{text}`"
    return f'"{_escape(text)}"'


def _format_value(value: bool | int | float | str) -> str:
    """A constraint or content literal. Text is double-quoted (backticks would read an alias in
    content lists) unless it holds characters that need escaping and backticks avoid that."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if any(ch in value for ch in '"\\\n\r'):
        return _quote(value)
    return f'"{value}"'


class AliasRef(_Node):
    """A read of an alias, e.g. ``o2`` in ``content=[`o2`]`` or ``Output(m1)``."""

    kind: Literal["alias"] = "alias"
    alias: str

    @field_validator("alias")
    @classmethod
    def _valid_alias(cls, value: str) -> str:
        return _check_alias(value)

    def to_text(self) -> str:
        return f"`{self.alias}`"


class LiteralItem(_Node):
    """A constant in a ``content=[...]`` list (a quoted text or a number)."""

    kind: Literal["literal"] = "literal"
    value: bool | int | float | str

    def to_text(self) -> str:
        return _format_value(self.value)


ContentItem = Annotated[Union[AliasRef, LiteralItem], Field(discriminator="kind")]


class Element(_Node):
    """One of ``s=``, ``p=``, ``o=`` in a Retrieval: ``alias[:Type[|Type...]][[name][[id|id...]]]``.

    ``type`` is the entity type (for s/o) or the predicate (for p), as written by the planner;
    ``alt_types`` are further types written after ``|`` (``s1:Actor|Director``); ``name`` is a
    literal entity name; ``ids`` are entity ids written in a second bracket after the name
    (``s1:Film[`Alien`][`12`|`13`]``, KAG's form); ``ref`` binds the element to another alias
    (``s2:SportsTeam[o1]``). An element with neither type, name nor ref is *bare*: it reads the
    alias when another action defines it.
    """

    alias: str
    type: str | None = None
    alt_types: list[str] = Field(default_factory=list)
    name: str | None = None
    ids: list[str] = Field(default_factory=list)
    ref: str | None = None

    @field_validator("alias")
    @classmethod
    def _valid_alias(cls, value: str) -> str:
        return _check_alias(value)

    @field_validator("ref")
    @classmethod
    def _check_ref(cls, value: str | None) -> str | None:
        return None if value is None else _check_alias(value)

    @field_validator("type", "name")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = value.strip()
        if not value:
            raise ValueError("must not be empty")
        return value

    @field_validator("alt_types", "ids")
    @classmethod
    def _no_blank_items(cls, values: list[str]) -> list[str]:
        items = [value.strip() for value in values]
        if any(not item for item in items):
            raise ValueError("must not hold an empty item")
        return items

    @model_validator(mode="after")
    def _name_or_ref(self) -> Element:
        if self.name is not None and self.ref is not None:
            raise ValueError("an element has either a name or a ref, not both")
        if self.alt_types and self.type is None:
            raise ValueError("alt_types need a first type")
        if self.ids and self.name is None:
            raise ValueError("ids need a name: write alias:Type[`name`][`id`]")
        return self

    @property
    def is_bare(self) -> bool:
        return self.type is None and self.name is None and self.ref is None

    @property
    def types(self) -> list[str]:
        """Every type written for the element, the first (``type``) first."""
        return [] if self.type is None else [self.type, *self.alt_types]

    def to_text(self) -> str:
        text = self.alias
        if self.type is not None:
            text += ":" + "|".join(t if _PROP_PATTERN.fullmatch(t) else _quote(t) for t in self.types)
        if self.name is not None:
            text += f"[{_quote(self.name)}]"
            if self.ids:
                text += "[" + "|".join(i if _BARE_ID.fullmatch(i) else _quote(i) for i in self.ids) + "]"
        elif self.ref is not None:
            text += f"[{self.ref}]"
        return text


class PropertyRef(_Node):
    """``alias.prop`` on the right of a constraint (``s.hospital=s1.name``): the value is the
    property ``prop`` of what ``alias`` stands for (``s``, ``p``, ``o`` or any alias)."""

    alias: str
    prop: str

    @field_validator("alias")
    @classmethod
    def _valid_alias(cls, value: str) -> str:
        return value if value in {"s", "p", "o"} else _check_alias(value)

    @field_validator("prop")
    @classmethod
    def _check_prop(cls, value: str) -> str:
        return _check_property(value)

    def to_text(self) -> str:
        return f"{self.alias}.{self.prop}"


class Constraint(_Node):
    """``<target>.<prop> <op> <value>``; ``target`` is ``s``, ``p``, ``o`` or one of the
    Retrieval's own aliases. The right side is either a literal ``value`` or a ``ref`` to a
    property of another alias (``s.hospital=s1.name``) — exactly one of them is set."""

    target: str
    prop: str
    op: CompareOp
    value: bool | int | float | str | None = None
    ref: PropertyRef | None = None

    @field_validator("prop")
    @classmethod
    def _check_prop(cls, value: str) -> str:
        return _check_property(value)

    @field_validator("target")
    @classmethod
    def _check_target(cls, value: str) -> str:
        return value if value in {"s", "p", "o"} else _check_alias(value)

    @model_validator(mode="after")
    def _value_or_ref(self) -> Constraint:
        if (self.value is None) == (self.ref is None):
            raise ValueError("a constraint compares with either a value or a ref (alias.prop), exactly one")
        return self

    def to_text(self) -> str:
        right = self.ref.to_text() if self.ref is not None else _format_value(cast(Any, self.value))
        return f"{self.target}.{self.prop}{self.op}{right}"


class RetrievalOp(_Node):
    """``Retrieval(s=..., p=..., o=..., <constraints>)``: one hop in the graph."""

    kind: Literal["Retrieval"] = "Retrieval"
    s: Element
    p: Element
    o: Element
    constraints: list[Constraint] = Field(default_factory=list)

    def elements(self) -> tuple[tuple[str, Element], ...]:
        return (("s", self.s), ("p", self.p), ("o", self.o))

    def to_text(self) -> str:
        args = [f"s={self.s.to_text()}", f"p={self.p.to_text()}", f"o={self.o.to_text()}"]
        args += [c.to_text() for c in self.constraints]
        return f"Retrieval({', '.join(args)})"


class _Bound(_Node):
    output: str
    output_pos: SourcePos | None = Field(default=None, exclude=True, repr=False)

    @field_validator("output")
    @classmethod
    def _valid_output(cls, value: str) -> str:
        return _check_alias(value)


class MathOp(_Bound):
    """``Math(content=[...], target=`expr`)->alias``; ``target`` is evaluated by
    :mod:`kag_neo4j.solver.math_eval`."""

    kind: Literal["Math"] = "Math"
    content: list[ContentItem] = Field(default_factory=list)
    target: str
    target_pos: SourcePos | None = Field(default=None, exclude=True, repr=False)

    def to_text(self) -> str:
        content = ", ".join(item.to_text() for item in self.content)
        return f"Math(content=[{content}], target={_quote(self.target)})->{self.output}"


class DeduceOp(_Bound):
    """``Deduce(op=..., content=[...], target=...)->alias``."""

    kind: Literal["Deduce"] = "Deduce"
    op: DeduceKind
    content: list[ContentItem] = Field(default_factory=list)
    target: str | None = None

    def to_text(self) -> str:
        content = ", ".join(item.to_text() for item in self.content)
        target = f", target={_quote(self.target)}" if self.target is not None else ""
        return f"Deduce(op={self.op}, content=[{content}]{target})->{self.output}"


class SortOp(_Bound):
    """``Sort(set=alias, orderby=..., direction=min|max, limit=n)->alias``."""

    kind: Literal["Sort"] = "Sort"
    source: AliasRef
    orderby: str | None = None
    direction: Literal["min", "max"]
    limit: int | None = Field(default=None, ge=1)

    def to_text(self) -> str:
        args = [f"set={self.source.alias}"]
        if self.orderby is not None:
            plain = re.fullmatch(r"[^\W\d]\w*(\.[^\W\d]\w*)?", self.orderby)
            args.append(f"orderby={self.orderby if plain else _quote(self.orderby)}")
        args.append(f"direction={self.direction}")
        if self.limit is not None:
            args.append(f"limit={self.limit}")
        return f"Sort({', '.join(args)})->{self.output}"


class OutputOp(_Node):
    """``Output(a, b, ...)``: the aliases that answer the question."""

    kind: Literal["Output"] = "Output"
    aliases: list[AliasRef] = Field(min_length=1)

    @property
    def names(self) -> list[str]:
        return [ref.alias for ref in self.aliases]

    def to_text(self) -> str:
        return f"Output({', '.join(ref.alias for ref in self.aliases)})"


Operator = Annotated[Union[RetrievalOp, MathOp, DeduceOp, SortOp, OutputOp], Field(discriminator="kind")]


class Action(_Node):
    """``Action<number>: <operator>``."""

    number: int = Field(ge=0)
    operator: Operator

    def to_text(self) -> str:
        return f"Action{self.number}: {self.operator.to_text()}"


class Step(_Node):
    """``Step<number>: <sub-question>`` with its actions, run in order."""

    number: int = Field(ge=0)
    question: str
    actions: list[Action] = Field(min_length=1)

    @field_validator("question")
    @classmethod
    def _one_line(cls, value: str) -> str:
        value = " ".join(value.split())
        if not value:
            raise ValueError("a step needs a sub-question")
        return value

    def to_text(self) -> str:
        return "\n".join([f"Step{self.number}: {self.question}"] + [a.to_text() for a in self.actions])


@dataclass(frozen=True)
class AliasSite:
    """Where an alias is defined: step and action numbers, and the role that defines it
    (``s``/``p``/``o`` for Retrieval elements, else the operator name)."""

    alias: str
    step: int
    action: int
    role: str
    type: str | None
    pos: SourcePos | None


@dataclass(frozen=True)
class _Use:
    alias: str
    pos: SourcePos | None
    what: str


@dataclass
class _Analysis:
    definitions: dict[str, AliasSite]
    uses: dict[int, tuple[str, ...]]  # action number -> aliases it reads
    step_deps: dict[int, frozenset[int]]
    layers: list[list[int]]


class Plan(_Node):
    """A parsed, consistency-checked logical-form plan.

    Construction (parsing or ``Plan(steps=...)``) checks numbering, alias definitions and reads,
    cycles and the single ``Output``; any problem raises :class:`LogicalFormError`.
    """

    steps: list[Step] = Field(min_length=1)
    _analysis: _Analysis | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _check(self) -> Plan:
        self._analysis = _analyse(self)
        return self

    # ---- navigation -----------------------------------------------------------------------

    @property
    def analysis(self) -> _Analysis:
        if self._analysis is None:  # e.g. after model_construct()
            self._analysis = _analyse(self)
        return self._analysis

    def actions(self) -> Iterator[tuple[Step, Action]]:
        for step in self.steps:
            for action in step.actions:
                yield step, action

    def step(self, number: int) -> Step:
        for step in self.steps:
            if step.number == number:
                return step
        raise KeyError(f"the plan has no Step{number}")

    @property
    def output(self) -> OutputOp:
        for _, action in self.actions():
            if isinstance(action.operator, OutputOp):
                return action.operator
        raise AssertionError("a checked plan always has an Output")  # pragma: no cover

    def definitions(self) -> dict[str, AliasSite]:
        """Every alias and where it is defined."""
        return dict(self.analysis.definitions)

    def uses(self, action_number: int) -> tuple[str, ...]:
        """The aliases action ``action_number`` reads (defined by other actions), in order."""
        return self.analysis.uses[action_number]

    def dependencies(self) -> dict[int, frozenset[int]]:
        """Step number -> the step numbers whose aliases it reads."""
        return dict(self.analysis.step_deps)

    def layers(self) -> list[list[Step]]:
        """Steps in topological layers: every step depends only on steps of earlier layers,
        so the steps of one layer can run concurrently. Layers are ordered by step number."""
        by_number = {step.number: step for step in self.steps}
        return [[by_number[n] for n in layer] for layer in self.analysis.layers]

    # ---- text -----------------------------------------------------------------------------

    def to_text(self) -> str:
        """The plan in the surface syntax; ``parse_plan(plan.to_text()) == plan``."""
        return "\n".join(step.to_text() for step in self.steps)

    @classmethod
    def parse(cls, text: str) -> Plan:
        return parse_plan(text)


# ============================================================================================
# semantic checks


def _fail(message: str, pos: SourcePos | None) -> LogicalFormError:
    if pos is None:
        return LogicalFormError(message)
    return LogicalFormError(message, line=pos.line, column=pos.column)


def _where(step: Step, action: Action) -> str:
    return f"Action{action.number} of Step{step.number}"


def _suggest(name: str, options: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, list(options), n=1, cutoff=0.5)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _norm(value: str | None) -> str | None:
    return None if value is None else re.sub(r"[\s_\-]+", "", value).casefold()


def _analyse(plan: Plan) -> _Analysis:
    steps = plan.steps
    # ---- numbering --------------------------------------------------------------------------
    seen_steps: dict[int, Step] = {}
    seen_actions: dict[int, Action] = {}
    for step in steps:
        if step.number in seen_steps:
            first = seen_steps[step.number]
            raise _fail(
                f"Step{step.number} appears twice (first at {first.pos or 'an earlier step'}); "
                "number the steps 1, 2, 3, ...",
                step.pos,
            )
        seen_steps[step.number] = step
        for action in step.actions:
            if action.number in seen_actions:
                first_action = seen_actions[action.number]
                raise _fail(
                    f"Action{action.number} appears twice (first at "
                    f"{first_action.pos or 'an earlier action'}); number the actions 1, 2, 3, ...",
                    action.pos,
                )
            seen_actions[action.number] = action

    order: list[tuple[Step, Action]] = [(s, a) for s in steps for a in s.actions]
    # ---- definitions ------------------------------------------------------------------------
    definitions: dict[str, AliasSite] = {}
    element_defs: dict[str, Element] = {}

    def reserve_check(alias: str, pos: SourcePos | None, where: str) -> None:
        if alias in _RESERVED_ALIASES:
            raise _fail(
                f"alias {alias!r} in {where} is a reserved word (s, p, o, true, false and the Math "
                "functions); choose another name such as o1 or m1",
                pos,
            )

    def define(site: AliasSite, where: str) -> None:
        reserve_check(site.alias, site.pos, where)
        first = definitions.get(site.alias)
        if first is not None:
            raise _fail(
                f"alias {site.alias!r} in {where} is already defined at "
                f"{first.pos or f'Action{first.action}'} (Action{first.action} of Step{first.step}); "
                "give this result a new alias",
                site.pos,
            )
        definitions[site.alias] = site

    for step, action in order:
        op = action.operator
        where = _where(step, action)
        if isinstance(op, RetrievalOp):
            seen_here: dict[str, Element] = {}
            for role, element in op.elements():
                if element.alias in seen_here:
                    raise _fail(
                        f"alias {element.alias!r} is used twice in the same Retrieval ({where}); "
                        "s, p and o need distinct aliases",
                        element.pos,
                    )
                seen_here[element.alias] = element
                if element.is_bare:
                    continue
                if element.alias in definitions:
                    first_site = definitions[element.alias]
                    first_el = element_defs.get(element.alias)
                    if first_el is None:  # defined by ->alias of an operator: always a duplicate
                        define(
                            AliasSite(
                                element.alias, step.number, action.number, role, element.type, element.pos
                            ),
                            where,
                        )
                        raise AssertionError("define() raises for a duplicate")  # pragma: no cover
                    conflicts = [
                        what
                        for what, a, b in (
                            ("type", _norm(first_el.type), _norm(element.type)),
                            ("name", first_el.name, element.name),
                            ("binding", first_el.ref, element.ref),
                        )
                        if a is not None and b is not None and a != b
                    ]
                    if (
                        first_el.name is not None
                        and element.ref is not None
                        or (first_el.ref is not None and element.name is not None)
                    ):
                        conflicts.append("name")
                    if conflicts:
                        raise _fail(
                            f"alias {element.alias!r} in {where} is already defined at "
                            f"{first_site.pos or f'Action{first_site.action}'} with a different "
                            f"{conflicts[0]} ({element.to_text()} vs {first_el.to_text()}); "
                            "use a new alias for a different thing, or repeat it bare to reuse it",
                            element.pos,
                        )
                    continue
                define(
                    AliasSite(element.alias, step.number, action.number, role, element.type, element.pos),
                    where,
                )
                element_defs[element.alias] = element
        elif isinstance(op, MathOp | DeduceOp | SortOp):
            define(
                AliasSite(op.output, step.number, action.number, op.kind, None, op.output_pos or op.pos),
                where,
            )
    # bare elements that nothing else defines are untyped definitions
    for step, action in order:
        op = action.operator
        if isinstance(op, RetrievalOp):
            for role, element in op.elements():
                if element.is_bare and element.alias not in definitions:
                    where = _where(step, action)
                    reserve_check(element.alias, element.pos, where)
                    definitions[element.alias] = AliasSite(
                        element.alias, step.number, action.number, role, None, element.pos
                    )
                    element_defs[element.alias] = element

    # ---- reads ------------------------------------------------------------------------------
    uses: dict[int, list[_Use]] = {}
    for step, action in order:
        op = action.operator
        where = _where(step, action)
        found: list[_Use] = []
        if isinstance(op, RetrievalOp):
            own = {element.alias for _, element in op.elements()}
            for _, element in op.elements():
                site = definitions[element.alias]
                if (site.step, site.action) != (step.number, action.number):
                    found.append(_Use(element.alias, element.pos, "element"))
                if element.ref is not None:
                    found.append(_Use(element.ref, element.pos, "binding"))
            for constraint in op.constraints:
                if constraint.target not in {"s", "p", "o"} and constraint.target not in own:
                    raise _fail(
                        f"constraint {constraint.to_text()} in {where} refers to {constraint.target!r}, "
                        f"which is not s, p, o or one of this Retrieval's aliases ({', '.join(sorted(own))})",
                        constraint.pos,
                    )
                ref = constraint.ref
                if ref is not None and ref.alias not in {"s", "p", "o"} and ref.alias not in own:
                    found.append(_Use(ref.alias, constraint.pos, "constraint"))
        elif isinstance(op, MathOp):
            found += [
                _Use(item.alias, item.pos, "content") for item in op.content if isinstance(item, AliasRef)
            ]
            try:
                names = parse_expression(op.target).names
            except MathError as exc:
                pos = _shift(op.target_pos, exc.column)
                raise _fail(
                    f"the Math target `{op.target}` in {where} is not a valid expression: {exc.reason}", pos
                ) from None
            found += [_Use(use.name, _shift(op.target_pos, use.column), "target") for use in names]
        elif isinstance(op, DeduceOp):
            found += [
                _Use(item.alias, item.pos, "content") for item in op.content if isinstance(item, AliasRef)
            ]
        elif isinstance(op, SortOp):
            found.append(_Use(op.source.alias, op.source.pos, "set"))
            if op.orderby is not None:
                head = op.orderby.split(".", 1)[0].strip()
                if head in definitions:
                    found.append(_Use(head, op.pos, "orderby"))
        elif isinstance(op, OutputOp):
            found += [_Use(ref.alias, ref.pos, "Output") for ref in op.aliases]
        for use in found:
            if use.alias not in definitions:
                raise _fail(
                    f"alias {use.alias!r} (read by {where}) is not defined by any action"
                    f"{_suggest(use.alias, list(definitions))}; define it first, e.g. o=o9:Type in a "
                    "Retrieval or ->name after Math/Deduce/Sort",
                    use.pos,
                )
            site = definitions[use.alias]
            if (site.step, site.action) == (step.number, action.number):
                raise _fail(
                    f"alias {use.alias!r} is read by the action that defines it ({where}); an action "
                    "cannot use its own result",
                    use.pos,
                )
        uses[action.number] = found

    # ---- step dependencies --------------------------------------------------------------------
    position = {action.number: index for index, (_, action) in enumerate(order)}
    deps: dict[int, set[int]] = {step.number: set() for step in steps}
    witness: dict[tuple[int, int], _Use] = {}
    for step, action in order:
        for use in uses[action.number]:
            site = definitions[use.alias]
            if site.step == step.number:
                if position[site.action] > position[action.number]:
                    raise _fail(
                        f"alias {use.alias!r} is read by Action{action.number} before Action{site.action} "
                        f"defines it in the same Step{step.number}; move Action{site.action} above "
                        f"Action{action.number}",
                        use.pos,
                    )
                continue
            deps[step.number].add(site.step)
            witness.setdefault((step.number, site.step), use)
    layers = _layers(deps, witness)

    # ---- Output -------------------------------------------------------------------------------
    outputs = [(s, a) for s, a in order if isinstance(a.operator, OutputOp)]
    if not outputs:
        raise _fail(
            "the plan has no Output action; end it with a line such as 'Action"
            f"{max(position) + 1}: Output(<alias>)' naming the answer alias",
            plan.pos,
        )
    if len(outputs) > 1:
        first_output = outputs[0][1]
        raise _fail(
            f"the plan has more than one Output (Action{first_output.number} and "
            f"Action{outputs[1][1].number}); "
            "put every answer alias into a single Output(a, b)",
            outputs[1][1].pos,
        )
    return _Analysis(
        definitions=definitions,
        uses={number: tuple(dict.fromkeys(use.alias for use in found)) for number, found in uses.items()},
        step_deps={number: frozenset(d) for number, d in deps.items()},
        layers=layers,
    )


def _shift(pos: SourcePos | None, column: int | None) -> SourcePos | None:
    if pos is None or column is None:
        return pos
    return SourcePos(line=pos.line, column=pos.column + column - 1)


def _layers(deps: dict[int, set[int]], witness: dict[tuple[int, int], _Use]) -> list[list[int]]:
    remaining = {number: set(d) for number, d in deps.items()}
    layers: list[list[int]] = []
    while remaining:
        ready = sorted(number for number, d in remaining.items() if not d)
        if not ready:
            cycle = _find_cycle(remaining)
            hops = []
            for a, b in zip(cycle, cycle[1:], strict=False):
                use = witness[(a, b)]
                hops.append(f"Step{a} reads {use.alias!r} from Step{b}")
            first_use = witness[(cycle[0], cycle[1])]
            chain = " -> ".join(f"Step{n}" for n in cycle)
            raise _fail(f"cyclic dependency {chain}: {'; '.join(hops)}; break the cycle", first_use.pos)
        layers.append(ready)
        for number in ready:
            del remaining[number]
        for d in remaining.values():
            d.difference_update(ready)
    return layers


def _find_cycle(graph: dict[int, set[int]]) -> list[int]:
    start = min(graph)
    path: list[int] = []
    seen: dict[int, int] = {}
    node = start
    while node not in seen:
        seen[node] = len(path)
        path.append(node)
        node = min(graph[node])
    return path[seen[node] :] + [node]


# ============================================================================================
# parser

_HEADER = re.compile(r"[ \t]*(?P<kw>step|action)[ \t]*(?P<num>\d+)[ \t]*[:：][ \t]*", re.IGNORECASE)
_SYMBOLS = {"（": "(", "）": ")", "，": ",", "：": ":", "＝": "=", "【": "[", "】": "]", "［": "[", "］": "]"}
_QUOTES = {"`": "`", '"': '"', "'": "'", "“": "”", "‘": "’", "「": "」"}
# a full-width '，' inside an unquoted type ends it only when the next argument follows
# (``key=`` or a constraint ``x.prop``); a full-width '）' only when nothing but spaces, comments
# or an arrow follows (the end of the action). Otherwise both are part of the type.
_NEXT_ARGUMENT = re.compile(r"\s*[^\W\d]\w*\s*(?:[=＝](?!=)|\.\s*[^\W\d_]\w*\s*[=!<>≠≤≥])")
_ACTION_END = re.compile(r"(?:\s|//[^\n]*)*(?:\Z|->|→|=>)")
_NAME_CLOSE = frozenset("]】］")
_COMPARISON = re.compile(r"==|!=|<>|<=|>=|=|<|>|≠|≤|≥")
_PROPERTY_REF = re.compile(r"(?P<alias>[^\W\d]\w{0,63})\.(?P<prop>[^\W\d_]\w{0,127})")


def _sym(ch: str) -> str:
    return _SYMBOLS.get(ch, ch)


class _Region:
    """The text of one action (possibly several lines) and the map back to plan positions."""

    def __init__(self, text: str, line: int, column: int) -> None:
        self.text = text
        self.line = line  # 1-based line of text[0]
        self.column = column  # 1-based column of text[0]
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def pos(self, offset: int) -> SourcePos:
        index = 0
        for i, start in enumerate(self.starts):
            if start <= offset:
                index = i
        col = offset - self.starts[index] + 1
        return SourcePos(line=self.line + index, column=col + (self.column - 1 if index == 0 else 0))


@dataclass
class _Pending:
    """A bare ``[...]`` name that may turn out to bind an alias, or a bare ``x.prop`` constraint
    value that may turn out to read a property of alias ``x``: decided once every definition
    of the plan is known."""

    node: Element | Constraint


class _Scanner:
    def __init__(self, region: _Region) -> None:
        self.region = region
        self.text = region.text
        self.i = 0
        self.open = False  # inside the operator's (...)
        self.ran_out = False  # an error was raised because the text ended inside (...) or a string
        self.open_quote: str | None = None

    # ---- basics -----------------------------------------------------------------------------

    def pos(self, offset: int | None = None) -> SourcePos:
        return self.region.pos(self.i if offset is None else offset)

    def error(self, message: str, offset: int | None = None) -> LogicalFormError:
        return _fail(message, self.pos(offset))

    def skip(self) -> None:
        while self.i < len(self.text):
            ch = self.text[self.i]
            if ch.isspace():
                self.i += 1
            elif self.text.startswith("//", self.i):
                nl = self.text.find("\n", self.i)
                self.i = len(self.text) if nl < 0 else nl
            else:
                break

    def peek(self) -> str:
        self.skip()
        return _sym(self.text[self.i]) if self.i < len(self.text) else ""

    def found(self) -> str:
        self.skip()
        if self.i >= len(self.text):
            self.ran_out = self.ran_out or self.open
            return "the end of the action"
        return repr(self.text[self.i : self.i + 12].split("\n")[0])

    def expect(self, symbol: str, what: str) -> None:
        if self.peek() != symbol:
            raise self.error(f"expected {symbol!r} {what} but found {self.found()}")
        self.i += 1

    def accept(self, symbol: str) -> bool:
        if self.peek() == symbol:
            self.i += 1
            return True
        return False

    def ident(self, what: str) -> tuple[str, SourcePos]:
        self.skip()
        match = re.compile(r"[^\W\d]\w*").match(self.text, self.i)
        if not match:
            raise self.error(f"expected {what} but found {self.found()}")
        self.i = match.end()
        return match.group(), self.pos(match.start())

    def at_quote(self) -> bool:
        self.skip()
        return self.i < len(self.text) and self.text[self.i] in _QUOTES

    def string(self) -> tuple[str, str, SourcePos]:
        """A quoted string: (text, opening quote, position of its first character)."""
        self.skip()
        start = self.i
        opening = self.text[self.i]
        closing = _QUOTES[opening]
        self.i += 1
        chars: list[str] = []
        while self.i < len(self.text):
            ch = self.text[self.i]
            if ch == "\\" and opening != "`" and self.i + 1 < len(self.text):
                nxt = self.text[self.i + 1]
                chars.append({"n": "\n", "t": "\t", "r": "\r"}.get(nxt, nxt))
                self.i += 2
                continue
            if ch == closing:
                self.i += 1
                return "".join(chars), opening, self.pos(start + 1)
            chars.append(ch)
            self.i += 1
        self.ran_out, self.open_quote = True, opening
        raise self.error(f"the string opened with {opening} is never closed", start)

    def raw(self, stops: str, what: str) -> tuple[str, SourcePos]:
        """Unquoted text up to a stop symbol at bracket depth 0 (quotes inside are kept).

        In an argument value (stops ``,)``) a full-width '，' is text unless the next argument
        follows it (``s.city=杭州市，西湖区`` keeps the comma); in lists it always separates."""
        self.skip()
        start = self.i
        depth = 0
        argument = stops == ",)"
        while self.i < len(self.text):
            ch = _sym(self.text[self.i])
            if self.text.startswith("//", self.i) or ch == "\n":
                break
            if depth == 0 and ch in stops:
                if not (argument and self.text[self.i] == "，" and not _NEXT_ARGUMENT.match(self.text, self.i + 1)):
                    break
            if ch in "([":
                depth += 1
            elif ch in ")]":
                if depth == 0:
                    break
                depth -= 1
            self.i += 1
        value = self.text[start : self.i].strip()
        if not value:
            raise self.error(f"expected {what} but found {self.found()}", start)
        return value, self.pos(start)

    def value(self, what: str) -> tuple[str, SourcePos]:
        if self.at_quote():
            text, _, pos = self.string()
            return text, pos
        return self.raw(",)", what)

    # ---- operators ----------------------------------------------------------------------------

    def operator(self) -> tuple[_Node, list[_Pending]]:
        name, pos = self.ident("an operator name such as Retrieval, Math, Deduce, Sort or Output")
        canonical = _OPERATOR_SYNONYMS.get(name.lower())
        if canonical is None and name.lower() in _OLD_KAG_OPERATORS:
            raise _fail(
                f"{name!r} is an older KAG operator that kag-neo4j does not accept; "
                f"{_OLD_KAG_OPERATORS[name.lower()]}",
                pos,
            )
        if canonical is None:
            raise _fail(
                f"unknown operator {name!r}{_suggest(name, OPERATORS)}; expected one of "
                f"{', '.join(OPERATORS)}",
                pos,
            )
        self.expect("(", f"after {canonical}")
        self.open = True
        pending: list[_Pending] = []
        if canonical == "Retrieval":
            node: _Node = self.retrieval(pos, pending)
        elif canonical == "Math":
            node = self.math(pos)
        elif canonical == "Deduce":
            node = self.deduce(pos)
        elif canonical == "Sort":
            node = self.sort(pos)
        else:
            node = self.output(pos)
        self.open = False
        self.skip()
        arrow = re.compile(r"->|→|=>").match(self.text, self.i)
        if arrow:
            self.i = arrow.end()
            alias, alias_pos = self.ident("an alias after '->'")
            if not isinstance(node, MathOp | DeduceOp | SortOp):
                raise _fail(
                    f"{canonical} does not bind a result with '->{alias}'; Retrieval binds its "
                    "aliases inside s=, p=, o= and Output binds nothing",
                    alias_pos,
                )
            node = node.model_copy(
                update={"output": _alias_or_fail(alias, alias_pos), "output_pos": alias_pos}
            )
        elif isinstance(node, MathOp | DeduceOp | SortOp):
            raise self.error(f"{canonical}(...) must bind its result to an alias: add '->x1' after ')'")
        self.skip()
        if self.i < len(self.text):
            raise self.error(f"unexpected text {self.found()} after the {canonical} operator")
        return node, pending

    def keyword_args(self, operator: str, allowed: Sequence[str]) -> Iterator[tuple[str, SourcePos]]:
        """Yield each ``key`` of ``key=value`` arguments; the caller reads the value."""
        seen: set[str] = set()
        if self.accept(")"):
            return
        while True:
            key, pos = self.ident(f"an argument name of {operator} ({', '.join(allowed)})")
            if key not in allowed:
                lowered = {a.lower(): a for a in allowed}
                if key.lower() in lowered:
                    key = lowered[key.lower()]
                else:
                    raise _fail(
                        f"unknown argument {key!r} for {operator}{_suggest(key, allowed)}; "
                        f"expected {', '.join(allowed)}",
                        pos,
                    )
            if key in seen:
                raise _fail(f"argument {key!r} is given twice in {operator}", pos)
            seen.add(key)
            self.expect("=", f"after {key}")
            yield key, pos
            if self.accept(","):
                continue
            self.expect(")", f"or ',' after the {key}= argument of {operator}")
            return

    def retrieval(self, pos: SourcePos, pending: list[_Pending]) -> RetrievalOp:
        elements: dict[str, Element] = {}
        constraints: list[Constraint] = []
        seen: set[str] = set()
        if not self.accept(")"):
            while True:
                key, key_pos = self.ident("s=, p=, o= or a constraint such as p.year=2011")
                if self.peek() == ".":
                    self.i += 1
                    constraint, maybe_ref = self.constraint(key, key_pos)
                    constraints.append(constraint)
                    if maybe_ref:
                        pending.append(_Pending(constraint))
                elif self.peek() == "=" and not self.text.startswith("==", self.i):
                    role = key.lower()
                    if role not in {"s", "p", "o"}:
                        raise _fail(
                            f"unknown argument {key!r} for Retrieval; expected s=, p=, o= or a "
                            "constraint such as p.year=2011",
                            key_pos,
                        )
                    if role in seen:
                        raise _fail(f"argument {role!r} is given twice in Retrieval", key_pos)
                    seen.add(role)
                    self.i += 1
                    element, bare_bracket = self.element(role)
                    elements[role] = element
                    if bare_bracket:
                        pending.append(_Pending(element))
                else:
                    raise self.error(
                        f"expected '=' or '.' after {key!r} in Retrieval but found {self.found()}"
                    )
                if self.accept(","):
                    continue
                self.peek()
                close_at = self.i
                self.expect(")", "or ',' in Retrieval")
                break
        else:
            close_at = self.i - 1
        missing = [role for role in ("s", "p", "o") if role not in elements]
        if missing:
            raise self.error(
                f"Retrieval needs s=, p= and o=; missing {', '.join(m + '=' for m in missing)} "
                "(write o=o1 for an unknown object)",
                close_at,
            )
        return RetrievalOp(
            s=elements["s"], p=elements["p"], o=elements["o"], constraints=constraints, pos=pos
        )

    def element(self, role: str) -> tuple[Element, bool]:
        """``alias[:Type[|Type...]][[name][[id|id...]]]``; True when the name was a bare word
        (it may turn out to bind an alias)."""
        alias, pos = self.ident(f"an alias for {role}= (e.g. {role}1)")
        alias = _alias_or_fail(alias, pos)
        types: list[str] = []
        name: str | None = None
        ids: list[str] = []
        bare_bracket = False
        if self.peek() == ":":
            self.i += 1
            types.append(self.type_name(role))
            while self.peek() == "|":
                self.i += 1
                types.append(self.type_name(role))
        if self.peek() == "[":
            open_at = self.i
            self.i += 1
            name, bare_bracket = self.bracket_text("the name", open_at)
            if not name.strip():
                raise self.error(
                    "the name in [...] is empty; write the entity name in backticks, e.g. [`Ada Lovelace`]",
                    open_at,
                )
            if self.peek() == "[":
                ids = self.id_list()
                bare_bracket = False  # [name][id] always names an entity
        element = Element(
            alias=alias, type=types[0] if types else None, alt_types=types[1:], name=name, ids=ids, pos=pos
        )
        return element, bare_bracket

    def type_name(self, role: str) -> str:
        """One type (or predicate) after ':' or '|': quoted, or bare up to ',' ')' '[' '|'.

        In a bare type, full-width brackets and commas are text, except a '，' followed by the
        next argument and a '）' that ends the action (see ``_NEXT_ARGUMENT``/``_ACTION_END``).
        ASCII parentheses must balance (``Type(x)``)."""
        what = "a predicate" if role == "p" else "a type"
        if self.at_quote():
            text, _, text_pos = self.string()
        else:
            self.skip()
            start = self.i
            depth = 0
            while self.i < len(self.text):
                ch = self.text[self.i]
                if ch == "\n" or self.text.startswith("//", self.i):
                    break
                if ch == "(":
                    depth += 1
                elif ch == ")":
                    if depth == 0:
                        break
                    depth -= 1
                elif depth == 0 and (
                    ch in ",[|【［"
                    or (ch == "，" and _NEXT_ARGUMENT.match(self.text, self.i + 1))
                    or (ch == "）" and _ACTION_END.match(self.text, self.i + 1))
                ):
                    break
                self.i += 1
            text, text_pos = self.text[start : self.i].strip(), self.pos(start)
        if not text.strip():
            raise _fail(f"{what} after ':' or '|' is empty; write one, e.g. :Person", text_pos)
        return text

    def bracket_text(self, what: str, open_at: int) -> tuple[str, bool]:
        """The rest of a ``[...]`` item after '[': quoted, or bare up to ']' (or '】', '］') on the
        same line — everything else, brackets and commas included, is text. True when bare."""
        if self.at_quote():
            text, _, _ = self.string()
            self.expect("]", f"after {what}")
            return text, False
        self.skip()
        start = self.i
        while self.i < len(self.text) and self.text[self.i] not in _NAME_CLOSE and self.text[self.i] != "\n":
            self.i += 1
        if self.i >= len(self.text) or self.text[self.i] == "\n":
            self.ran_out = self.ran_out or self.i >= len(self.text)
            raise self.error("the '[' is never closed; names go in [`...`]", open_at)
        text = self.text[start : self.i].strip()
        self.i += 1
        return text, True

    def id_list(self) -> list[str]:
        """``[id|id...]`` after a name: each id quoted, or bare up to '|' or ']'."""
        open_at = self.i
        self.i += 1
        ids: list[str] = []
        while True:
            self.skip()
            item_at = self.i
            if self.at_quote():
                text, _, _ = self.string()
            else:
                while self.i < len(self.text) and self.text[self.i] not in _NAME_CLOSE | {"|", "\n"}:
                    self.i += 1
                if self.i >= len(self.text) or self.text[self.i] == "\n":
                    self.ran_out = self.ran_out or self.i >= len(self.text)
                    raise self.error("the '[' of the ids is never closed; write [`id1`|`id2`]", open_at)
                text = self.text[item_at : self.i]
            if not text.strip():
                raise self.error("an id in [...] is empty; write the ids as [`id1`|`id2`]", item_at)
            ids.append(text.strip())
            if self.accept("|"):
                continue
            self.expect("]", "or '|' in the ids")
            return ids

    def constraint(self, target: str, pos: SourcePos) -> tuple[Constraint, bool]:
        """``target.prop op value``; True when the value is a bare ``x.prop`` that may read a
        property of alias ``x``."""
        prop, prop_pos = self.ident("a property name after '.'")
        if not _PROP_PATTERN.fullmatch(prop):
            raise _fail(f"property {prop!r} must start with a letter (at most 128 characters)", prop_pos)
        self.skip()
        match = _COMPARISON.match(self.text, self.i)
        if not match:
            raise self.error(
                f"expected a comparison (= != < <= > >=) after {target}.{prop} but found {self.found()}"
            )
        op = cast(CompareOp, _COMPARE_SYNONYMS.get(match.group(), match.group()))
        self.i = match.end()
        if op == "=":  # KAG writes s.value=>160 for "greater than 160": the value's comparison wins
            inner = _COMPARISON.match(self.text, self.i)
            if inner and not inner.group().startswith("="):
                op = cast(CompareOp, _COMPARE_SYNONYMS.get(inner.group(), inner.group()))
                self.i = inner.end()
        maybe_ref = False
        if self.at_quote():
            text, _, _ = self.string()
            value: bool | int | float | str = text
        else:
            raw, _ = self.raw(",)", f"a value after {target}.{prop}{op}")
            value = _literal(raw)
            maybe_ref = isinstance(value, str) and _PROPERTY_REF.fullmatch(value) is not None
        if target.lower() in {"s", "p", "o"}:
            target = target.lower()
        else:
            target = _alias_or_fail(target, pos)
        return Constraint(target=target, prop=prop, op=op, value=value, pos=pos), maybe_ref

    def content(self) -> list[AliasRef | LiteralItem]:
        self.expect("[", "to open the content list")
        items: list[AliasRef | LiteralItem] = []
        if self.accept("]"):
            return items
        while True:
            self.skip()
            start = self.i
            if self.at_quote():
                text, quote, pos = self.string()
                if quote == "`" and ALIAS_PATTERN.fullmatch(text.strip()):
                    items.append(AliasRef(alias=text.strip(), pos=pos))
                else:
                    items.append(LiteralItem(value=text, pos=pos))
            else:
                raw, pos = self.raw(",]", "an alias or a quoted text")
                value = _literal(raw)
                if isinstance(value, str):
                    if not ALIAS_PATTERN.fullmatch(value):
                        raise _fail(
                            f"content item {raw!r} is neither an alias nor quoted text; put text "
                            'in quotes ("...") and aliases in backticks',
                            self.pos(start),
                        )
                    items.append(AliasRef(alias=value, pos=pos))
                else:
                    items.append(LiteralItem(value=value, pos=pos))
            if self.accept(","):
                continue
            self.expect("]", "or ',' in the content list")
            return items

    def math(self, pos: SourcePos) -> MathOp:
        fields: dict[str, Any] = {"pos": pos, "output": "_"}
        for key, _ in self.keyword_args("Math", ("content", "target")):
            if key == "content":
                fields["content"] = self.content()
            else:
                fields["target"], fields["target_pos"] = self.value("an expression such as `2011 - o2`")
        if "target" not in fields:
            raise self.error(
                "Math needs target=`<expression>`, e.g. Math(content=[`o2`], target=`2011 - o2`)->m1"
            )
        return MathOp.model_construct(**{"content": [], **fields})

    def deduce(self, pos: SourcePos) -> DeduceOp:
        fields: dict[str, Any] = {"pos": pos, "output": "_"}
        for key, _ in self.keyword_args("Deduce", ("op", "content", "target")):
            if key == "op":
                raw, op_pos = self.raw(",)", "a Deduce op")
                op = _DEDUCE_SYNONYMS.get(raw.strip().lower())
                if op is None:
                    raise _fail(
                        f"unknown Deduce op {raw!r}{_suggest(raw, DEDUCE_OPS)}; expected one of "
                        f"{', '.join(DEDUCE_OPS)}",
                        op_pos,
                    )
                fields["op"] = op
            elif key == "content":
                fields["content"] = self.content()
            else:
                fields["target"], _ = self.value("a question or statement")
        if "op" not in fields:
            raise self.error(f"Deduce needs op=<{'|'.join(DEDUCE_OPS)}>")
        return DeduceOp.model_construct(**{"content": [], "target": None, **fields})

    def sort(self, pos: SourcePos) -> SortOp:
        fields: dict[str, Any] = {"pos": pos, "output": "_"}
        for key, _ in self.keyword_args("Sort", ("set", "orderby", "direction", "limit")):
            if key == "set":
                if self.at_quote():
                    alias, _, alias_pos = self.string()
                else:
                    alias, alias_pos = self.ident("the alias of the set to sort")
                fields["source"] = AliasRef(alias=_alias_or_fail(alias.strip(), alias_pos), pos=alias_pos)
            elif key == "orderby":
                fields["orderby"], _ = self.value("what to order by")
            elif key == "direction":
                raw, raw_pos = self.raw(",)", "min or max")
                direction = _DIRECTIONS.get(raw.strip().lower())
                if direction is None:
                    raise _fail(f"Sort direction {raw!r} is not min or max", raw_pos)
                fields["direction"] = direction
            else:
                raw, raw_pos = self.raw(",)", "a limit")
                if raw.lower() in {"all", "none"}:
                    fields["limit"] = None
                elif raw.isdigit() and int(raw) >= 1:
                    fields["limit"] = int(raw)
                else:
                    raise _fail(f"Sort limit {raw!r} must be a whole number of at least 1 (or all)", raw_pos)
        if "source" not in fields:
            raise self.error("Sort needs set=<alias> naming the set to sort")
        if "direction" not in fields:
            raise self.error("Sort needs direction=min or direction=max")
        return SortOp.model_construct(**{"orderby": None, "limit": None, **fields})

    def output(self, pos: SourcePos) -> OutputOp:
        refs: list[AliasRef] = []
        if self.accept(")"):
            raise _fail("Output() names no alias; write Output(<alias>, ...)", pos)
        while True:
            if self.at_quote():
                alias, _, alias_pos = self.string()
                alias = alias.strip()
            else:
                alias, alias_pos = self.ident("an alias to output")
            refs.append(AliasRef(alias=_alias_or_fail(alias, alias_pos), pos=alias_pos))
            if self.accept(","):
                continue
            self.expect(")", "or ',' in Output")
            return OutputOp(aliases=refs, pos=pos)


def _alias_or_fail(alias: str, pos: SourcePos) -> str:
    if not ALIAS_PATTERN.fullmatch(alias):
        raise _fail(
            f"alias {alias[:70]!r} is not valid: use a letter followed by letters, digits or '_' "
            "(at most 64 characters)",
            pos,
        )
    return alias


def _literal(raw: str) -> bool | int | float | str:
    text = raw.strip()
    if text.lower() in {"true", "false"}:
        return text.lower() == "true"
    if re.fullmatch(r"[-+]?\d+", text):
        return int(text)
    if re.fullmatch(r"[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?", text):
        return float(text)
    return text


def _revalidate(node: _Node) -> _Node:
    """Run pydantic validation on a node built with ``model_construct`` (keeps positions)."""
    data = {name: getattr(node, name) for name in type(node).model_fields}
    return type(node).model_validate(data)


def parse_plan(text: str) -> Plan:
    """Parse logical-form text into a checked :class:`Plan`.

    Raises :class:`LogicalFormError` naming the line and column of the first problem.
    """
    if not isinstance(text, str):
        raise LogicalFormError(f"a plan must be text, got {type(text).__name__}")
    lines = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff").split("\n")
    steps: list[dict[str, Any]] = []
    pending: list[_Pending] = []
    last = SourcePos(line=1, column=1)
    index = 0
    while index < len(lines):
        line = lines[index]
        line_no = index + 1
        stripped = line.strip()
        index += 1
        if not stripped or stripped.startswith("//"):
            continue
        header = _HEADER.match(line)
        if not header:
            column = len(line) - len(line.lstrip()) + 1
            raise LogicalFormError(
                f"expected 'Step<n>: <sub-question>' or 'Action<n>: <operator>(...)' but found "
                f"{stripped[:40]!r}",
                line=line_no,
                column=column,
            )
        number = int(header["num"])
        rest_col = header.end() + 1
        head_pos = SourcePos(line=line_no, column=header.start("kw") + 1)
        if header["kw"].lower() == "step":
            question = line[header.end() :].strip()
            if not question:
                raise LogicalFormError(
                    f"Step{number} has no sub-question; write 'Step{number}: <sub-question>'",
                    line=line_no,
                    column=rest_col,
                )
            steps.append({"number": number, "question": question, "actions": [], "pos": head_pos})
            last = SourcePos(line=line_no, column=len(line) + 1)
            continue
        if not steps:
            raise LogicalFormError(
                f"Action{number} comes before any Step; put 'Step1: <sub-question>' above it",
                line=line_no,
                column=head_pos.column,
            )
        body = line[header.end() :]
        start_line = line_no
        if not body.strip():
            raise LogicalFormError(
                f"Action{number} has no operator; write e.g. 'Action{number}: Retrieval(s=..., p=..., o=...)'",
                line=line_no,
                column=rest_col,
            )
        operator, found, index = _parse_action(number, body, lines, index, start_line, rest_col)
        pending.extend(found)
        steps[-1]["actions"].append({"number": number, "operator": operator, "pos": head_pos})
        end_line = index
        last = SourcePos(line=end_line, column=len(lines[end_line - 1]) + 1)
    if not steps:
        raise LogicalFormError(
            "the plan is empty; write 'Step1: <sub-question>' then 'Action1: <operator>(...)'",
            line=1,
            column=1,
        )
    for step in steps:
        if not step["actions"]:
            pos = step["pos"]
            raise LogicalFormError(
                f"Step{step['number']} has no Action line; add 'Action<n>: <operator>(...)' below it",
                line=pos.line,
                column=pos.column,
            )
    return _build(steps, pending, last)


def _parse_action(
    number: int, body: str, lines: list[str], index: int, line: int, column: int
) -> tuple[_Node, list[_Pending], int]:
    """Scan one action starting with ``body`` (the text after ``Action<n>:``). While the text
    ends inside the operator's parentheses or a string, the next line is appended and the
    action scanned again (a bracket does not continue over a ``Step``/``Action`` line; a string
    does). Returns the operator, its pending names and the index of the next unread line."""
    while True:
        scanner = _Scanner(_Region(body, line, column))
        try:
            operator, found = scanner.operator()
            return operator, found, index
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = ".".join(str(part) for part in problem["loc"]) or "operator"
            raise LogicalFormError(f"Action{number}: {where}: {problem['msg']}", line=line, column=column) from None
        except LogicalFormError:
            if not scanner.ran_out:
                raise
            quote = scanner.open_quote
            if index < len(lines) and (quote is not None or not _HEADER.match(lines[index])):
                body += "\n" + lines[index]
                index += 1
                continue
            if quote is not None:
                message = f"Action{number} has a string opened with {quote} that is never closed"
            else:
                message = f"Action{number} has an unclosed '(' or '['; close it before the next step"
            raise LogicalFormError(message, line=line, column=column) from None


def _build(steps: list[dict[str, Any]], pending: list[_Pending], end: SourcePos) -> Plan:
    # aliases defined anywhere decide whether a bare [x] reads alias x or names an entity "x"
    defined: set[str] = set()
    for step in steps:
        for action in step["actions"]:
            op = action["operator"]
            if isinstance(op, RetrievalOp):
                defined.update(element.alias for _, element in op.elements())
            elif isinstance(op, MathOp | DeduceOp | SortOp):
                defined.add(op.output)
    pending_ids = {id(p.node) for p in pending}
    built_steps = []
    for step in steps:
        actions = []
        for action in step["actions"]:
            op = action["operator"]
            if isinstance(op, RetrievalOp) and pending_ids:
                op = _settle_pending(op, pending_ids, defined)
            if isinstance(op, MathOp | DeduceOp | SortOp):
                op = _revalidated_with_positions(op)
            actions.append(Action(number=action["number"], operator=op, pos=action["pos"]))
        built_steps.append(
            Step(number=step["number"], question=step["question"], actions=actions, pos=step["pos"])
        )
    return Plan(steps=built_steps, pos=end)


def _settle_pending(op: RetrievalOp, pending_ids: set[int], defined: set[str]) -> RetrievalOp:
    """A bare ``[x]`` naming a defined alias binds it; a bare ``x.prop`` constraint value whose
    ``x`` is s, p, o or a defined alias reads that property. Anything else stays text."""
    updates: dict[str, Any] = {}
    for role, element in op.elements():
        if id(element) in pending_ids and element.name in defined and element.name != element.alias:
            updates[role] = element.model_copy(update={"name": None, "ref": element.name})
    constraints = []
    for constraint in op.constraints:
        match = _PROPERTY_REF.fullmatch(str(constraint.value)) if id(constraint) in pending_ids else None
        if match and (match["alias"] in {"s", "p", "o"} or match["alias"] in defined):
            ref = PropertyRef(alias=match["alias"], prop=match["prop"])
            constraint = constraint.model_copy(update={"value": None, "ref": ref})
        constraints.append(constraint)
    if constraints != op.constraints:
        updates["constraints"] = constraints
    return op.model_copy(update=updates) if updates else op


def _revalidated_with_positions(op: _Node) -> _Node:
    # model_construct skipped validation; validate the public fields, then restore positions
    checked = _revalidate(op)
    extras = {name: getattr(op, name) for name in ("pos", "output_pos", "target_pos") if hasattr(op, name)}
    return checked.model_copy(update=extras)

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
    "RetrievalOp",
    "SortOp",
    "SourcePos",
    "Step",
    "parse_plan",
]

ALIAS_PATTERN = re.compile(r"[^\W\d]\w{0,63}")
_PROP_PATTERN = re.compile(r"[^\W\d_]\w{0,127}")
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
    """One of ``s=``, ``p=``, ``o=`` in a Retrieval: ``alias[:Type][[`name`]]``.

    ``type`` is the entity type (for s/o) or the predicate (for p), as written by the planner;
    ``name`` is a literal entity name; ``ref`` binds the element to another alias
    (``s2:SportsTeam[o1]``). An element with neither type, name nor ref is *bare*: it reads the
    alias when another action defines it.
    """

    alias: str
    type: str | None = None
    name: str | None = None
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

    @model_validator(mode="after")
    def _name_or_ref(self) -> Element:
        if self.name is not None and self.ref is not None:
            raise ValueError("an element has either a name or a ref, not both")
        return self

    @property
    def is_bare(self) -> bool:
        return self.type is None and self.name is None and self.ref is None

    def to_text(self) -> str:
        text = self.alias
        if self.type is not None:
            text += ":" + (self.type if _PROP_PATTERN.fullmatch(self.type) else _quote(self.type))
        if self.name is not None:
            text += f"[{_quote(self.name)}]"
        elif self.ref is not None:
            text += f"[{self.ref}]"
        return text


class Constraint(_Node):
    """``<target>.<prop> <op> <value>``; ``target`` is ``s``, ``p``, ``o`` or one of the
    Retrieval's own aliases."""

    target: str
    prop: str
    op: CompareOp
    value: bool | int | float | str

    @field_validator("prop")
    @classmethod
    def _check_prop(cls, value: str) -> str:
        if not _PROP_PATTERN.fullmatch(value):
            raise ValueError(f"property {value!r} must start with a letter and use letters, digits or '_'")
        return value

    @field_validator("target")
    @classmethod
    def _check_target(cls, value: str) -> str:
        return value if value in {"s", "p", "o"} else _check_alias(value)

    def to_text(self) -> str:
        return f"{self.target}.{self.prop}{self.op}{_format_value(self.value)}"


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
_VALUE_START = set("=[(,:")


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


def _balance(text: str) -> tuple[int, str | None]:
    """Bracket depth and open quote at the end of ``text`` (same quoting rules as the scanner)."""
    depth = 0
    quote: str | None = None
    prev = ""
    i = 0
    while i < len(text):
        ch = text[i]
        if quote is not None:
            if ch == "\\" and quote != "`":
                i += 2
                continue
            if ch == quote:
                quote = None
                prev = "x"
            i += 1
            continue
        if ch == "/" and text.startswith("//", i):
            nl = text.find("\n", i)
            if nl < 0:
                break
            i = nl
            continue
        if ch in _QUOTES and (ch == "`" or _sym(prev) in _VALUE_START):
            quote = _QUOTES[ch]
        elif _sym(ch) in "([":
            depth += 1
        elif _sym(ch) in ")]":
            depth -= 1
        if not ch.isspace():
            prev = ch
        i += 1
    return depth, quote


@dataclass
class _Pending:
    """A Retrieval element whose bare ``[...]`` may turn out to read an alias."""

    element: Element
    bare_bracket: bool


class _Scanner:
    def __init__(self, region: _Region) -> None:
        self.region = region
        self.text = region.text
        self.i = 0

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
        raise self.error(f"the string opened with {opening} is never closed", start)

    def raw(self, stops: str, what: str) -> tuple[str, SourcePos]:
        """Unquoted text up to a stop symbol at bracket depth 0 (quotes inside are kept)."""
        self.skip()
        start = self.i
        depth = 0
        while self.i < len(self.text):
            ch = _sym(self.text[self.i])
            if self.text.startswith("//", self.i) or ch == "\n":
                break
            if depth == 0 and ch in stops:
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
        if canonical is None:
            raise _fail(
                f"unknown operator {name!r}{_suggest(name, OPERATORS)}; expected one of "
                f"{', '.join(OPERATORS)}",
                pos,
            )
        self.expect("(", f"after {canonical}")
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
                    constraints.append(self.constraint(key, key_pos))
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
                        pending.append(_Pending(element, True))
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
        alias, pos = self.ident(f"an alias for {role}= (e.g. {role}1)")
        alias = _alias_or_fail(alias, pos)
        type_: str | None = None
        name: str | None = None
        bare_bracket = False
        if self.peek() == ":":
            self.i += 1
            if self.at_quote():
                type_, _, type_pos = self.string()
            else:
                type_, type_pos = self.raw(
                    ",)[", "a type after ':'" if role != "p" else "a predicate after ':'"
                )
            if not type_.strip():
                raise _fail(f"the {'predicate' if role == 'p' else 'type'} after ':' is empty", type_pos)
        if self.peek() == "[":
            open_at = self.i
            self.i += 1
            if self.at_quote():
                name, _, _ = self.string()
                self.expect("]", "after the name")
            else:
                self.skip()
                start = self.i
                while (
                    self.i < len(self.text) and _sym(self.text[self.i]) != "]" and self.text[self.i] != "\n"
                ):
                    self.i += 1
                if self.i >= len(self.text) or self.text[self.i] == "\n":
                    raise self.error("the '[' is never closed; names go in [`...`]", open_at)
                name = self.text[start : self.i].strip()
                self.i += 1
                bare_bracket = True
            if not name.strip():
                raise self.error(
                    "the name in [...] is empty; write the entity name in backticks, e.g. [`Ada Lovelace`]",
                    open_at,
                )
        return Element(alias=alias, type=type_, name=name, pos=pos), bare_bracket

    def constraint(self, target: str, pos: SourcePos) -> Constraint:
        prop, prop_pos = self.ident("a property name after '.'")
        if not _PROP_PATTERN.fullmatch(prop):
            raise _fail(f"property {prop!r} must start with a letter (at most 128 characters)", prop_pos)
        self.skip()
        match = re.compile(r"==|!=|<>|<=|>=|=|<|>|≠|≤|≥").match(self.text, self.i)
        if not match:
            raise self.error(
                f"expected a comparison (= != < <= > >=) after {target}.{prop} but found {self.found()}"
            )
        op = cast(CompareOp, _COMPARE_SYNONYMS.get(match.group(), match.group()))
        self.i = match.end()
        if self.at_quote():
            text, _, _ = self.string()
            value: bool | int | float | str = text
        else:
            raw, _ = self.raw(",)", f"a value after {target}.{prop}{op}")
            value = _literal(raw)
        if target.lower() in {"s", "p", "o"}:
            target = target.lower()
        else:
            target = _alias_or_fail(target, pos)
        return Constraint(target=target, prop=prop, op=op, value=value, pos=pos)

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
        depth, quote = _balance(body)
        start_line = line_no
        while (depth > 0 or quote is not None) and index < len(lines):
            body += "\n" + lines[index]
            index += 1
            depth, quote = _balance(body)
        region = _Region(body, start_line, rest_col)
        if quote is not None:
            raise LogicalFormError(
                f"Action{number} has a string opened with {quote} that is never closed",
                line=start_line,
                column=rest_col,
            )
        if depth > 0:
            raise LogicalFormError(
                f"Action{number} has an unclosed '(' or '['; close it before the next step",
                line=start_line,
                column=rest_col,
            )
        if not body.strip():
            raise LogicalFormError(
                f"Action{number} has no operator; write e.g. 'Action{number}: Retrieval(s=..., p=..., o=...)'",
                line=line_no,
                column=rest_col,
            )
        scanner = _Scanner(region)
        try:
            operator, found = scanner.operator()
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = ".".join(str(part) for part in problem["loc"]) or "operator"
            raise LogicalFormError(
                f"Action{number}: {where}: {problem['msg']}", line=start_line, column=rest_col
            ) from None
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
    bare_ids = {id(p.element) for p in pending}
    built_steps = []
    for step in steps:
        actions = []
        for action in step["actions"]:
            op = action["operator"]
            if isinstance(op, RetrievalOp) and bare_ids:
                updates = {}
                for role, element in op.elements():
                    if id(element) in bare_ids and element.name in defined and element.name != element.alias:
                        updates[role] = element.model_copy(update={"name": None, "ref": element.name})
                if updates:
                    op = op.model_copy(update=updates)
            if isinstance(op, MathOp | DeduceOp | SortOp):
                op = _revalidated_with_positions(op)
            actions.append(Action(number=action["number"], operator=op, pos=action["pos"]))
        built_steps.append(
            Step(number=step["number"], question=step["question"], actions=actions, pos=step["pos"])
        )
    return Plan(steps=built_steps, pos=end)


def _revalidated_with_positions(op: _Node) -> _Node:
    # model_construct skipped validation; validate the public fields, then restore positions
    checked = _revalidate(op)
    extras = {name: getattr(op, name) for name in ("pos", "output_pos", "target_pos") if hasattr(op, name)}
    return checked.model_copy(update=extras)

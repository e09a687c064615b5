"""The logical-form language (KAG 0.8 / KAG-Thinker surface syntax): the AST and its printer.

A plan is a list of steps. Each step is a sub-question followed by one or more actions::

    Step1: Which club did Cristiano Ronaldo play for in 2011?
    Action1: Retrieval(s=s1:Person[`Cristiano Ronaldo`], p=p1:playsFor, o=o1:SportsTeam, p.year=2011)
    Step2: When was that club founded?
    Action2: Retrieval(s=o1, p=p2:foundedIn, o=o2:Year)      // re-using alias o1 chains the hop
    Action3: Math(content=[`o2`], target=`2011 - o2`)->m1
    Action4: Output(m1)

Aliases are variables. The first mention of an alias *defines* it (a typed or named Retrieval
element, or ``->alias`` after Math/Deduce/Sort); every later mention *reads* it. Every operator
node says which aliases it defines (:meth:`OperatorNode.defines`) and reads
(:meth:`OperatorNode.reads`); :mod:`kag_neo4j.solver.lf.analysis` checks a plan from those
alone, and gives the dependency DAG (:meth:`Plan.dependencies`, :meth:`Plan.layers`).

Text becomes a plan in :mod:`kag_neo4j.solver.lf.parse`; operators are declared in
:mod:`kag_neo4j.solver.lf.registry`. Types and predicate names are *not* trusted here: they may
hold any text until :mod:`kag_neo4j.solver.validate` standardises them against the schema. See
``docs/logical-forms.md`` for the full grammar.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, Union, cast

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializeAsAny,
    field_validator,
    model_validator,
)

from kag_neo4j.errors import LogicalFormError, MathError
from kag_neo4j.solver.lf.expression import parse_expression

if TYPE_CHECKING:
    from kag_neo4j.solver.lf.analysis import AliasSite, Analysis

__all__ = [
    "ALIAS_PATTERN",
    "DEDUCE_OPS",
    "Action",
    "AliasRef",
    "AliasUse",
    "BoundOp",
    "CompareOp",
    "Constraint",
    "ContentItem",
    "DeduceKind",
    "DeduceOp",
    "Definition",
    "Element",
    "LiteralItem",
    "MathOp",
    "OperatorNode",
    "OutputOp",
    "Plan",
    "PropertyRef",
    "RetrievalOp",
    "SortOp",
    "SourcePos",
    "Step",
    "content_reads",
    "fail",
    "quote",
    "shift",
    "suggest",
]

ALIAS_PATTERN = re.compile(r"[^\W\d]\w{0,63}")
_PROP_PATTERN = re.compile(r"[^\W\d_]\w{0,127}")
_BARE_ID = re.compile(r"[\w.\-]+")

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
CompareOp = Literal["=", "!=", "<", "<=", ">", ">="]


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


def fail(message: str, pos: SourcePos | None) -> LogicalFormError:
    """A :class:`LogicalFormError` at ``pos`` (when known)."""
    if pos is None:
        return LogicalFormError(message)
    return LogicalFormError(message, line=pos.line, column=pos.column)


def suggest(name: str, options: Sequence[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``options``, else nothing."""
    close = difflib.get_close_matches(name, list(options), n=1, cutoff=0.5)
    return f" (did you mean {close[0]!r}?)" if close else ""


def shift(pos: SourcePos | None, column: int | None) -> SourcePos | None:
    """``pos`` moved ``column - 1`` characters to the right (a position inside a string)."""
    if pos is None or column is None:
        return pos
    return SourcePos(line=pos.line, column=pos.column + column - 1)


@dataclass(frozen=True)
class AliasUse:
    """A read of an alias by an action: where, and what part of the operator reads it.

    ``own`` marks a mention that is no read when the same action defines the alias (a
    Retrieval element naming its own alias)."""

    alias: str
    pos: SourcePos | None
    what: str
    own: bool = False


@dataclass(frozen=True)
class Definition:
    """An alias an action defines: its role (``s``/``p``/``o`` or the operator name) and type.

    ``element`` is set for a Retrieval element, which may repeat an earlier definition of the
    same thing (bare, or with the same type and name); ``bare`` elements define their alias only
    when no other action does."""

    alias: str
    role: str
    type: str | None
    pos: SourcePos | None
    element: Element | None = None
    bare: bool = False


class OperatorNode(_Node):
    """Base of operator nodes (``Retrieval(...)``, ``Math(...)->m1``, ...).

    A subclass declares ``kind: Literal["Name"] = "Name"`` and implements :meth:`to_text`,
    :meth:`reads` and (when it defines aliases) :meth:`defines`; that is all the analysis needs.
    Subclasses register their ``kind`` so that :class:`Action` can rebuild them from dumps.
    """

    kinds: ClassVar[dict[str, type[OperatorNode]]] = {}
    #: True when the operator binds its result with ``->alias`` (see :class:`BoundOp`)
    binds: ClassVar[bool] = False
    kind: str

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        field = cls.model_fields.get("kind")
        if field is not None and isinstance(field.default, str):
            OperatorNode.kinds[field.default] = cls

    def to_text(self) -> str:
        raise NotImplementedError

    def defines(self) -> list[Definition]:
        """The aliases this operator defines, in order."""
        return []

    def reads(self, defined: Collection[str], where: str) -> list[AliasUse]:
        """The aliases this operator reads, in order. ``defined`` holds every alias the plan
        defines; ``where`` names the action for error messages. Raises
        :class:`LogicalFormError` for a problem inside the operator."""
        return []

    @property
    def bound_alias(self) -> str | None:
        """The alias of ``->alias`` (``None`` for operators that bind nothing that way)."""
        return None


def content_reads(content: Sequence[AliasRef | LiteralItem]) -> list[AliasUse]:
    """The aliases a ``content=[...]`` list reads."""
    return [AliasUse(item.alias, item.pos, "content") for item in content if isinstance(item, AliasRef)]


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


def quote(text: str) -> str:
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
        return quote(value)
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
            text += ":" + "|".join(t if _PROP_PATTERN.fullmatch(t) else quote(t) for t in self.types)
        if self.name is not None:
            text += f"[{quote(self.name)}]"
            if self.ids:
                text += "[" + "|".join(i if _BARE_ID.fullmatch(i) else quote(i) for i in self.ids) + "]"
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


class RetrievalOp(OperatorNode):
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

    def defines(self) -> list[Definition]:
        return [
            Definition(element.alias, role, element.type, element.pos, element=element, bare=element.is_bare)
            for role, element in self.elements()
        ]

    def reads(self, defined: Collection[str], where: str) -> list[AliasUse]:
        own = {element.alias for _, element in self.elements()}
        found: list[AliasUse] = []
        for _, element in self.elements():
            found.append(AliasUse(element.alias, element.pos, "element", own=True))
            if element.ref is not None:
                found.append(AliasUse(element.ref, element.pos, "binding"))
        for constraint in self.constraints:
            if constraint.target not in {"s", "p", "o"} and constraint.target not in own:
                raise fail(
                    f"constraint {constraint.to_text()} in {where} refers to {constraint.target!r}, "
                    f"which is not s, p, o or one of this Retrieval's aliases ({', '.join(sorted(own))})",
                    constraint.pos,
                )
            ref = constraint.ref
            if ref is not None and ref.alias not in {"s", "p", "o"} and ref.alias not in own:
                found.append(AliasUse(ref.alias, constraint.pos, "constraint"))
        return found


class BoundOp(OperatorNode):
    """An operator that binds its result to one alias with ``->alias``."""

    binds: ClassVar[bool] = True
    output: str
    output_pos: SourcePos | None = Field(default=None, exclude=True, repr=False)

    @field_validator("output")
    @classmethod
    def _valid_output(cls, value: str) -> str:
        return _check_alias(value)

    @property
    def bound_alias(self) -> str | None:
        return self.output

    def defines(self) -> list[Definition]:
        return [Definition(self.output, self.kind, None, self.output_pos or self.pos)]


class MathOp(BoundOp):
    """``Math(content=[...], target=`expr`)->alias``; ``target`` is evaluated by
    :mod:`kag_neo4j.solver.lf.expression`."""

    kind: Literal["Math"] = "Math"
    content: list[ContentItem] = Field(default_factory=list)
    target: str
    target_pos: SourcePos | None = Field(default=None, exclude=True, repr=False)

    def to_text(self) -> str:
        content = ", ".join(item.to_text() for item in self.content)
        return f"Math(content=[{content}], target={quote(self.target)})->{self.output}"

    def reads(self, defined: Collection[str], where: str) -> list[AliasUse]:
        found = content_reads(self.content)
        try:
            names = parse_expression(self.target).names
        except MathError as exc:
            raise fail(
                f"the Math target `{self.target}` in {where} is not a valid expression: {exc.reason}",
                shift(self.target_pos, exc.column),
            ) from None
        return found + [AliasUse(use.name, shift(self.target_pos, use.column), "target") for use in names]


class DeduceOp(BoundOp):
    """``Deduce(op=..., content=[...], target=...)->alias``."""

    kind: Literal["Deduce"] = "Deduce"
    op: DeduceKind
    content: list[ContentItem] = Field(default_factory=list)
    target: str | None = None

    def to_text(self) -> str:
        content = ", ".join(item.to_text() for item in self.content)
        target = f", target={quote(self.target)}" if self.target is not None else ""
        return f"Deduce(op={self.op}, content=[{content}]{target})->{self.output}"

    def reads(self, defined: Collection[str], where: str) -> list[AliasUse]:
        return content_reads(self.content)


class SortOp(BoundOp):
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
            args.append(f"orderby={self.orderby if plain else quote(self.orderby)}")
        args.append(f"direction={self.direction}")
        if self.limit is not None:
            args.append(f"limit={self.limit}")
        return f"Sort({', '.join(args)})->{self.output}"

    def reads(self, defined: Collection[str], where: str) -> list[AliasUse]:
        found = [AliasUse(self.source.alias, self.source.pos, "set")]
        if self.orderby is not None:
            head = self.orderby.split(".", 1)[0].strip()
            if head in defined:
                found.append(AliasUse(head, self.pos, "orderby"))
        return found


class OutputOp(OperatorNode):
    """``Output(a, b, ...)``: the aliases that answer the question."""

    kind: Literal["Output"] = "Output"
    aliases: list[AliasRef] = Field(min_length=1)

    @property
    def names(self) -> list[str]:
        return [ref.alias for ref in self.aliases]

    def to_text(self) -> str:
        return f"Output({', '.join(ref.alias for ref in self.aliases)})"

    def reads(self, defined: Collection[str], where: str) -> list[AliasUse]:
        return [AliasUse(ref.alias, ref.pos, "Output") for ref in self.aliases]


class Action(_Node):
    """``Action<number>: <operator>``."""

    number: int = Field(ge=0)
    operator: SerializeAsAny[OperatorNode]

    @field_validator("operator", mode="before")
    @classmethod
    def _operator_from_dump(cls, value: Any) -> Any:
        """A dumped operator (a mapping with its ``kind``) becomes its node class again."""
        if isinstance(value, dict) and isinstance(value.get("kind"), str):
            node = OperatorNode.kinds.get(value["kind"])
            if node is None:
                raise ValueError(f"unknown operator kind {value['kind']!r}")
            return node.model_validate(value)
        return value

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


class Plan(_Node):
    """A parsed, consistency-checked logical-form plan.

    Construction (parsing or ``Plan(steps=...)``) checks numbering, alias definitions and reads,
    cycles and the single ``Output``; any problem raises :class:`LogicalFormError`.
    """

    steps: list[Step] = Field(min_length=1)
    _analysis: Analysis | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _check(self) -> Plan:
        from kag_neo4j.solver.lf.analysis import analyse  # analysis reads these nodes

        self._analysis = analyse(self)
        return self

    # ---- navigation -----------------------------------------------------------------------

    @property
    def analysis(self) -> Analysis:
        if self._analysis is None:  # e.g. after model_construct()
            from kag_neo4j.solver.lf.analysis import analyse

            self._analysis = analyse(self)
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
            if action.operator.kind == "Output":
                return cast(OutputOp, action.operator)
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
        from kag_neo4j.solver.lf.parse import parse_plan  # the parser builds these nodes

        return parse_plan(text)


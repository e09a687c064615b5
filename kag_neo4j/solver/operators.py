"""Deterministic Sort and Deduce operators, and the boundary to the LLM-backed Deduce ops.

* :func:`sort_items` orders retrieved items by a key read as a number, a date or text.
* ``Deduce(op=greater|less|equal)`` is decided here by :func:`deduce_compare`.
* ``Deduce(op=judgement|entailment|choice|multiChoice|extract)`` needs a model:
  :func:`deduce` returns a :class:`DeduceRequest`, which the LLM executor fulfils with a
  :class:`~kag_neo4j.prompts.deduce.DeduceResponse` and checks with
  :meth:`DeduceRequest.resolve`.

Values are read with :mod:`kag_neo4j.solver.values`, the same readers Math uses.
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypeVar, cast

from pydantic import BaseModel, Field

from kag_neo4j.errors import OperatorError
from kag_neo4j.prompts.deduce import (
    ENTAILMENT_LABELS,
    JUDGEMENT_VERDICTS,
    DeduceResponse,
)
from kag_neo4j.solver.logical_form import AliasRef, DeduceOp
from kag_neo4j.solver.math_eval import format_value
from kag_neo4j.solver.values import (
    PartialDate,
    normalise_text,
    parse_date,
    parse_number,
)

__all__ = [
    "COMPARE_OPS",
    "LLM_DEDUCE_OPS",
    "DeduceEvidence",
    "DeduceOutcome",
    "DeduceRequest",
    "Direction",
    "compare_values",
    "deduce",
    "deduce_compare",
    "render_value",
    "run_deduce",
    "sort_items",
]

T = TypeVar("T")
Direction = Literal["min", "max"]
CompareKind = Literal["greater", "less", "equal"]
LlmDeduceKind = Literal["judgement", "entailment", "choice", "multiChoice", "extract"]
COMPARE_OPS: tuple[str, ...] = ("greater", "less", "equal")
LLM_DEDUCE_OPS: tuple[str, ...] = ("judgement", "entailment", "choice", "multiChoice", "extract")

_MISSING = object()


# --------------------------------------------------------------------------------------------
# value reading


def _unwrap(value: Any, what: str) -> Any:
    while isinstance(value, list | tuple):
        if len(value) == 1:
            value = value[0]
        elif not value:
            return None
        else:
            raise OperatorError(
                f"{what} holds {len(value)} values where one was expected: {render_value(value)}"
            )
    return value


def _as_number(value: Any) -> int | float | None:
    if isinstance(value, bool):
        return None
    return parse_number(value)


def _as_date(value: Any) -> PartialDate | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and 1 <= value <= 9999:
        return PartialDate(value)
    return parse_date(value)


def _kind(values: Sequence[Any]) -> Literal["number", "date", "text"]:
    """The one reading all values share: numbers, else dates, else text."""
    if all(_as_number(v) is not None for v in values):
        return "number"
    if all(_as_date(v) is not None for v in values):
        return "date"
    return "text"


def _date_key(value: PartialDate, precision: int) -> tuple[int, ...]:
    return value.sort_key()[:precision]


def _precision(dates: Sequence[PartialDate]) -> int:
    return min(1 if d.month is None else 2 if d.day is None else 3 for d in dates)


def render_value(value: Any) -> str:
    """Readable text of a bound value (for evidence, explanations and error messages)."""
    if value is None:
        return "(none)"
    if isinstance(value, PartialDate):
        return value.isoformat()
    if isinstance(value, bool | int | float | _dt.date):
        return format_value(value)
    if isinstance(value, Mapping):
        return "; ".join(f"{k}: {render_value(v)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return ", ".join(render_value(v) for v in value)
    return str(value)


# --------------------------------------------------------------------------------------------
# Sort


def _read_key(item: Any, key: str | Callable[[Any], Any] | None) -> Any:
    if key is None:
        return item
    if callable(key):
        return key(item)
    current = item
    for part in key.split("."):
        if isinstance(current, Mapping):
            current = current.get(part, _MISSING)
        elif isinstance(current, BaseModel) and part in type(current).model_fields:
            current = getattr(current, part)
        else:
            return _MISSING
        if current is _MISSING:
            return _MISSING
    return current


def sort_items(
    items: Sequence[T],
    key: str | Callable[[T], Any] | None = None,
    direction: Direction = "min",
    limit: int | None = 1,
) -> list[T]:
    """Order ``items`` by ``key`` and keep the first ``limit`` (``None`` keeps all).

    ``key`` is ``None`` (the item itself), a callable, or a property name / dotted path read
    from mappings or pydantic models. Values are compared as numbers when every present value
    is a number (``"1,234"`` counts), else as dates when every one is a date (``"1902"``,
    ``"6 March 1902"``), else as normalised text. ``direction="min"`` puts the smallest first,
    ``"max"`` the largest. Items without a value go last; ties keep their input order, so the
    result is deterministic.
    """
    if direction not in ("min", "max"):
        raise OperatorError(f"Sort direction {direction!r} must be 'min' or 'max'")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise OperatorError(f"Sort limit {limit!r} must be a whole number of at least 1, or None for all")
    present: list[tuple[int, Any]] = []
    missing: list[int] = []
    for index, item in enumerate(items):
        value = _read_key(item, key)
        value = _unwrap(value, f"the sort key of item {index + 1}") if value is not _MISSING else None
        if value is None or (isinstance(value, str) and not value.strip()):
            missing.append(index)
        else:
            present.append((index, value))
    kind = _kind([value for _, value in present])
    keyed: list[tuple[int, Any]]
    if kind == "number":
        keyed = [(index, _as_number(value)) for index, value in present]
    elif kind == "date":
        keyed = [(index, cast(PartialDate, _as_date(value)).sort_key()) for index, value in present]
    else:
        keyed = [(index, normalise_text(value)) for index, value in present]
    keyed.sort(key=lambda pair: pair[1], reverse=direction == "max")  # stable: ties keep input order
    order = [index for index, _ in keyed] + missing
    if limit is not None:
        order = order[:limit]
    return [items[index] for index in order]


# --------------------------------------------------------------------------------------------
# deterministic Deduce


def compare_values(left: Any, right: Any) -> int:
    """-1, 0 or 1 comparing two values read as numbers, else dates; raises
    :class:`OperatorError` for text, which has no order a question could mean."""
    a = _unwrap(left, "the first value")
    b = _unwrap(right, "the second value")
    if a is None or b is None:
        raise OperatorError("cannot compare: a value is missing")
    kind = _kind([a, b])
    if kind == "number":
        x, y = _as_number(a), _as_number(b)
        assert x is not None and y is not None
        if math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12):
            return 0
        return -1 if x < y else 1
    if kind == "date":
        da, db = _as_date(a), _as_date(b)
        assert da is not None and db is not None
        precision = _precision([da, db])
        ka, kb = _date_key(da, precision), _date_key(db, precision)
        return (ka > kb) - (ka < kb)
    raise OperatorError(
        f"cannot order {render_value(a)!r} and {render_value(b)!r}: neither numbers nor dates; "
        "use Deduce(op=judgement) for a judgement in words"
    )


def _equal(values: Sequence[Any]) -> bool:
    items = [_set_or_value(v) for v in values]
    if any(isinstance(item, frozenset) for item in items):
        return (
            len({item if isinstance(item, frozenset) else frozenset({_canonical(item)}) for item in items})
            == 1
        )
    kind = _kind(items)
    if kind in ("number", "date"):
        return all(compare_values(items[0], other) == 0 for other in items[1:])
    return len({normalise_text(item) for item in items}) == 1


def _set_or_value(value: Any) -> Any:
    if isinstance(value, list | tuple):
        if len(value) == 1:
            return _set_or_value(value[0])
        return frozenset(_canonical(v) for v in value)
    if value is None:
        raise OperatorError("cannot compare: a value is missing")
    return value


def _canonical(value: Any) -> Any:
    number = _as_number(value)
    if number is not None:
        return ("number", float(number))
    date = parse_date(value) if not isinstance(value, int | float) else None
    if date is not None:
        return ("date", date.sort_key())
    return ("text", normalise_text(value))


class DeduceOutcome(BaseModel):
    """The result of a Deduce step."""

    op: str
    answer: bool | str | list[str]
    explanation: str = ""
    deterministic: bool = True


def deduce_compare(op: CompareKind, values: Sequence[Any]) -> DeduceOutcome:
    """Decide ``greater`` / ``less`` (exactly two values: is the first greater / less than the
    second?) or ``equal`` (two or more values, all the same after normalisation)."""
    if op not in COMPARE_OPS:
        raise OperatorError(
            f"{op!r} is not a deterministic Deduce op; expected one of {', '.join(COMPARE_OPS)}"
        )
    if op == "equal":
        if len(values) < 2:
            raise OperatorError(f"Deduce(op=equal) needs at least two values, got {len(values)}")
        result = _equal(values)
        shown = " = ".join(render_value(v) for v in values)
        return DeduceOutcome(op=op, answer=result, explanation=f"{shown}: {'true' if result else 'false'}")
    if len(values) != 2:
        raise OperatorError(f"Deduce(op={op}) compares exactly two values, got {len(values)}")
    order = compare_values(values[0], values[1])
    result = order > 0 if op == "greater" else order < 0
    symbol = ">" if op == "greater" else "<"
    return DeduceOutcome(
        op=op,
        answer=result,
        explanation=f"{render_value(values[0])} {symbol} {render_value(values[1])}: {'true' if result else 'false'}",
    )


# --------------------------------------------------------------------------------------------
# LLM-backed Deduce: the request/response boundary


class DeduceEvidence(BaseModel):
    """One content item of a Deduce step: the alias it came from (if any) and its text."""

    alias: str | None = None
    text: str


_JUDGEMENT_SYNONYMS = {
    "yes": "yes",
    "true": "yes",
    "是": "yes",
    "对": "yes",
    "correct": "yes",
    "no": "no",
    "false": "no",
    "否": "no",
    "不是": "no",
    "incorrect": "no",
    "unknown": "unknown",
    "not sure": "unknown",
    "unclear": "unknown",
    "不确定": "unknown",
    "未知": "unknown",
}
_ENTAILMENT_SYNONYMS = {
    "entailment": "entailment",
    "entailed": "entailment",
    "entails": "entailment",
    "蕴含": "entailment",
    "contradiction": "contradiction",
    "contradicted": "contradiction",
    "contradicts": "contradiction",
    "矛盾": "contradiction",
    "neutral": "neutral",
    "unknown": "neutral",
    "中立": "neutral",
}


class DeduceRequest(BaseModel):
    """A Deduce step the LLM executor must answer.

    ``options`` are the candidates for ``choice``/``multiChoice`` (the content texts unless
    given). The executor asks for :attr:`response_model` and calls :meth:`resolve`.
    """

    op: LlmDeduceKind
    target: str | None = None
    question: str | None = None
    content: list[DeduceEvidence] = Field(default_factory=list)
    options: list[str] = Field(default_factory=list)

    @property
    def response_model(self) -> type[DeduceResponse]:
        return DeduceResponse

    def resolve(self, response: DeduceResponse) -> DeduceOutcome:
        """Check ``response`` fits the op and turn it into an outcome; raises
        :class:`OperatorError` (the caller may ask again) when it does not."""
        op = self.op
        answer = response.answer.strip()
        if op == "judgement":
            verdict = _JUDGEMENT_SYNONYMS.get(normalise_text(answer))
            if verdict is None:
                raise OperatorError(
                    f"judgement answer {answer!r} is not one of {', '.join(JUDGEMENT_VERDICTS)}"
                )
            return DeduceOutcome(op=op, answer=verdict, explanation=response.reasoning, deterministic=False)
        if op == "entailment":
            label = _ENTAILMENT_SYNONYMS.get(normalise_text(answer))
            if label is None:
                raise OperatorError(
                    f"entailment answer {answer!r} is not one of {', '.join(ENTAILMENT_LABELS)}"
                )
            return DeduceOutcome(op=op, answer=label, explanation=response.reasoning, deterministic=False)
        if op == "choice":
            return DeduceOutcome(
                op=op, answer=self._option(answer), explanation=response.reasoning, deterministic=False
            )
        if op == "multiChoice":
            picked = [a for a in (response.answers or ([answer] if answer else []))]
            chosen = list(dict.fromkeys(self._option(a) for a in picked))
            return DeduceOutcome(op=op, answer=chosen, explanation=response.reasoning, deterministic=False)
        values = [v.strip() for v in (response.answers or ([answer] if answer else [])) if v.strip()]
        return DeduceOutcome(op=op, answer=values, explanation=response.reasoning, deterministic=False)

    def _option(self, answer: str) -> str:
        options = self.options or [item.text for item in self.content]
        wanted = normalise_text(answer)
        for option in options:
            if normalise_text(option) == wanted:
                return option
        raise OperatorError(f"answer {answer!r} is not one of the options: {'; '.join(options)}")


def deduce(
    op: str,
    content: Sequence[tuple[str | None, Any]],
    *,
    target: str | None = None,
    question: str | None = None,
) -> DeduceOutcome | DeduceRequest:
    """Run a Deduce step on bound content ``[(alias or None, value), ...]``.

    greater/less/equal are decided now; the other ops come back as a :class:`DeduceRequest`.
    """
    if op in COMPARE_OPS:
        return deduce_compare(op, [value for _, value in content])  # type: ignore[arg-type]
    if op in LLM_DEDUCE_OPS:
        evidence = [DeduceEvidence(alias=alias, text=render_value(value)) for alias, value in content]
        options: list[str] = []
        if op in ("choice", "multiChoice"):
            for _, value in content:
                if isinstance(value, list | tuple):
                    options.extend(render_value(v) for v in value)
                else:
                    options.append(render_value(value))
        return DeduceRequest(op=op, target=target, question=question, content=evidence, options=options)  # type: ignore[arg-type]
    raise OperatorError(
        f"unknown Deduce op {op!r}; expected one of {', '.join(COMPARE_OPS + LLM_DEDUCE_OPS)}"
    )


def run_deduce(
    node: DeduceOp, bindings: Mapping[str, Any], *, question: str | None = None
) -> DeduceOutcome | DeduceRequest:
    """:func:`deduce` for a parsed ``Deduce(...)`` node, reading aliases from ``bindings``."""
    content: list[tuple[str | None, Any]] = []
    for item in node.content:
        if isinstance(item, AliasRef):
            if item.alias not in bindings:
                raise OperatorError(f"Deduce reads alias {item.alias!r}, which has no value yet")
            content.append((item.alias, bindings[item.alias]))
        else:
            content.append((None, item.value))
    return deduce(node.op, content, target=node.target, question=question)

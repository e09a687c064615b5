"""``Deduce(op=..., content=[...], target=...)->alias``: in code, or one LLM call.

* ``Deduce(op=greater|less|equal)`` is decided here by :func:`deduce_compare`.
* ``Deduce(op=judgement|entailment|choice|multiChoice|extract)`` needs a model:
  :func:`deduce` returns a :class:`DeduceRequest`; :func:`run` asks the model
  (:func:`kag_neo4j.prompts.subanswer.build_deduce_messages`, answered with a
  :class:`~kag_neo4j.prompts.deduce.DeduceResponse`) and checks the answer with
  :meth:`DeduceRequest.resolve`.

Values are read with :mod:`kag_neo4j.solver.values`, the same readers Math and Sort use.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from kag_neo4j.errors import OperatorError
from kag_neo4j.prompts.deduce import (
    ENTAILMENT_LABELS,
    JUDGEMENT_VERDICTS,
    DeduceResponse,
)
from kag_neo4j.prompts.plan import OPERATOR_LINES
from kag_neo4j.prompts.subanswer import build_deduce_messages
from kag_neo4j.solver.lf.ast import AliasRef, DeduceOp
from kag_neo4j.solver.lf.scanner import Scanner
from kag_neo4j.solver.lf.spec import OperatorSpec
from kag_neo4j.solver.chunks import RankedChunk
from kag_neo4j.solver.memory import Item
from kag_neo4j.solver.values import (
    PartialDate,
    as_date,
    as_number,
    normalise_text,
    parse_date,
    render_value,
    unwrap_one,
    value_kind,
)

if TYPE_CHECKING:
    from kag_neo4j.solver.action import ActionContext

__all__ = [
    "COMPARE_OPS",
    "LLM_DEDUCE_OPS",
    "SPEC",
    "DeduceEvidence",
    "DeduceOutcome",
    "DeduceRequest",
    "compare_values",
    "deduce",
    "deduce_compare",
    "run",
    "run_deduce",
]

CompareKind = Literal["greater", "less", "equal"]
LlmDeduceKind = Literal["judgement", "entailment", "choice", "multiChoice", "extract"]
COMPARE_OPS: tuple[str, ...] = ("greater", "less", "equal")
LLM_DEDUCE_OPS: tuple[str, ...] = ("judgement", "entailment", "choice", "multiChoice", "extract")


# --------------------------------------------------------------------------------------------
# deterministic Deduce


def _date_key(value: PartialDate, precision: int) -> tuple[int, ...]:
    return value.sort_key()[:precision]


def _precision(dates: Sequence[PartialDate]) -> int:
    return min(1 if d.month is None else 2 if d.day is None else 3 for d in dates)


def compare_values(left: Any, right: Any) -> int:
    """-1, 0 or 1 comparing two values read as numbers, else dates; raises
    :class:`OperatorError` for text, which has no order a question could mean."""
    a = unwrap_one(left, "the first value")
    b = unwrap_one(right, "the second value")
    if a is None or b is None:
        raise OperatorError("cannot compare: a value is missing")
    kind = value_kind([a, b])
    if kind == "number":
        x, y = as_number(a), as_number(b)
        assert x is not None and y is not None
        if math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12):
            return 0
        return -1 if x < y else 1
    if kind == "date":
        da, db = as_date(a), as_date(b)
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
    kind = value_kind(items)
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
    number = as_number(value)
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


# --------------------------------------------------------------------------------------------
# the operator


def run(ctx: ActionContext, op: DeduceOp) -> None:
    """Decide the step in code, or ask the model with the evidence of the steps it reads."""
    values = ctx.inputs("Deduce")
    outcome = run_deduce(op, values, question=ctx.question)
    if isinstance(outcome, DeduceRequest):
        outcome = _ask(ctx, outcome)
        ctx.record.source = "deduce+llm"
    else:
        ctx.record.source = "deduce"
    ctx.record.note = outcome.explanation
    answer = outcome.answer
    items = [Item(value=v) for v in answer] if isinstance(answer, list) else [Item(value=answer)]
    ctx.bind(op.output, items)


def _ask(ctx: ActionContext, request: DeduceRequest) -> DeduceOutcome:
    rt, record = ctx.rt, ctx.record
    evidence: list[RankedChunk] = []
    for index in record.depends_on:
        for chunk_id in rt.records[index].evidence:
            chunk = rt.memory.chunk(chunk_id)
            if chunk is not None and chunk not in evidence:
                evidence.append(chunk)
    messages = build_deduce_messages(
        request.op, language=rt.language, question=request.target or request.question or ctx.question,
        content=[(item.alias, item.text) for item in request.content], options=request.options,
        passages=[chunk.passage() for chunk in evidence[:3]], budget=rt.config.budget,
    )
    response = rt.ask(record, messages, DeduceResponse, stage="deduce", max_tokens=rt.config.deduce_max_tokens)
    return request.resolve(response)


SPEC = OperatorSpec(name="Deduce", node=DeduceOp, parse=Scanner.deduce, handler=run, prompt=OPERATOR_LINES["Deduce"])

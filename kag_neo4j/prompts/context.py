"""The evidence block shared by the solver's prompts (sub-answer, judge, answer, deduce).

Everything retrieved — known results, graph facts, passages — is shown to the model as numbered,
clearly delimited *data*. Text that came from documents or entity names is flattened to one line
and cut to a budget, so a hostile document can neither break the layout nor flood the context.
Passage numbers ``[1]``, ``[2]`` ... are what the models cite back in ``evidence``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, TypedDict

from pydantic import BaseModel, ConfigDict, Field

from kag_neo4j.models.base import ChatMessage
from kag_neo4j.models.messages import conversation
from kag_neo4j.prompts.plan import detect_language

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "Evidence",
    "EvidenceBudget",
    "Fact",
    "Known",
    "Language",
    "Passage",
    "evidence_block",
    "evidence_conversation",
    "pick_language",
    "shorten",
    "type_hint",
]

Language = Literal["en", "zh"]

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


class Passage(BaseModel):
    """One retrieved chunk as the model sees it."""

    chunk_id: str
    title: str | None = None
    text: str


class Fact(BaseModel):
    """One graph fact as the model sees it: ``subject | predicate | object``."""

    subject: str
    predicate: str
    object: str


class Known(BaseModel):
    """An earlier result: ``alias = value`` and the sub-question that produced it."""

    alias: str
    value: str
    question: str = ""


def pick_language(language: str, text: str) -> Language:
    """``en``/``zh`` as asked, or by the script of ``text`` for ``auto``."""
    value = (language or "auto").lower()
    if value.startswith("zh"):
        return "zh"
    if value.startswith("en"):
        return "en"
    return detect_language(text)


def shorten(text: object, limit: int) -> str:
    """One line, at most ``limit`` characters (a CJK character counts as two)."""
    flat = " ".join(str(text).split())
    cost = 0
    for index, char in enumerate(flat):
        cost += 2 if _CJK.match(char) else 1
        if cost > limit:
            return flat[:index].rstrip() + " …"
    return flat


_TYPE_HINTS: dict[str, tuple[str, str]] = {
    "Year": ("a year", "一个年份"),
    "Date": ("a date", "一个日期"),
    "Time": ("a time", "一个时间"),
    "Integer": ("a number", "一个数字"),
    "Float": ("a number", "一个数字"),
    "Number": ("a number", "一个数字"),
    "Money": ("an amount of money", "一个金额"),
    "Percent": ("a percentage", "一个百分比"),
    "Duration": ("a duration", "一段时长"),
    "Boolean": ("yes or no", "是或否"),
}


def type_hint(type_name: str | None, language: Language) -> str:
    """What kind of answer a step expects, in words (``a year``, ``a Person``)."""
    if not type_name or type_name in {"Entity", "Text"}:
        return ""
    known = _TYPE_HINTS.get(type_name)
    if known:
        return known[0] if language == "en" else known[1]
    return f"a {type_name}" if language == "en" else f"一个{type_name}"


class _Labels(BaseModel):
    known: str
    facts: str
    passages: str
    none: str


_LABELS = {
    "en": _Labels(known="Known results:", facts="Facts from the knowledge graph:", passages="Passages:",
                  none="(none)"),
    "zh": _Labels(known="已知结果：", facts="知识图谱中的事实：", passages="段落：", none="（无）"),
}


class EvidenceBudget(BaseModel):
    """How much evidence text a prompt may carry."""

    model_config = ConfigDict(extra="forbid")  # a misspelt knob is an error, not a silent default

    passage_chars: int = Field(default=480, ge=40)
    fact_chars: int = Field(default=160, ge=20)
    max_facts: int = Field(default=8, ge=0)


def evidence_block(
    language: Language,
    *,
    known: Sequence[Known] = (),
    facts: Sequence[Fact] = (),
    passages: Sequence[Passage] = (),
    budget: EvidenceBudget | None = None,
) -> str:
    """The data part of a prompt: known results, graph facts and numbered passages."""
    budget = budget or EvidenceBudget()
    labels = _LABELS[language]
    lines: list[str] = []
    if known:
        lines.append(labels.known)
        for item in known:
            question = f" ({shorten(item.question, 120)})" if item.question else ""
            lines.append(f"- {item.alias} = {shorten(item.value, budget.fact_chars)}{question}")
    if facts and budget.max_facts:
        lines.append(labels.facts)
        for fact in list(facts)[: budget.max_facts]:
            text = f"{fact.subject} | {fact.predicate} | {fact.object}"
            lines.append(f"- {shorten(text, budget.fact_chars)}")
    lines.append(labels.passages)
    if not passages:
        lines.append(labels.none)
    for number, passage in enumerate(passages, start=1):
        title = f"({shorten(passage.title, 60)}) " if passage.title else ""
        lines.append(f"[{number}] {title}{shorten(passage.text, budget.passage_chars)}")
    return "\n".join(lines)


class Evidence(TypedDict, total=False):
    """What a prompt shows the model as data (the keywords of :func:`evidence_block`)."""

    known: Sequence[Known]
    facts: Sequence[Fact]
    passages: Sequence[Passage]
    budget: EvidenceBudget | None


def evidence_conversation(
    system: str, language: Language, *requests: str, **evidence: Unpack[Evidence]
) -> list[ChatMessage]:
    """``[system, user]``: the user message is the evidence block, then each of ``requests`` on its line."""
    return conversation(system, [evidence_block(language, **evidence), *requests])

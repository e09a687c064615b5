"""NaiveRAG answering: the top-k passages and the question in, one short answer out.

The baseline every multi-hop QA table reports: no planning, no graph, one LLM call. The reply is
two plain lines (``Answer: ...`` / ``Sources: 1, 3``) rather than JSON, so even a small local
model follows it; :func:`parse_naive_answer` reads it and tolerates a model that answers with a
bare phrase.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, Field

from kag_neo4j.models.base import ChatMessage
from kag_neo4j.models.messages import conversation

__all__ = ["NAIVE_ANSWER_PROMPT_VERSION", "NaiveAnswer", "NaivePassage", "naive_answer_messages", "parse_naive_answer"]

NAIVE_ANSWER_PROMPT_VERSION = "naive-answer-1"

UNKNOWN = "unknown"

_SYSTEM = (
    "You answer a question using only the numbered passages you are given. "
    "Give the shortest answer that is complete: a name, a date, a number, a place, a short phrase, "
    "or yes/no. Never answer with a full sentence and never explain. "
    f"When the passages do not contain the answer, the answer is: {UNKNOWN}."
)

_FORMAT = (
    "Reply with exactly two lines:\n"
    "Answer: <the short answer>\n"
    "Sources: <the numbers of the passages the answer comes from, e.g. 2, 4>"
)

_ANSWER = re.compile(r"^\s*(?:\*\*)?answer(?:\*\*)?\s*[:：]\s*(.*)$", re.IGNORECASE | re.MULTILINE)
_SOURCES = re.compile(r"^\s*(?:\*\*)?sources?(?:\*\*)?\s*[:：]\s*(.*)$", re.IGNORECASE | re.MULTILINE)
_NUMBER = re.compile(r"\d+")
_STRIP = " \t\"'`*.。"


class NaivePassage(BaseModel):
    title: str | None = None
    text: str


class NaiveAnswer(BaseModel):
    answer: str
    sources: list[int] = Field(default_factory=list, description="1-based numbers of the passages cited")


def naive_answer_messages(question: str, passages: Sequence[NaivePassage], *, max_chars: int = 1200) -> list[ChatMessage]:
    """The chat messages for one NaiveRAG answer (each passage cut to ``max_chars``)."""
    blocks = []
    for number, passage in enumerate(passages, start=1):
        text = passage.text if len(passage.text) <= max_chars else passage.text[:max_chars].rstrip() + " ..."
        heading = f"[{number}] {passage.title}" if passage.title else f"[{number}]"
        blocks.append(f"{heading}\n{text}")
    context = "\n\n".join(blocks) if blocks else "(no passages)"
    user = f"Passages:\n\n{context}\n\nQuestion: {question.strip()}\n\n{_FORMAT}"
    return conversation(_SYSTEM, user)


def parse_naive_answer(reply: str, passages: int) -> NaiveAnswer:
    """Read ``Answer:`` / ``Sources:``; a reply without them counts as a bare answer (first line)."""
    match = _ANSWER.search(reply)
    if match:
        answer = match.group(1)
    else:
        lines = [line for line in reply.splitlines() if line.strip() and not _SOURCES.match(line)]
        answer = lines[0] if lines else ""
    answer = answer.strip().strip(_STRIP).strip()
    sources: list[int] = []
    found = _SOURCES.search(reply)
    if found:
        for token in _NUMBER.findall(found.group(1)):
            number = int(token)
            if 1 <= number <= passages and number not in sources:
                sources.append(number)
    return NaiveAnswer(answer=answer or UNKNOWN, sources=sources)

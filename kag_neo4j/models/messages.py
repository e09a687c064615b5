"""Chat message assembly, written once for every prompt: rules, worked examples, the request.

Every prompt module builds its messages with :func:`conversation` (a system message, few-shot
user/assistant turns, the user message) and a repair attempt with :func:`follow_up` (the
conversation so far, the model's reply, what to fix). The text is exactly what the prompt module
passes in: the prompt versions and the response cache depend on it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from .base import ChatMessage

__all__ = ["conversation", "follow_up", "json_reply"]

#: a worked example: what the user asks and what the assistant replies
Turn = tuple[str, str]


def conversation(system: str, user: str | Sequence[str], *, examples: Sequence[Turn] = ()) -> list[ChatMessage]:
    """``[system, (user, assistant) per example..., user]``; a list of lines is joined by newlines."""
    messages = [ChatMessage(role="system", content=system)]
    for asked, replied in examples:
        messages.append(ChatMessage(role="user", content=asked))
        messages.append(ChatMessage(role="assistant", content=replied))
    messages.append(ChatMessage(role="user", content=user if isinstance(user, str) else "\n".join(user)))
    return messages


def follow_up(messages: Sequence[ChatMessage], reply: str, ask: str, *, echo_limit: int = 2000) -> list[ChatMessage]:
    """``messages``, then the model's ``reply`` (cut at ``echo_limit`` characters) and the user's ``ask``."""
    shown = reply if len(reply) <= echo_limit else reply[:echo_limit] + " ..."
    return [*messages, ChatMessage(role="assistant", content=shown), ChatMessage(role="user", content=ask)]


def json_reply(**fields: object) -> str:
    """An example reply as the model should write it: compact JSON, non-ASCII kept."""
    return json.dumps(fields, ensure_ascii=False)

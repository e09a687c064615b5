"""A deterministic test double that replays prepared responses. For unit tests only, never a default.

It goes through the same :class:`~kag_neo4j.models.chat.ChatLLM` machinery as the real providers
(cache, usage, retries, structured output and repair), so tests exercise that machinery too.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from kag_neo4j.errors import ConfigError, ModelError, ModelTimeoutError

from .base import ChatMessage, Completion, CompletionRequest
from .chat import ChatLLM, RetryPolicy, estimate_tokens

ScriptedItem = str | dict[str, Any] | list[Any] | BaseModel | BaseException
Responder = Callable[[list[ChatMessage]], str | dict[str, Any] | list[Any] | BaseModel]


class ScriptExhaustedError(ModelError):
    """The scripted LLM was asked more often than it has responses."""


class ScriptedCall(BaseModel):
    """One request the scripted LLM received."""

    messages: list[ChatMessage]
    max_tokens: int
    temperature: float
    schema_: dict[str, Any] | None = None


def _render(item: str | dict[str, Any] | list[Any] | BaseModel) -> str:
    if isinstance(item, str):
        return item
    if isinstance(item, BaseModel):
        return item.model_dump_json()
    if isinstance(item, (dict, list)):
        return json.dumps(item, ensure_ascii=False)
    raise TypeError(f"a scripted response must be str, dict, list or a pydantic object, got {type(item).__name__}")


class ScriptedLLM(ChatLLM):
    """Replays ``responses`` in order, or answers with ``responses(messages)`` when it is callable.

    A response may be a string, a dict/list (sent as JSON), a pydantic object (sent as its JSON) or
    an exception instance, which is raised when its turn comes (use ``TransientModelError`` to test
    retries). ``delay`` simulates a slow model: when it exceeds the timeout the call fails with
    :class:`~kag_neo4j.errors.ModelTimeoutError` after waiting the timeout. Every request that
    reaches the model is recorded in :attr:`calls` (cache hits are not).
    """

    provider = "scripted"

    def __init__(
        self,
        responses: Iterable[ScriptedItem] | Responder,
        *,
        model_id: str = "scripted",
        delay: float = 0.0,
        enforce_schema: bool = False,
        **options: Any,
    ) -> None:
        options.setdefault("retry", RetryPolicy(base_delay=0.0))
        super().__init__(model_id=model_id, **options)
        self._responder: Responder | None = responses if callable(responses) else None
        self._queue: list[ScriptedItem] = [] if callable(responses) else list(responses)
        self.delay = delay
        self.enforce_schema = enforce_schema
        self.calls: list[ScriptedCall] = []
        self._lock = threading.Lock()

    @classmethod
    def from_file(cls, path: Path | str, **options: Any) -> ScriptedLLM:
        """Responses from a JSON list or a JSON-lines file (each line one response)."""
        file = Path(path)
        if not file.is_file():
            raise ConfigError(
                f"the scripted LLM needs a responses file; {file} does not exist "
                "(set KAG_LLM_MODEL to a .json list or .jsonl file of responses)"
            )
        text = file.read_text(encoding="utf-8")
        try:
            if file.suffix == ".jsonl":
                items = [json.loads(line) for line in text.splitlines() if line.strip()]
            else:
                items = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"scripted responses file {file} is not valid JSON: {exc}") from exc
        if not isinstance(items, list):
            raise ConfigError(f"scripted responses file {file} must hold a JSON list of responses")
        return cls(items, model_id=f"scripted:{file.name}", **options)

    @property
    def remaining(self) -> int:
        """How many queued responses are left (0 for a callable responder)."""
        return len(self._queue)

    @property
    def supports_structured_output(self) -> bool:
        return self.enforce_schema

    def _complete(self, request: CompletionRequest) -> Completion:
        messages, max_tokens, timeout = list(request.messages), request.max_tokens, request.timeout
        with self._lock:
            self.calls.append(
                ScriptedCall(
                    messages=messages, max_tokens=max_tokens, temperature=request.temperature, schema_=request.json_schema
                )
            )
            number = len(self.calls)
            item: ScriptedItem | None = None
            if self._responder is None:
                if not self._queue:
                    raise ScriptExhaustedError(
                        f"scripted LLM {self.model_id!r} has no response left for call {number}; "
                        "give it more responses"
                    )
                item = self._queue.pop(0)
        if self._responder is not None:  # outside the lock: concurrent callers run concurrently
            item = self._responder(list(messages))
        if item is None:
            raise TypeError(f"the responder of scripted LLM {self.model_id!r} returned None; return a str, dict or model")
        if self.delay > 0:
            if self.delay > timeout:
                time.sleep(timeout)
                raise ModelTimeoutError(f"scripted delay {self.delay:g}s exceeds the timeout {timeout:g}s")
            time.sleep(self.delay)
        if isinstance(item, BaseException):
            raise item
        text = _render(item)
        prompt = sum(estimate_tokens(m.content) for m in messages)
        finish = "stop"
        if estimate_tokens(text) > max_tokens:  # like a real model: cut off at the limit
            text, finish = text[: max_tokens * 4], "length"
        return Completion(text=text, prompt_tokens=prompt, completion_tokens=estimate_tokens(text), finish_reason=finish)


def scripted(*responses: ScriptedItem, **options: Any) -> ScriptedLLM:
    """Shorthand: ``scripted("a", {"b": 1})``."""
    return ScriptedLLM(list(responses), **options)


def prompts_of(calls: Sequence[ScriptedCall]) -> list[str]:
    """The last user message of each recorded call (handy in assertions)."""
    return [next((m.content for m in reversed(c.messages) if m.role == "user"), "") for c in calls]

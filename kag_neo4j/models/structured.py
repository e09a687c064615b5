"""Structured output: JSON schemas, lenient JSON parsing, validation and repair prompts.

Providers enforce the schema where they can (llama.cpp grammar, OpenAI ``json_schema``); every
reply is still parsed and validated here, and an invalid reply leads to a repair attempt that shows
the model its own output and the validation error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from .base import ChatMessage
from .messages import follow_up

M = TypeVar("M", bound=BaseModel)

#: How much of an invalid reply is echoed back to the model in a repair prompt.
_ECHO_LIMIT = 2000

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


class InvalidOutput(ValueError):
    """One reply that is not valid JSON, or does not match the schema. ``reason`` is model-readable."""

    def __init__(self, reason: str, text: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.text = text


def json_schema_of(response_model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema a provider is asked to enforce for ``response_model``."""
    if not (isinstance(response_model, type) and issubclass(response_model, BaseModel)):
        raise TypeError(
            f"response_model must be a pydantic BaseModel subclass, got {response_model!r}"
        )
    return response_model.model_json_schema()


def _json_start(text: str) -> int | None:
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    return min(starts) if starts else None


def _structure(text: str, start: int) -> Iterator[tuple[int, str]]:
    """``(index, char)`` of the characters of ``text`` from ``start`` that lie outside JSON strings."""
    in_string = escaped = False
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char == '"':
            in_string = True
        yield index, char


def _balanced_json(text: str) -> str | None:
    """The first balanced ``{...}`` or ``[...]`` block in ``text`` (string-aware), if any."""
    start = _json_start(text)
    if start is None:
        return None
    stack: list[str] = []
    for index, char in _structure(text, start):
        if char in "{[":
            stack.append("}" if char == "{" else "]")
        elif char in "}]":
            if not stack or stack.pop() != char:
                return None
            if not stack:
                return text[start : index + 1]
    return None


def closed_prefixes(text: str, *, limit: int = 16) -> Iterator[str]:
    """A reply that stops mid-JSON (a loop cut short, a token budget spent), as valid JSON: its
    prefixes that end after a complete element, with their open brackets closed, longest first
    (at most ``limit``). A caller validates them in turn: the longest may end in an empty ``{}``
    that its schema rejects."""
    start = _json_start(text)
    if start is None:
        return
    stack: list[str] = []
    cuts: list[tuple[int, str]] = []  # (end of a complete prefix, the brackets that close it)
    for index, char in _structure(text, start):
        if char in "{[":
            stack.append("}" if char == "{" else "]")
            cuts.append((index + 1, "".join(reversed(stack))))
        elif char in "}]":
            if not stack or stack.pop() != char:
                return
            cuts.append((index + 1, "".join(reversed(stack))))
        elif char == "," and stack:
            cuts.append((index, "".join(reversed(stack))))
    given = 0
    for end, closing in reversed(cuts):
        candidate = text[start:end] + closing
        try:
            json.loads(candidate, strict=False)
        except json.JSONDecodeError:
            continue
        yield candidate
        given += 1
        if given >= limit:
            return


def close_truncated(text: str) -> str | None:
    """The longest of :func:`closed_prefixes`, or ``None`` when nothing complete is left."""
    return next(closed_prefixes(text), None)


def loads_lenient(text: str) -> Any:
    """Parse JSON from a model reply: tolerates code fences, prose around it, trailing commas and raw
    control characters (tabs, line breaks) inside strings.

    Raises :class:`InvalidOutput` when no JSON value can be recovered.
    """
    if not text or not text.strip():
        raise InvalidOutput("the reply was empty; a JSON object was expected", text)
    candidates: list[str] = [text.strip()]
    fenced = _FENCE.search(text)
    if fenced:
        candidates.append(fenced.group(1).strip())
    block = _balanced_json(text)
    if block:
        candidates.append(block)
    first_error: json.JSONDecodeError | None = None
    for candidate in candidates:
        for variant in (candidate, _TRAILING_COMMA.sub(r"\1", candidate)):
            try:
                # strict=False: a raw tab or line break inside a string (a small model copying the
                # passage's layout) is read as itself, not rejected as an invalid control character
                return json.loads(variant, strict=False)
            except json.JSONDecodeError as exc:
                first_error = first_error or exc
    detail = f" ({first_error.msg} at line {first_error.lineno} column {first_error.colno})" if first_error else ""
    if block is None and ("{" in text or "[" in text):
        detail += "; the JSON looks truncated (unbalanced brackets)"
    raise InvalidOutput(f"the reply is not valid JSON{detail}", text)


def summarise_validation_error(error: ValidationError, limit: int = 6) -> str:
    """A short, model-readable list of what is wrong with an object."""
    lines = []
    for item in error.errors()[:limit]:
        location = ".".join(str(part) for part in item.get("loc", ())) or "(root)"
        lines.append(f"{location}: {item.get('msg', 'invalid')}")
    more = len(error.errors()) - limit
    if more > 0:
        lines.append(f"... and {more} more problem(s)")
    return "; ".join(lines)


def parse_object(text: str, response_model: type[M]) -> M:
    """Parse and validate one reply. Raises :class:`InvalidOutput` naming what is wrong."""
    value = loads_lenient(text)
    try:
        return response_model.model_validate(value)
    except ValidationError as exc:
        raise InvalidOutput(
            f"the JSON does not match the schema of {response_model.__name__}: "
            + summarise_validation_error(exc),
            text,
        ) from exc


def schema_instruction(schema: dict[str, Any]) -> str:
    """The instruction added for servers that cannot enforce a schema themselves."""
    return (
        "Reply with one JSON value only: no prose, no code fence. It must validate against this "
        "JSON schema:\n" + json.dumps(schema, ensure_ascii=False, separators=(",", ":"))
    )


def with_schema_instruction(messages: Sequence[ChatMessage], schema: dict[str, Any]) -> list[ChatMessage]:
    """``messages`` with the schema instruction appended to the system message (or a new one)."""
    instruction = schema_instruction(schema)
    result = list(messages)
    for index, message in enumerate(result):
        if message.role == "system":
            result[index] = ChatMessage(role="system", content=f"{message.content}\n\n{instruction}")
            return result
    return [ChatMessage(role="system", content=instruction), *result]


def repair_messages(messages: Sequence[ChatMessage], failure: InvalidOutput) -> list[ChatMessage]:
    """The conversation for a repair attempt: the invalid reply, then what is wrong with it."""
    ask = f"That reply is invalid: {failure.reason}. Reply again with only the corrected JSON, nothing else."
    return follow_up(messages, failure.text, ask, echo_limit=_ECHO_LIMIT)

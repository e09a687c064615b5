"""The shared machinery behind every chat LLM provider.

A provider implements one method, :meth:`ChatLLM._complete`, which takes one
:class:`~kag_neo4j.models.base.CompletionRequest` and returns one
:class:`~kag_neo4j.models.base.Completion` (a natively async provider also overrides
``_acomplete``). This base class adds everything else the :class:`~kag_neo4j.models.base.LLM`
protocol promises: the response cache, per-stage usage accounting, bounded concurrency, timeouts,
retries with exponential backoff on transient errors, and schema-validated structured output with a
repair-and-retry path that ends in a clear :class:`StructuredOutputError`.

That logic is written once, as flows (:mod:`kag_neo4j.models.flow`): generators that yield
:class:`Send` (one request) or :class:`Pause` (a backoff) and receive a :class:`Reply`. A sync and
an async driver run them; they are the only code that differs between ``complete`` and ``acomplete``.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
import weakref
from abc import ABC, abstractmethod
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from pydantic import BaseModel, Field

from kag_neo4j.errors import (
    ModelConnectionError,
    ModelEndpointError,
    ModelError,
    ModelTimeoutError,
    StructuredOutputError,
    TransientModelError,
)

from .base import REPETITION, CallOptions, ChatMessage, Completion, CompletionRequest, MessagesLike
from .cache import CachedResponse, NullCache, ResponseStore, cache_key
from .structured import (
    InvalidOutput,
    closed_prefixes,
    json_schema_of,
    loads_lenient,
    parse_object,
    repair_messages,
    with_schema_instruction,
)
from .flow import adrive, drive
from .usage import Usage

if TYPE_CHECKING:
    from typing_extensions import Unpack

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")

__all__ = ["ChatLLM", "Completion", "CompletionRequest", "RetryPolicy", "coerce_messages", "estimate_tokens"]


class RetryPolicy(BaseModel):
    """Exponential backoff with jitter for transient errors (connection, 429, 5xx, timeouts)."""

    max_retries: int = Field(default=3, ge=0)
    base_delay: float = Field(default=0.5, ge=0)
    max_delay: float = Field(default=20.0, ge=0)
    jitter: float = Field(default=0.25, ge=0, le=1)

    def delay(self, retry_index: int) -> float:
        """Seconds to wait before retry number ``retry_index`` (0-based)."""
        raw = min(self.max_delay, self.base_delay * (2**retry_index))
        return float(raw * (1 + self.jitter * (2 * random.random() - 1)))


def coerce_messages(messages: MessagesLike) -> list[ChatMessage]:
    """Validate chat messages (``ChatMessage`` objects or ``{"role", "content"}`` dicts)."""
    if isinstance(messages, (str, bytes)):
        raise TypeError("messages must be a list of ChatMessage, not a string; wrap it: [ChatMessage(role='user', content=...)]")
    result: list[ChatMessage] = []
    for index, message in enumerate(messages):
        if isinstance(message, ChatMessage):
            result.append(message)
        elif isinstance(message, Mapping):
            try:
                result.append(ChatMessage.model_validate(dict(message)))
            except ValueError as exc:
                raise TypeError(f"messages[{index}] is not a valid chat message: {exc}") from exc
        else:
            raise TypeError(f"messages[{index}] must be a ChatMessage or a dict with role and content, got {type(message).__name__}")
    if not result:
        raise ValueError("messages is empty: give at least one user message")
    return result


def estimate_tokens(text: str) -> int:
    """A rough token count for providers that report none (about 4 characters per token)."""
    return max(1, (len(text) + 3) // 4) if text else 0


def _check_against_schema(value: Any, schema: Mapping[str, Any]) -> None:
    """Validate a JSON value against a raw JSON schema (full check when ``jsonschema`` is installed)."""
    try:
        import jsonschema  # type: ignore[import-untyped]
    except ImportError:
        expected = schema.get("type")
        if expected == "object" and not isinstance(value, dict):
            raise InvalidOutput("the JSON must be an object", json.dumps(value, ensure_ascii=False)) from None
        if expected == "array" and not isinstance(value, list):
            raise InvalidOutput("the JSON must be an array", json.dumps(value, ensure_ascii=False)) from None
        if isinstance(value, dict):
            missing = [key for key in schema.get("required", []) if key not in value]
            if missing:
                raise InvalidOutput(f"missing required keys {missing}", json.dumps(value, ensure_ascii=False)) from None
        return
    try:
        jsonschema.validate(value, dict(schema))
    except jsonschema.ValidationError as exc:
        path = ".".join(str(part) for part in exc.absolute_path) or "(root)"
        raise InvalidOutput(f"{path}: {exc.message}", json.dumps(value, ensure_ascii=False)) from exc


@dataclass(frozen=True)
class Send:
    """A flow's command: send ``request`` to the model (the driver answers with a :class:`Reply`)."""

    request: CompletionRequest


@dataclass(frozen=True)
class Pause:
    """A flow's command: wait ``seconds`` before the next attempt (the driver answers None)."""

    seconds: float


@dataclass(frozen=True)
class Reply:
    """What one request gave: a completion or a model error, and the seconds it took."""

    completion: Completion | None
    error: ModelError | None
    seconds: float


#: a flow of chat requests (see :mod:`kag_neo4j.models.flow`)
CallFlow = Generator[Send | Pause, Reply | None, T]


def _salvage(completion: Completion, validate: Callable[[str], T]) -> tuple[T, Completion] | None:
    """The longest valid part of a reply its provider stopped in a loop, with the completion
    rewritten to it (what the cache stores); ``None`` when no complete part validates."""
    for candidate in closed_prefixes(completion.text):
        try:
            value = validate(candidate)
        except InvalidOutput:
            continue
        return value, completion.model_copy(update={"text": candidate})
    return None


class ChatLLM(ABC):
    """Base class of every chat provider; implements the :class:`~kag_neo4j.models.base.LLM` protocol."""

    provider: ClassVar[str] = "abstract"
    #: the weights file of a local model (None for a remote one); ``models check`` times :meth:`load`
    model_path: Path | None = None

    def __init__(
        self,
        *,
        model_id: str,
        usage: Usage | None = None,
        cache: ResponseStore | None = None,
        timeout: float = 600.0,
        retry: RetryPolicy | None = None,
        concurrency: int = 1,
        max_repairs: int = 2,
        default_max_tokens: int = 1024,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        if timeout <= 0:
            raise ValueError(f"timeout must be > 0 seconds, got {timeout}")
        if max_repairs < 0:
            raise ValueError(f"max_repairs must be >= 0, got {max_repairs}")
        self.model_id = model_id
        self.usage = usage if usage is not None else Usage()
        self.cache: ResponseStore = cache if cache is not None else NullCache()
        self.timeout = float(timeout)
        self.retry = retry or RetryPolicy()
        self.concurrency = concurrency
        self.max_repairs = max_repairs
        self.default_max_tokens = default_max_tokens
        #: retry timeouts like other transient errors (a local model sets this to False)
        self.retry_timeouts = True
        self._slots = threading.BoundedSemaphore(concurrency)
        self._async_slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    # ------------------------------------------------------------------ provider hooks
    @abstractmethod
    def _complete(self, request: CompletionRequest) -> Completion:
        """One request to the model (see :class:`~kag_neo4j.models.base.CompletionRequest`).

        Stop within ``request.timeout``. Raise :class:`TransientModelError` (or
        :class:`ModelTimeoutError`) for failures worth retrying, :class:`ModelError` for the rest.
        """

    async def _acomplete(self, request: CompletionRequest) -> Completion:
        """Async variant (a provider with ``supports_async`` overrides it); by default runs
        :meth:`_complete` in a worker thread."""
        return await asyncio.to_thread(self._complete_in_slot, request)

    @property
    def supports_structured_output(self) -> bool:
        """Whether :meth:`_complete` enforces ``request.json_schema`` itself (grammar / structured output)."""
        return False

    @property
    def supports_async(self) -> bool:
        """Whether :meth:`_acomplete` is natively async (else a worker thread runs :meth:`_complete`)."""
        return False

    def _cache_params(self, request: CompletionRequest) -> dict[str, Any]:
        """Sampling parameters that change the reply (part of the cache key)."""
        return {"max_tokens": request.max_tokens, "temperature": request.temperature}

    def load(self) -> None:
        """Load the weights now, where there are any (otherwise the first call does)."""

    def last_perf(self) -> dict[str, float] | None:
        """The model's own counters for the last call (prompt/generation tokens and seconds), if it has any."""
        return None

    def close(self) -> None:
        """Release the model or client (optional)."""

    # ------------------------------------------------------------------ LLM protocol
    def generate(self, messages: MessagesLike, **options: Unpack[CallOptions]) -> str:
        return self.complete(messages, **options).text

    async def agenerate(self, messages: MessagesLike, **options: Unpack[CallOptions]) -> str:
        return (await self.acomplete(messages, **options)).text

    def generate_object(self, messages: MessagesLike, response_model: type[M], **options: Unpack[CallOptions]) -> M:
        return self.complete_object(messages, response_model, **options)[0]

    async def agenerate_object(
        self, messages: MessagesLike, response_model: type[M], **options: Unpack[CallOptions]
    ) -> M:
        return (await self.acomplete_object(messages, response_model, **options))[0]

    def complete(self, messages: MessagesLike, **options: Unpack[CallOptions]) -> Completion:
        """Free-text reply with its token counts (cached)."""
        return drive(self._text_flow(messages, **options), self._step)

    async def acomplete(self, messages: MessagesLike, **options: Unpack[CallOptions]) -> Completion:
        return await adrive(self._text_flow(messages, **options), self._astep)

    def complete_object(
        self, messages: MessagesLike, response_model: type[M], **options: Unpack[CallOptions]
    ) -> tuple[M, Completion]:
        """Like :meth:`generate_object`, also returning the valid reply and what it cost."""
        return drive(self._model_flow(messages, response_model, **options), self._step)

    async def acomplete_object(
        self, messages: MessagesLike, response_model: type[M], **options: Unpack[CallOptions]
    ) -> tuple[M, Completion]:
        return await adrive(self._model_flow(messages, response_model, **options), self._astep)

    # ------------------------------------------------------------------ extensions
    def generate_json(
        self, messages: MessagesLike, schema: Mapping[str, Any], **options: Unpack[CallOptions]
    ) -> tuple[Any, Completion]:
        """Structured output for a raw JSON schema; returns the value and the valid reply."""
        return drive(self._json_flow(messages, schema, **options), self._step)

    async def agenerate_json(
        self, messages: MessagesLike, schema: Mapping[str, Any], **options: Unpack[CallOptions]
    ) -> tuple[Any, Completion]:
        return await adrive(self._json_flow(messages, schema, **options), self._astep)

    # ------------------------------------------------------------------ flows: the logic, once
    def _text_flow(
        self, messages: MessagesLike, *, stage: str = "default", max_tokens: int | None = None, temperature: float = 0.0
    ) -> CallFlow[Completion]:
        """A free-text reply: the cache, else one call (with retries), stored."""
        msgs = coerce_messages(messages)
        request = self._request(msgs, None, max_tokens, temperature)
        key = self._key(msgs, request)
        hit = self.cache.get(key)
        if hit is not None:
            self.usage.record_cache_hit(stage, tokens=hit.prompt_tokens + hit.completion_tokens)
            return self._from_cache(hit)
        completion = yield from self._call_flow(request, stage)
        self._store(key, completion)
        return completion

    def _model_flow(
        self, messages: MessagesLike, response_model: type[M], **options: Unpack[CallOptions]
    ) -> CallFlow[tuple[M, Completion]]:
        return self._structured_flow(
            messages, json_schema_of(response_model), lambda text: parse_object(text, response_model),
            label=response_model.__name__, **options,
        )

    def _json_flow(
        self, messages: MessagesLike, schema: Mapping[str, Any], **options: Unpack[CallOptions]
    ) -> CallFlow[tuple[Any, Completion]]:
        return self._structured_flow(
            messages, dict(schema), lambda text: self._json_validator(text, schema), label="JSON", **options
        )

    def _structured_flow(
        self,
        messages: MessagesLike,
        schema: dict[str, Any],
        validate: Callable[[str], T],
        *,
        label: str,
        stage: str = "default",
        max_tokens: int | None = None,
        temperature: float = 0.0,
    ) -> CallFlow[tuple[T, Completion]]:
        """A validated value: the cache (if its entry still validates), else up to ``1 + max_repairs``
        calls, each repair showing the model its reply and what is wrong with it."""
        msgs = coerce_messages(messages)
        request = self._request(msgs, schema, max_tokens, temperature)
        key = self._key(msgs, request)
        cached = self._valid_cache_hit(key, validate, stage)
        if cached is not None:
            return cached
        failures: list[InvalidOutput] = []
        for _ in range(1 + self.max_repairs):
            completion = yield from self._call_flow(request, stage)
            if completion.finish_reason == REPETITION:  # a loop cut short: keep what came before it
                salvaged = _salvage(completion, validate)
                if salvaged is not None:
                    self._store(key, salvaged[1])
                    return salvaged
            try:
                value = validate(completion.text)
            except InvalidOutput as failure:
                failures.append(failure)
                if completion.finish_reason in ("length", REPETITION):  # cut off: a repair would be cut off too
                    raise self._structured_error(failures, stage, label, request.max_tokens, truncated=True) from None
                request = self._request(repair_messages(msgs, failure), schema, max_tokens, temperature)
                continue
            self._store(key, completion)
            return value, completion
        raise self._structured_error(failures, stage, label, request.max_tokens)

    def _call_flow(self, request: CompletionRequest, stage: str) -> CallFlow[Completion]:
        """One request, retried with backoff on transient errors; every attempt is accounted."""
        retries = 0
        while True:
            reply = yield Send(request)
            assert reply is not None
            if reply.completion is not None:
                return self._account(reply.completion, stage, reply.seconds)
            self.usage.record_failure(stage, seconds=reply.seconds)
            error = reply.error
            if not isinstance(error, TransientModelError):
                raise error  # type: ignore[misc]
            if not self._retryable(error, retries):
                raise self._exhausted(error, retries + 1) from error
            yield Pause(self.retry.delay(retries))
            retries += 1

    # ------------------------------------------------------------------ drivers: sync and async steps
    def _step(self, command: Send | Pause) -> Reply | None:
        if isinstance(command, Pause):
            time.sleep(command.seconds)
            return None
        started = time.monotonic()
        try:
            completion = self._complete_in_slot(command.request)
        except ModelError as exc:
            return Reply(None, exc, time.monotonic() - started)
        return Reply(completion, None, time.monotonic() - started)

    async def _astep(self, command: Send | Pause) -> Reply | None:
        if isinstance(command, Pause):
            await asyncio.sleep(command.seconds)
            return None
        async with self._async_semaphore():
            started = time.monotonic()
            try:
                # the provider enforces the timeout itself; this is the backstop
                completion = await asyncio.wait_for(self._acomplete(command.request), timeout=self.timeout + 5.0)
            except asyncio.TimeoutError:
                error: ModelError = ModelTimeoutError(f"no reply within {self.timeout:g}s")
            except ModelError as exc:
                error = exc
            else:
                return Reply(completion, None, time.monotonic() - started)
            return Reply(None, error, time.monotonic() - started)

    def _complete_in_slot(self, request: CompletionRequest) -> Completion:
        with self._slots:
            return self._complete(request)

    def _async_semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        semaphore = self._async_slots.get(loop)
        if semaphore is None:
            semaphore = asyncio.Semaphore(self.concurrency)
            self._async_slots[loop] = semaphore
        return semaphore

    # ------------------------------------------------------------------ internals: requests and the cache
    def _request(
        self, msgs: list[ChatMessage], schema: dict[str, Any] | None, max_tokens: int | None, temperature: float
    ) -> CompletionRequest:
        """The request for ``msgs``; the schema goes into the prompt when the provider cannot enforce it."""
        tokens = self.default_max_tokens if max_tokens is None else max_tokens
        if tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {tokens}")
        prompt = msgs if schema is None or self.supports_structured_output else with_schema_instruction(msgs, schema)
        return CompletionRequest(
            messages=tuple(prompt), max_tokens=tokens, temperature=temperature, json_schema=schema, timeout=self.timeout
        )

    def _key(self, msgs: list[ChatMessage], request: CompletionRequest) -> str:
        """The cache key: the caller's messages (not the schema instruction), the schema, the sampling."""
        return cache_key(
            provider=self.provider,
            model=self.model_id,
            messages=msgs,
            schema=request.json_schema,
            params=self._cache_params(request),
        )

    @staticmethod
    def _json_validator(text: str, schema: Mapping[str, Any]) -> Any:
        value = loads_lenient(text)
        try:
            _check_against_schema(value, schema)
        except InvalidOutput as exc:
            raise InvalidOutput(exc.reason, text) from exc
        return value

    def _store(self, key: str, completion: Completion) -> None:
        self.cache.put(
            key,
            CachedResponse(
                text=completion.text,
                prompt_tokens=completion.prompt_tokens,
                completion_tokens=completion.completion_tokens,
                seconds=completion.seconds,
            ),
            provider=self.provider,
            model=self.model_id,
        )

    @staticmethod
    def _from_cache(hit: CachedResponse) -> Completion:
        return Completion(
            text=hit.text,
            prompt_tokens=hit.prompt_tokens,
            completion_tokens=hit.completion_tokens,
            seconds=0.0,
            cached=True,
        )

    def _valid_cache_hit(self, key: str, validate: Callable[[str], T], stage: str) -> tuple[T, Completion] | None:
        hit = self.cache.get(key)
        if hit is None:
            return None
        try:
            value = validate(hit.text)
        except InvalidOutput:
            return None  # stale entry (the model class changed its validators): ask the model again
        self.usage.record_cache_hit(stage, tokens=hit.prompt_tokens + hit.completion_tokens)
        return value, self._from_cache(hit)

    # ------------------------------------------------------------------ internals: errors
    def _structured_error(
        self, failures: list[InvalidOutput], stage: str, label: str, max_tokens: int, *, truncated: bool = False
    ) -> StructuredOutputError:
        last = failures[-1]
        snippet = last.text.strip().replace("\n", " ")
        snippet = snippet[:200] + ("..." if len(snippet) > 200 else "")
        cut = f"; the reply was cut off at max_tokens={max_tokens}" if truncated else ""
        return StructuredOutputError(
            f"{self.provider} model {self.model_id!r} gave no valid {label} in {len(failures)} attempt(s) "
            f"(stage {stage!r}{cut}). Last problem: {last.reason}. Last reply: {snippet!r}. "
            f"Fix: raise max_tokens (now {max_tokens}) if the reply was cut off, simplify the schema, "
            "or configure a stronger model (KAG_LLM_PROVIDER / KAG_LLM_MODEL).",
            truncated=truncated,
        )

    def _retryable(self, exc: TransientModelError, retries_done: int) -> bool:
        if isinstance(exc, ModelTimeoutError) and not self.retry_timeouts:
            return False
        return retries_done < self.retry.max_retries

    def _exhausted(self, exc: TransientModelError, attempts: int) -> ModelError:
        if isinstance(exc, ModelConnectionError):  # nothing answers: every later call would fail too
            return ModelEndpointError(f"{self.provider} model {self.model_id!r}: {exc} (tried {attempts} times)")
        if isinstance(exc, ModelTimeoutError):
            return ModelTimeoutError(
                f"{self.provider} model {self.model_id!r} timed out on {attempts} attempt(s) "
                f"(timeout {self.timeout:g}s): {exc}. Fix: raise KAG_LLM_TIMEOUT, lower max_tokens, "
                "or use a faster model/server."
            )
        return TransientModelError(
            f"{self.provider} model {self.model_id!r} failed on {attempts} attempt(s): {exc}. "
            "Fix: check that the server is up and reachable, or raise KAG_LLM_MAX_RETRIES."
        )

    def _account(self, completion: Completion, stage: str, elapsed: float) -> Completion:
        completion = completion.model_copy(update={"seconds": elapsed, "cached": False})
        self.usage.record_call(
            stage,
            prompt_tokens=completion.prompt_tokens,
            completion_tokens=completion.completion_tokens,
            seconds=elapsed,
        )
        return completion

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model_id={self.model_id!r})"

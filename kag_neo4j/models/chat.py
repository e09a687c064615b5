"""The shared machinery behind every chat LLM provider.

A provider implements one method, :meth:`ChatLLM._complete` (and optionally ``_acomplete``). This
base class adds everything else the :class:`~kag_neo4j.models.base.LLM` protocol promises: the
response cache, per-stage usage accounting, bounded concurrency, timeouts, retries with
exponential backoff on transient errors, and schema-validated structured output with a
repair-and-retry path that ends in a clear :class:`StructuredOutputError`.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
import weakref
from abc import ABC, abstractmethod
from collections.abc import Callable, Generator, Mapping, Sequence
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, Field

from kag_neo4j.errors import (
    ModelConnectionError,
    ModelEndpointError,
    ModelError,
    ModelTimeoutError,
    StructuredOutputError,
    TransientModelError,
)

from .base import ChatMessage
from .cache import CachedResponse, NullCache, ResponseStore, cache_key
from .structured import (
    InvalidOutput,
    json_schema_of,
    loads_lenient,
    parse_object,
    repair_messages,
    with_schema_instruction,
)
from .usage import Usage

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")

MessagesLike = Sequence[ChatMessage | Mapping[str, str]]


class Completion(BaseModel):
    """One reply, with what it cost."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    cached: bool = False
    finish_reason: str | None = None


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


class ChatLLM(ABC):
    """Base class of every chat provider; implements the :class:`~kag_neo4j.models.base.LLM` protocol."""

    provider: ClassVar[str] = "abstract"

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
    def _complete(
        self,
        messages: list[ChatMessage],
        *,
        max_tokens: int,
        temperature: float,
        schema: dict[str, Any] | None,
        timeout: float,
    ) -> Completion:
        """One request to the model. ``schema`` is the requested JSON schema (None for free text);
        when :meth:`_enforces_schema` is false the messages already describe it.

        Raise :class:`TransientModelError` (or :class:`ModelTimeoutError`) for failures worth
        retrying, :class:`ModelError` for the rest.
        """

    async def _acomplete(
        self,
        messages: list[ChatMessage],
        *,
        max_tokens: int,
        temperature: float,
        schema: dict[str, Any] | None,
        timeout: float,
    ) -> Completion:
        """Async variant; by default runs :meth:`_complete` in a worker thread."""
        return await asyncio.to_thread(
            self._complete_in_slot,
            messages,
            max_tokens=max_tokens,
            temperature=temperature,
            schema=schema,
            timeout=timeout,
        )

    def _enforces_schema(self) -> bool:
        """Whether :meth:`_complete` enforces a JSON schema itself (grammar / structured output)."""
        return False

    def _cache_params(self, max_tokens: int, temperature: float) -> dict[str, Any]:
        """Sampling parameters that change the reply (part of the cache key)."""
        return {"max_tokens": max_tokens, "temperature": temperature}

    def close(self) -> None:
        """Release the model or client (optional)."""

    # ------------------------------------------------------------------ LLM protocol
    def generate(
        self,
        messages: MessagesLike,
        *,
        stage: str = "default",
        max_tokens: int | None = None,
        temperature: float = 0.0,
    ) -> str:
        return self.complete(messages, stage=stage, max_tokens=max_tokens, temperature=temperature).text

    async def agenerate(
        self,
        messages: MessagesLike,
        *,
        stage: str = "default",
        max_tokens: int | None = None,
        temperature: float = 0.0,
    ) -> str:
        completion = await self.acomplete(messages, stage=stage, max_tokens=max_tokens, temperature=temperature)
        return completion.text

    def generate_object(
        self,
        messages: MessagesLike,
        response_model: type[M],
        *,
        stage: str = "default",
        max_tokens: int | None = None,
        temperature: float = 0.0,
    ) -> M:
        value, _ = self.complete_object(
            messages, response_model, stage=stage, max_tokens=max_tokens, temperature=temperature
        )
        return value

    async def agenerate_object(
        self,
        messages: MessagesLike,
        response_model: type[M],
        *,
        stage: str = "default",
        max_tokens: int | None = None,
        temperature: float = 0.0,
    ) -> M:
        value, _ = await self.acomplete_object(
            messages, response_model, stage=stage, max_tokens=max_tokens, temperature=temperature
        )
        return value

    # ------------------------------------------------------------------ extensions
    def complete_object(
        self,
        messages: MessagesLike,
        response_model: type[M],
        *,
        stage: str = "default",
        max_tokens: int | None = None,
        temperature: float = 0.0,
    ) -> tuple[M, Completion]:
        """Like :meth:`generate_object`, also returning the valid reply and what it cost."""
        return self._structured(
            coerce_messages(messages),
            json_schema_of(response_model),
            lambda text: parse_object(text, response_model),
            stage=stage,
            max_tokens=max_tokens,
            temperature=temperature,
            label=response_model.__name__,
        )

    async def acomplete_object(
        self,
        messages: MessagesLike,
        response_model: type[M],
        *,
        stage: str = "default",
        max_tokens: int | None = None,
        temperature: float = 0.0,
    ) -> tuple[M, Completion]:
        return await self._astructured(
            coerce_messages(messages),
            json_schema_of(response_model),
            lambda text: parse_object(text, response_model),
            stage=stage,
            max_tokens=max_tokens,
            temperature=temperature,
            label=response_model.__name__,
        )

    def generate_json(
        self,
        messages: MessagesLike,
        schema: Mapping[str, Any],
        *,
        stage: str = "default",
        max_tokens: int | None = None,
        temperature: float = 0.0,
    ) -> tuple[Any, Completion]:
        """Structured output for a raw JSON schema; returns the value and the valid reply."""
        return self._structured(
            coerce_messages(messages),
            dict(schema),
            lambda text: self._json_validator(text, schema),
            stage=stage,
            max_tokens=max_tokens,
            temperature=temperature,
            label="JSON",
        )

    async def agenerate_json(
        self,
        messages: MessagesLike,
        schema: Mapping[str, Any],
        *,
        stage: str = "default",
        max_tokens: int | None = None,
        temperature: float = 0.0,
    ) -> tuple[Any, Completion]:
        return await self._astructured(
            coerce_messages(messages),
            dict(schema),
            lambda text: self._json_validator(text, schema),
            stage=stage,
            max_tokens=max_tokens,
            temperature=temperature,
            label="JSON",
        )

    @staticmethod
    def _json_validator(text: str, schema: Mapping[str, Any]) -> Any:
        value = loads_lenient(text)
        try:
            _check_against_schema(value, schema)
        except InvalidOutput as exc:
            raise InvalidOutput(exc.reason, text) from exc
        return value

    def complete(
        self,
        messages: MessagesLike,
        *,
        stage: str = "default",
        max_tokens: int | None = None,
        temperature: float = 0.0,
    ) -> Completion:
        """Free-text reply with its token counts (cached)."""
        msgs = coerce_messages(messages)
        tokens = self._max_tokens(max_tokens)
        key = self._key(msgs, None, tokens, temperature)
        hit = self.cache.get(key)
        if hit is not None:
            self.usage.record_cache_hit(stage, tokens=hit.prompt_tokens + hit.completion_tokens)
            return self._from_cache(hit)
        completion = self._call(msgs, stage=stage, max_tokens=tokens, temperature=temperature, schema=None)
        self._store(key, completion)
        return completion

    async def acomplete(
        self,
        messages: MessagesLike,
        *,
        stage: str = "default",
        max_tokens: int | None = None,
        temperature: float = 0.0,
    ) -> Completion:
        msgs = coerce_messages(messages)
        tokens = self._max_tokens(max_tokens)
        key = self._key(msgs, None, tokens, temperature)
        hit = self.cache.get(key)
        if hit is not None:
            self.usage.record_cache_hit(stage, tokens=hit.prompt_tokens + hit.completion_tokens)
            return self._from_cache(hit)
        completion = await self._acall(msgs, stage=stage, max_tokens=tokens, temperature=temperature, schema=None)
        self._store(key, completion)
        return completion

    # ------------------------------------------------------------------ internals: cache
    def _max_tokens(self, max_tokens: int | None) -> int:
        tokens = self.default_max_tokens if max_tokens is None else max_tokens
        if tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {tokens}")
        return tokens

    def _key(self, msgs: list[ChatMessage], schema: dict[str, Any] | None, max_tokens: int, temperature: float) -> str:
        return cache_key(
            provider=self.provider,
            model=self.model_id,
            messages=msgs,
            schema=schema,
            params=self._cache_params(max_tokens, temperature),
        )

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

    # ------------------------------------------------------------------ internals: structured
    def _attempts(
        self,
        msgs: list[ChatMessage],
        validate: Callable[[str], T],
        *,
        key: str,
        stage: str,
        label: str,
        max_tokens: int,
    ) -> Generator[list[ChatMessage], Completion, tuple[T, Completion]]:
        """The repair loop shared by the sync and async paths: yields the conversation to send,
        receives the completion, returns the first valid value (stored in the cache)."""
        conversation = msgs
        failures: list[InvalidOutput] = []
        for _ in range(1 + self.max_repairs):
            completion = yield conversation
            try:
                value = validate(completion.text)
            except InvalidOutput as failure:
                failures.append(failure)
                if completion.finish_reason == "length":  # cut off: a repair would be cut off too
                    raise self._structured_error(failures, stage, label, max_tokens, truncated=True) from None
                conversation = repair_messages(msgs, failure)
                continue
            self._store(key, completion)
            return value, completion
        raise self._structured_error(failures, stage, label, max_tokens)

    def _structured(
        self,
        msgs: list[ChatMessage],
        schema: dict[str, Any],
        validate: Callable[[str], T],
        *,
        stage: str,
        max_tokens: int | None,
        temperature: float,
        label: str,
    ) -> tuple[T, Completion]:
        tokens = self._max_tokens(max_tokens)
        key = self._key(msgs, schema, tokens, temperature)
        cached = self._valid_cache_hit(key, validate, stage)
        if cached is not None:
            return cached
        attempts = self._attempts(msgs, validate, key=key, stage=stage, label=label, max_tokens=tokens)
        conversation = next(attempts)
        while True:
            completion = self._call(conversation, stage=stage, max_tokens=tokens, temperature=temperature, schema=schema)
            try:
                conversation = attempts.send(completion)
            except StopIteration as done:
                return done.value

    async def _astructured(
        self,
        msgs: list[ChatMessage],
        schema: dict[str, Any],
        validate: Callable[[str], T],
        *,
        stage: str,
        max_tokens: int | None,
        temperature: float,
        label: str,
    ) -> tuple[T, Completion]:
        tokens = self._max_tokens(max_tokens)
        key = self._key(msgs, schema, tokens, temperature)
        cached = self._valid_cache_hit(key, validate, stage)
        if cached is not None:
            return cached
        attempts = self._attempts(msgs, validate, key=key, stage=stage, label=label, max_tokens=tokens)
        conversation = next(attempts)
        while True:
            completion = await self._acall(
                conversation, stage=stage, max_tokens=tokens, temperature=temperature, schema=schema
            )
            try:
                conversation = attempts.send(completion)
            except StopIteration as done:
                return done.value

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

    # ------------------------------------------------------------------ internals: calls
    def _prepare(self, msgs: list[ChatMessage], schema: dict[str, Any] | None) -> tuple[list[ChatMessage], dict[str, Any] | None]:
        """Add the schema to the prompt when the provider cannot enforce it itself."""
        if schema is None or self._enforces_schema():
            return msgs, schema
        return with_schema_instruction(msgs, schema), schema

    def _complete_in_slot(
        self,
        messages: list[ChatMessage],
        *,
        max_tokens: int,
        temperature: float,
        schema: dict[str, Any] | None,
        timeout: float,
    ) -> Completion:
        with self._slots:
            return self._complete(
                messages, max_tokens=max_tokens, temperature=temperature, schema=schema, timeout=timeout
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

    def _call(
        self,
        msgs: list[ChatMessage],
        *,
        stage: str,
        max_tokens: int,
        temperature: float,
        schema: dict[str, Any] | None,
    ) -> Completion:
        prepared, enforced = self._prepare(msgs, schema)
        retries = 0
        while True:
            started = time.monotonic()
            try:
                completion = self._complete_in_slot(
                    prepared, max_tokens=max_tokens, temperature=temperature, schema=enforced, timeout=self.timeout
                )
            except TransientModelError as exc:
                self.usage.record_failure(stage, seconds=time.monotonic() - started)
                if not self._retryable(exc, retries):
                    raise self._exhausted(exc, retries + 1) from exc
                time.sleep(self.retry.delay(retries))
                retries += 1
                continue
            except ModelError:
                self.usage.record_failure(stage, seconds=time.monotonic() - started)
                raise
            return self._account(completion, stage, time.monotonic() - started)

    async def _acall(
        self,
        msgs: list[ChatMessage],
        *,
        stage: str,
        max_tokens: int,
        temperature: float,
        schema: dict[str, Any] | None,
    ) -> Completion:
        prepared, enforced = self._prepare(msgs, schema)
        slots = self._async_semaphore()
        retries = 0
        while True:
            async with slots:
                started = time.monotonic()
                try:
                    completion = await asyncio.wait_for(
                        self._acomplete(
                            prepared,
                            max_tokens=max_tokens,
                            temperature=temperature,
                            schema=enforced,
                            timeout=self.timeout,
                        ),
                        # the provider enforces the timeout itself; this is the backstop
                        timeout=self.timeout + 5.0,
                    )
                except asyncio.TimeoutError:
                    failure: TransientModelError = ModelTimeoutError(f"no reply within {self.timeout:g}s")
                except TransientModelError as exc:
                    failure = exc
                except ModelError:
                    self.usage.record_failure(stage, seconds=time.monotonic() - started)
                    raise
                else:
                    return self._account(completion, stage, time.monotonic() - started)
                self.usage.record_failure(stage, seconds=time.monotonic() - started)
            if not self._retryable(failure, retries):
                raise self._exhausted(failure, retries + 1) from failure
            await asyncio.sleep(self.retry.delay(retries))
            retries += 1

    def _async_semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        semaphore = self._async_slots.get(loop)
        if semaphore is None:
            semaphore = asyncio.Semaphore(self.concurrency)
            self._async_slots[loop] = semaphore
        return semaphore

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

"""Any OpenAI-compatible server: OpenAI, vLLM, Ollama, DeepSeek, Qwen/DashScope, llama.cpp server...

Configure ``KAG_LLM_PROVIDER=openai``, ``KAG_LLM_BASE_URL``, ``KAG_LLM_MODEL`` and (if the server
wants one) ``KAG_LLM_API_KEY``. Structured output starts with ``response_format=json_schema``; a
server that rejects it is asked with ``json_object`` next, then with the schema in the prompt only
(the mode that worked is remembered). Every reply is validated either way.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any, Literal

from kag_neo4j.errors import (
    ConfigError,
    ModelConnectionError,
    ModelEndpointError,
    ModelError,
    ModelTimeoutError,
    ModelUnavailableError,
    TransientModelError,
)

from .base import ChatMessage, Completion, CompletionRequest
from .chat import ChatLLM, RetryPolicy, estimate_tokens
from .embedding import BatchedEmbedder
from .flow import Flow, adrive, drive
from .registry import KNOWN_DIMENSIONS
from .structured import with_schema_instruction
from .usage import Usage

logger = logging.getLogger(__name__)

StructuredMode = Literal["json_schema", "json_object", "prompt"]
_MODES: tuple[StructuredMode, ...] = ("json_schema", "json_object", "prompt")
_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "structured", "format")


def resolve_api_key(api_key: str | None, base_url: str | None) -> str:
    """The key to send: configured, else ``OPENAI_API_KEY``, else a placeholder for local servers."""
    if api_key:
        return api_key
    env = os.environ.get("OPENAI_API_KEY")
    if env:
        return env
    if base_url:
        return "not-needed"  # vLLM, Ollama and llama.cpp servers accept any key unless told otherwise
    raise ConfigError(
        "KAG_LLM_PROVIDER=openai without KAG_LLM_BASE_URL talks to api.openai.com and needs a key: "
        "set KAG_LLM_API_KEY (or OPENAI_API_KEY), or set KAG_LLM_BASE_URL for a local server"
    )


def translate_error(exc: Exception, *, what: str) -> ModelError:
    """Map an ``openai`` SDK exception to a kag-neo4j error.

    Transient ones (timeouts, 408/409/425/429, 5xx, cannot connect) are retried by the caller;
    a refused key (401/403) or a wrong URL or model name (404) is a
    :class:`ModelEndpointError`: every request would fail the same way, so a load stops on it.
    Connection errors become one too once their retries are used up (:class:`ModelConnectionError`).
    """
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return ModelTimeoutError(f"{what}: the server did not answer in time")
    if isinstance(exc, openai.APIConnectionError):
        return ModelConnectionError(f"{what}: cannot connect ({exc}); check that the server is running and "
                                    "that KAG_LLM_BASE_URL (or KAG_EMBEDDING_BASE_URL) names it")
    if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
        return ModelEndpointError(
            f"{what}: the server refused the API key (HTTP {exc.status_code}: {exc}); set KAG_LLM_API_KEY "
            "(or KAG_EMBEDDING_API_KEY) to a key it accepts"
        )
    if isinstance(exc, openai.NotFoundError):
        return ModelEndpointError(
            f"{what}: not found (HTTP 404: {exc}); check KAG_LLM_MODEL (a model the server serves) and "
            "KAG_LLM_BASE_URL (it usually ends in /v1)"
        )
    if isinstance(exc, openai.APIStatusError):
        if exc.status_code in (408, 409, 425, 429) or exc.status_code >= 500:
            return TransientModelError(f"{what}: HTTP {exc.status_code} ({exc})")
        return ModelError(f"{what}: HTTP {exc.status_code} ({exc})")
    return ModelError(f"{what}: {exc}")


def _mentions(exc: Exception, words: tuple[str, ...]) -> bool:
    text = str(exc).lower()
    return any(word in text for word in words)


class OpenAICompatLLM(ChatLLM):
    """A chat model behind an OpenAI-compatible ``/v1/chat/completions`` endpoint."""

    provider = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        structured_mode: StructuredMode = "json_schema",
        extra_body: dict[str, Any] | None = None,
        **options: Any,
    ) -> None:
        if not model:
            raise ConfigError("KAG_LLM_PROVIDER=openai needs KAG_LLM_MODEL (the model name the server serves)")
        if structured_mode not in _MODES:
            raise ConfigError(f"structured_mode must be one of {_MODES}, got {structured_mode!r}")
        super().__init__(model_id=model, **options)
        self.base_url = base_url
        self._api_key = resolve_api_key(api_key, base_url)
        self.structured_mode: StructuredMode = structured_mode
        self.extra_body = extra_body
        self._token_param = "max_tokens"
        self._clients: dict[str, Any] = {}
        self._init_lock = threading.Lock()

    @property
    def endpoint(self) -> str:
        return self.base_url or "https://api.openai.com/v1"

    # ------------------------------------------------------------------ clients
    def _sdk(self) -> Any:
        try:
            import openai
        except ImportError as exc:  # pragma: no cover - openai is a dependency
            raise ModelUnavailableError("the openai provider needs the openai package: pip install openai") from exc
        return openai

    def client(self) -> Any:
        return self._client_of("OpenAI")

    def aclient(self) -> Any:
        return self._client_of("AsyncOpenAI")

    def _client_of(self, kind: Literal["OpenAI", "AsyncOpenAI"]) -> Any:
        """The SDK client of ``kind`` (made once; the SDK's own retries are off: ours run)."""
        with self._init_lock:
            if kind not in self._clients:
                make = self._sdk().OpenAI if kind == "OpenAI" else self._sdk().AsyncOpenAI
                self._clients[kind] = make(base_url=self.base_url, api_key=self._api_key, timeout=self.timeout,
                                           max_retries=0)
            return self._clients[kind]

    def close(self) -> None:
        client = self._clients.pop("OpenAI", None)
        if client is not None:
            client.close()

    # ------------------------------------------------------------------ ChatLLM hooks
    @property
    def supports_structured_output(self) -> bool:
        return self.structured_mode == "json_schema"

    @property
    def supports_async(self) -> bool:
        return True  # AsyncOpenAI

    def _complete(self, request: CompletionRequest) -> Completion:
        return drive(self._exchange(request), lambda body: self.client().chat.completions.create(**body))

    async def _acomplete(self, request: CompletionRequest) -> Completion:
        return await adrive(self._exchange(request), lambda body: self.aclient().chat.completions.create(**body))

    def _exchange(self, request: CompletionRequest) -> Flow[dict[str, Any], Any, Completion]:
        """One request: yields the ``chat.completions.create`` arguments, receives the response (an SDK
        error is thrown in); after a 400 it switches to a format the server accepts and asks again."""
        what = f"{self.model_id} at {self.endpoint}"
        schema = request.json_schema
        messages = list(request.messages)
        for _ in range(len(_MODES) + 1):
            enforced = self.supports_structured_output
            try:
                response = yield self._body(messages, request)
            except Exception as exc:
                if self._adapt(exc, schema):
                    messages = self._messages_for_mode(messages, schema, enforced)
                    continue
                if isinstance(exc, ModelError):
                    raise
                raise translate_error(exc, what=what) from exc
            return self._completion(response, messages)
        raise ModelError(f"{what}: the server rejected every request format")

    def _body(self, messages: list[ChatMessage], request: CompletionRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model_id,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "temperature": request.temperature,
            self._token_param: request.max_tokens,
            "timeout": request.timeout,
        }
        if self.extra_body:
            body["extra_body"] = self.extra_body
        schema = request.json_schema
        if schema is not None and self.structured_mode == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": str(schema.get("title") or "response")[:64], "schema": schema, "strict": False},
            }
        elif schema is not None and self.structured_mode == "json_object":
            body["response_format"] = {"type": "json_object"}
        return body

    def _adapt(self, exc: Exception, schema: dict[str, Any] | None) -> bool:
        """After a 400: switch to a mode/parameter the server accepts. True when a retry makes sense."""
        import openai

        if not isinstance(exc, openai.BadRequestError | openai.UnprocessableEntityError):
            return False
        if self._token_param == "max_tokens" and _mentions(exc, ("max_tokens", "max_completion_tokens")):
            self._token_param = "max_completion_tokens"
            return True
        if schema is not None and self.structured_mode != "prompt" and _mentions(exc, _FORMAT_WORDS):
            following = _MODES[_MODES.index(self.structured_mode) + 1]
            logger.warning(
                "%s at %s rejected response_format=%s; using %s from now on",
                self.model_id, self.endpoint, self.structured_mode, following,
            )
            self.structured_mode = following
            return True
        return False

    def _messages_for_mode(
        self, messages: list[ChatMessage], schema: dict[str, Any] | None, was_enforced: bool
    ) -> list[ChatMessage]:
        # the base class left the schema out of the prompt while json_schema was in force
        if schema is not None and was_enforced and not self.supports_structured_output:
            return with_schema_instruction(messages, schema)
        return messages

    @staticmethod
    def _completion(response: Any, messages: list[ChatMessage]) -> Completion:
        if not response.choices:
            raise TransientModelError("the server returned no choices")
        choice = response.choices[0]
        text = choice.message.content or ""
        counted = dict(response.usage) if response.usage else {}  # the fields the server sent
        prompt_tokens, completion_tokens = counted.get("prompt_tokens"), counted.get("completion_tokens")
        return Completion(
            text=text,
            prompt_tokens=prompt_tokens if prompt_tokens is not None else sum(estimate_tokens(m.content) for m in messages),
            completion_tokens=completion_tokens if completion_tokens is not None else estimate_tokens(text),
            finish_reason=choice.finish_reason,
        )


class OpenAIEmbedder(BatchedEmbedder):
    """Embeddings from an OpenAI-compatible ``/v1/embeddings`` endpoint."""

    provider = "openai"

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        dimensions: int | None = None,
        batch_size: int = 32,
        timeout: float = 120.0,
        retry: RetryPolicy | None = None,
        usage: Usage | None = None,
    ) -> None:
        name = model or "text-embedding-3-small"
        super().__init__(
            model_id=name, dimension=dimensions or KNOWN_DIMENSIONS.get(name), batch_size=batch_size, usage=usage
        )
        self.base_url = base_url
        self.request_dimensions = dimensions
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self._api_key = resolve_api_key(api_key, base_url)
        self._client: Any = None

    def client(self) -> Any:
        if self._client is None:
            import openai

            self._client = openai.OpenAI(base_url=self.base_url, api_key=self._api_key, timeout=self.timeout, max_retries=0)
        return self._client

    def _embed(self, texts: list[str], *, query: bool) -> list[list[float]]:
        import time

        if not texts:
            return []
        request: dict[str, Any] = {"model": self.model_id, "input": texts}
        if self.request_dimensions:
            request["dimensions"] = self.request_dimensions
        what = f"embedding model {self.model_id} at {self.base_url or 'api.openai.com'}"
        retries = 0
        while True:
            try:
                response = self.client().embeddings.create(**request)
                return [item.embedding for item in sorted(response.data, key=lambda item: item.index)]
            except Exception as exc:
                error = translate_error(exc, what=what)
                if isinstance(error, ModelConnectionError) and retries >= self.retry.max_retries:
                    raise ModelEndpointError(f"{error} (tried {retries + 1} times)") from exc
                if not isinstance(error, TransientModelError) or retries >= self.retry.max_retries:
                    raise error from exc
                time.sleep(self.retry.delay(retries))
                retries += 1

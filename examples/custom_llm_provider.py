"""A custom LLM provider: a chat model behind a plain JSON-over-HTTP API, in one class and one call.

The provider implements the one hook, ``_complete(CompletionRequest) -> Completion``; the base class
``ChatLLM`` adds the response cache, usage accounting, retries of transient errors, concurrency
limits, structured output with validation and repair, and the async methods. Registered with
``register_llm_provider``, it is built by ``build_llm`` and every CLI command from
``KAG_LLM_PROVIDER=plain_http``.

Run it (it starts the package's own fake endpoint on 127.0.0.1 and extracts one sentence)::

    python examples/custom_llm_provider.py
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from kag_neo4j.config import Settings
from kag_neo4j.errors import (
    ConfigError,
    ModelConnectionError,
    ModelEndpointError,
    ModelError,
    ModelTimeoutError,
    TransientModelError,
)
from kag_neo4j.models import build_llm
from kag_neo4j.models.base import Completion, CompletionRequest
from kag_neo4j.models.chat import ChatLLM, estimate_tokens
from kag_neo4j.models.fake_endpoint import FakeEndpoint
from kag_neo4j.models.providers import LLMOptions, llm_provider_names, register_llm_provider
from kag_neo4j.prompts.extract import ExtractionResponse, build_extract_messages

NAME = "plain_http"


class PlainHTTPLLM(ChatLLM):
    """POSTs ``{"model", "messages", "max_tokens", "temperature"}`` to ``<base_url>/chat/completions``."""

    provider = NAME

    def __init__(self, base_url: str, *, model_id: str, **options: Any) -> None:
        super().__init__(model_id=model_id, **options)
        self.base_url = base_url.rstrip("/")

    # supports_structured_output stays False: the base class puts the JSON schema into the prompt
    # and validates (and repairs) every reply.

    def _complete(self, request: CompletionRequest) -> Completion:
        body = json.dumps({
            "model": self.model_id,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
        }).encode()
        http = urllib.request.Request(f"{self.base_url}/chat/completions", data=body,
                                      headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(http, timeout=request.timeout) as response:
                reply = json.load(response)
        except urllib.error.HTTPError as exc:  # a status: retry 429/5xx, stop on the rest
            if exc.code == 429 or exc.code >= 500:
                raise TransientModelError(f"{self.base_url}: HTTP {exc.code}") from exc
            if exc.code in (401, 403, 404):
                raise ModelEndpointError(f"{self.base_url}: HTTP {exc.code}; check the URL, model and key") from exc
            raise ModelError(f"{self.base_url}: HTTP {exc.code}") from exc
        except TimeoutError as exc:  # no reply in time: retried
            raise ModelTimeoutError(f"{self.base_url}: no reply within {request.timeout:g}s") from exc
        except (urllib.error.URLError, OSError) as exc:  # nothing answers: retried, then the run stops
            raise ModelConnectionError(f"{self.base_url}: {exc}") from exc
        choice = reply["choices"][0]
        text = choice["message"]["content"] or ""
        usage = reply.get("usage") or {}
        return Completion(
            text=text,
            prompt_tokens=usage.get("prompt_tokens", sum(estimate_tokens(m.content) for m in request.messages)),
            completion_tokens=usage.get("completion_tokens", estimate_tokens(text)),
            finish_reason=choice.get("finish_reason"),
        )


def build_plain_http(settings: Settings, options: LLMOptions) -> PlainHTTPLLM:
    if not settings.llm_base_url:
        raise ConfigError(f"KAG_LLM_PROVIDER={NAME} needs KAG_LLM_BASE_URL (the API root, e.g. http://host:8000/v1)")
    return PlainHTTPLLM(settings.llm_base_url, model_id=settings.llm_model or NAME, **options.as_kwargs())


def register() -> None:
    """Make ``KAG_LLM_PROVIDER=plain_http`` buildable (call it before the settings are used)."""
    if NAME not in llm_provider_names():
        register_llm_provider(NAME, build_plain_http)


def main() -> ExtractionResponse:
    register()
    with FakeEndpoint() as endpoint:
        llm = build_llm(Settings(llm_provider=NAME, llm_base_url=endpoint.url, llm_model="fake", no_cache=True))
        messages = build_extract_messages("Ada Lovelace worked with Charles Babbage in London.", title="Ada")
        extraction = llm.generate_object(messages, ExtractionResponse, stage="extract", max_tokens=512)
        print("entities:", ", ".join(entity.name for entity in extraction.entities))
        print("usage:", llm.usage.stage("extract").model_dump(include={"calls", "prompt_tokens", "completion_tokens"}))
        return extraction


if __name__ == "__main__":
    main()

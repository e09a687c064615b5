"""The OpenAI-compatible provider against a small local HTTP server (no network, no mocks of the SDK)."""

from __future__ import annotations

import asyncio
import http.server
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from models_testkit import GOOD, PROMPT, Extraction

from kag_neo4j.errors import (
    ConfigError,
    ModelEndpointError,
    ModelError,
    ModelTimeoutError,
    TransientModelError,
)
from kag_neo4j.models.chat import RetryPolicy
from kag_neo4j.models.openai_compat import (
    OpenAICompatLLM,
    OpenAIEmbedder,
    resolve_api_key,
)


def chat_body(content: str, prompt_tokens: int = 11, completion_tokens: int = 5) -> dict[str, Any]:
    return {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens},
    }


@dataclass
class Reply:
    status: int = 200
    body: dict[str, Any] = field(default_factory=lambda: chat_body("ok"))
    delay: float = 0.0


@dataclass
class Stub:
    url: str
    replies: list[Reply]
    requests: list[dict[str, Any]]
    headers: list[dict[str, str]]


@pytest.fixture
def stub() -> Iterator[Stub]:
    replies: list[Reply] = []
    requests: list[dict[str, Any]] = []
    headers: list[dict[str, str]] = []
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with lock:
                requests.append({"path": self.path, **body})
                headers.append({k.lower(): v for k, v in self.headers.items()})
                reply = replies.pop(0) if replies else Reply()
            if reply.delay:
                time.sleep(reply.delay)
            data = json.dumps(reply.body).encode()
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield Stub(f"http://127.0.0.1:{server.server_address[1]}/v1", replies, requests, headers)
    server.shutdown()
    server.server_close()


def _llm(stub: Stub, **options: Any) -> OpenAICompatLLM:
    options.setdefault("retry", RetryPolicy(max_retries=2, base_delay=0.0))
    return OpenAICompatLLM("qwen2.5:1.5b", base_url=stub.url, **options)


def test_text_generation_reports_usage(stub: Stub) -> None:
    stub.replies.append(Reply(body=chat_body("Madrid", 21, 2)))
    llm = _llm(stub, api_key="secret")
    assert llm.generate(PROMPT, stage="answer", max_tokens=50, temperature=0.2) == "Madrid"
    (request,) = stub.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["model"] == "qwen2.5:1.5b"
    assert request["max_tokens"] == 50 and request["temperature"] == 0.2
    assert [m["role"] for m in request["messages"]] == ["system", "user"]
    assert stub.headers[0]["authorization"] == "Bearer secret"
    usage = llm.usage.stage("answer")
    assert (usage.calls, usage.prompt_tokens, usage.completion_tokens) == (1, 21, 2)


def test_structured_output_uses_json_schema(stub: Stub) -> None:
    stub.replies.append(Reply(body=chat_body(json.dumps(GOOD))))
    llm = _llm(stub)
    assert llm.generate_object(PROMPT, Extraction).entities == GOOD["entities"]
    request = stub.requests[0]
    assert request["response_format"]["type"] == "json_schema"
    assert request["response_format"]["json_schema"]["schema"] == Extraction.model_json_schema()
    assert "JSON schema" not in request["messages"][0]["content"]


def test_server_without_json_schema_falls_back_to_json_object_then_prompt(stub: Stub) -> None:
    rejected = {"error": {"message": "response_format json_schema is not supported", "type": "invalid_request_error"}}
    stub.replies += [
        Reply(400, rejected),
        Reply(400, {"error": {"message": "unknown field response_format"}}),
        Reply(body=chat_body("Here: " + json.dumps(GOOD))),
        Reply(body=chat_body(json.dumps(GOOD))),
    ]
    llm = _llm(stub)
    assert llm.generate_object(PROMPT, Extraction).entities == GOOD["entities"]
    first, second, third = stub.requests[:3]
    assert first["response_format"]["type"] == "json_schema"
    assert second["response_format"] == {"type": "json_object"}
    assert "response_format" not in third
    assert '"triples"' in second["messages"][0]["content"]  # schema moved into the prompt
    assert llm.structured_mode == "prompt"
    # remembered: the next structured request goes straight to prompt mode
    llm.generate_object(PROMPT[1:], Extraction)
    assert "response_format" not in stub.requests[3]
    assert '"triples"' in stub.requests[3]["messages"][0]["content"]


def test_max_completion_tokens_fallback(stub: Stub) -> None:
    stub.replies += [Reply(400, {"error": {"message": "Unsupported parameter: 'max_tokens'. Use 'max_completion_tokens'."}})]
    llm = _llm(stub)
    assert llm.generate(PROMPT, max_tokens=9) == "ok"
    assert stub.requests[1]["max_completion_tokens"] == 9 and "max_tokens" not in stub.requests[1]


def test_server_errors_are_retried(stub: Stub) -> None:
    stub.replies += [Reply(503, {"error": {"message": "overloaded"}}), Reply(429, {"error": {"message": "slow down"}})]
    llm = _llm(stub)
    assert llm.generate(PROMPT) == "ok"
    assert len(stub.requests) == 3
    assert llm.usage.total().failures == 2


def test_retries_run_out(stub: Stub) -> None:
    stub.replies += [Reply(500, {"error": {"message": "boom"}})] * 3
    with pytest.raises(TransientModelError, match="3 attempt"):
        _llm(stub).generate(PROMPT)


def test_auth_errors_are_not_retried(stub: Stub) -> None:
    stub.replies.append(Reply(401, {"error": {"message": "invalid key"}}))
    with pytest.raises(ModelError, match="KAG_LLM_API_KEY"):
        _llm(stub).generate(PROMPT)
    assert len(stub.requests) == 1


def test_unknown_model_names_the_settings(stub: Stub) -> None:
    stub.replies.append(Reply(404, {"error": {"message": "model not found"}}))
    with pytest.raises(ModelError, match="KAG_LLM_MODEL"):
        _llm(stub).generate(PROMPT)


def test_slow_server_times_out(stub: Stub) -> None:
    stub.replies += [Reply(delay=4.0), Reply(delay=4.0)]
    llm = _llm(stub, timeout=0.2, retry=RetryPolicy(max_retries=1, base_delay=0.0))
    started = time.monotonic()
    with pytest.raises(ModelTimeoutError, match="2 attempt"):
        llm.generate(PROMPT)
    assert time.monotonic() - started < 3.0  # without the timeout: at least 8 s


def test_unreachable_server_is_retried_then_fatal(stub: Stub) -> None:
    llm = OpenAICompatLLM("m", base_url="http://127.0.0.1:9/v1", retry=RetryPolicy(max_retries=1, base_delay=0.0), timeout=2)
    with pytest.raises(ModelEndpointError, match=r"127\.0\.0\.1:9/v1: cannot connect.*KAG_LLM_BASE_URL.*tried 2 times"):
        llm.generate(PROMPT)
    assert llm.usage.total().failures == 2


@pytest.mark.parametrize(("status", "setting"), [(401, "KAG_LLM_API_KEY"), (403, "KAG_LLM_API_KEY"), (404, "KAG_LLM_MODEL")])
def test_refusals_that_every_call_would_get_are_endpoint_errors(stub: Stub, status: int, setting: str) -> None:
    stub.replies.append(Reply(status, {"error": {"message": "no"}}))
    with pytest.raises(ModelEndpointError, match=f"{stub.url}.*{setting}"):
        _llm(stub).generate(PROMPT)
    assert len(stub.requests) == 1


def test_server_errors_stay_transient_not_endpoint_errors(stub: Stub) -> None:
    stub.replies += [Reply(500, {"error": {"message": "boom"}})] * 3
    with pytest.raises(TransientModelError) as caught:
        _llm(stub).generate(PROMPT)
    assert not isinstance(caught.value, ModelEndpointError)


def test_unreachable_embedding_server_is_an_endpoint_error() -> None:
    embedder = OpenAIEmbedder("e", base_url="http://127.0.0.1:9/v1", retry=RetryPolicy(max_retries=1, base_delay=0.0),
                              timeout=2, dimensions=4)
    with pytest.raises(ModelEndpointError, match="cannot connect.*tried 2 times"):
        embedder.embed_documents(["x"])


def test_async_path(stub: Stub) -> None:
    stub.replies += [Reply(503, {"error": {"message": "x"}}), Reply(body=chat_body(json.dumps(GOOD)))]
    llm = _llm(stub)
    result = asyncio.run(llm.agenerate_object(PROMPT, Extraction))
    assert result.entities == GOOD["entities"]
    assert len(stub.requests) == 2


def test_api_key_resolution(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_api_key("k", None) == "k"
    assert resolve_api_key(None, "http://localhost:8000/v1") == "not-needed"
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    assert resolve_api_key(None, None) == "from-env"
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(ConfigError, match="KAG_LLM_BASE_URL"):
        resolve_api_key(None, None)


def test_embeddings_are_batched_and_ordered(stub: Stub) -> None:
    def embedding_body(count: int, offset: int) -> dict[str, Any]:
        data = [{"object": "embedding", "index": i, "embedding": [float(offset + i), 0.0, 1.0]} for i in range(count)]
        return {"object": "list", "data": list(reversed(data)), "model": "e", "usage": {"prompt_tokens": 1, "total_tokens": 1}}

    stub.replies += [Reply(body=embedding_body(2, 0)), Reply(body=embedding_body(1, 2)), Reply(body=embedding_body(1, 9))]
    embedder = OpenAIEmbedder("nomic-embed-text", base_url=stub.url, dimensions=3, batch_size=2)
    assert embedder.dimension == 3
    vectors = embedder.embed_documents(["a", "b", "c"])
    assert [v[0] for v in vectors] == [0.0, 1.0, 2.0]
    assert stub.requests[0]["input"] == ["a", "b"] and stub.requests[0]["dimensions"] == 3
    assert embedder.embed_query("q")[0] == 9.0


def test_embedding_dimension_mismatch_is_reported(stub: Stub) -> None:
    stub.replies.append(Reply(body={"object": "list", "model": "e", "data": [{"object": "embedding", "index": 0, "embedding": [1.0, 2.0]}], "usage": {"prompt_tokens": 1, "total_tokens": 1}}))
    embedder = OpenAIEmbedder("text-embedding-3-small", base_url=stub.url)
    with pytest.raises(ModelError, match="2-d vector, expected 1536"):
        embedder.embed_query("q")

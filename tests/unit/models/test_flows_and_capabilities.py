"""The request flows run the same under the sync and the async driver; capabilities are declared;
the embedder list lives in the provider registry with the LLM list."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError

from kag_neo4j.config import Settings
from kag_neo4j.errors import ModelError, TransientModelError
from kag_neo4j.models import build_embedder, embedder_dimension
from kag_neo4j.models.base import LLM, CompletionRequest
from kag_neo4j.models.chat import Pause, Send
from kag_neo4j.models.flow import adrive, drive
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.models.providers import embedder_provider_names, register_embedder_provider
from kag_neo4j.models.scripted import ScriptedLLM


def _flow(log: list[str]):  # type: ignore[no-untyped-def]
    try:
        first = yield "a"
    except ValueError as exc:
        log.append(f"thrown {exc}")
        first = "recovered"
    second = yield "b"
    return f"{first}+{second}"


def _step(command: str) -> str:
    if command == "a":
        raise ValueError("boom")
    return command.upper()


async def _astep(command: str) -> str:
    await asyncio.sleep(0)
    return _step(command)


def test_sync_and_async_drivers_feed_replies_and_throw_errors_alike() -> None:
    sync_log: list[str] = []
    async_log: list[str] = []
    assert drive(_flow(sync_log), _step) == "recovered+B"
    assert asyncio.run(adrive(_flow(async_log), _astep)) == "recovered+B"
    assert sync_log == async_log == ["thrown boom"]


def test_a_flow_that_finishes_at_once_needs_no_step() -> None:
    def cached():  # type: ignore[no-untyped-def]
        return "hit"
        yield  # pragma: no cover - makes it a generator

    assert drive(cached(), _step) == "hit"


class Answer(BaseModel):
    answer: str


def test_one_call_flow_yields_requests_and_pauses_in_order() -> None:
    llm = ScriptedLLM([TransientModelError("busy"), '{"answer": 1}', '{"answer": "x"}'])
    flow = llm._model_flow([{"role": "user", "content": "q"}], Answer, stage="t", max_tokens=50)
    commands = []
    command = next(flow)
    try:
        while True:
            commands.append(type(command).__name__)
            command = flow.send(llm._step(command))
    except StopIteration as done:
        value, completion = done.value
    assert value == Answer(answer="x") and not completion.cached
    # a transient error, its backoff, a schema violation and its repair
    assert commands == ["Send", "Pause", "Send", "Send"]
    assert isinstance(Send(CompletionRequest(messages=(), max_tokens=1)).request, CompletionRequest)
    assert Pause(0.5).seconds == 0.5


def test_the_hook_gets_one_request_with_the_schema_in_the_prompt_when_not_enforced() -> None:
    prompted = ScriptedLLM(['{"answer": "a"}'])
    enforced = ScriptedLLM(['{"answer": "a"}'], enforce_schema=True)
    for llm in (prompted, enforced):
        llm.generate_object([{"role": "user", "content": "q"}], Answer, max_tokens=40, temperature=0.5)
    assert not prompted.supports_structured_output and enforced.supports_structured_output
    for llm in (prompted, enforced):
        call = llm.calls[0]
        assert (call.max_tokens, call.temperature) == (40, 0.5)
        assert call.schema_ is not None and call.schema_["title"] == "Answer"
    assert "JSON schema" in prompted.calls[0].messages[0].content
    assert [m.role for m in enforced.calls[0].messages] == ["user"]


def test_capabilities_and_usage_are_declared_on_the_protocol() -> None:
    llm = ScriptedLLM(["x"])
    assert isinstance(llm, LLM)
    assert llm.supports_async is False and llm.model_path is None and llm.last_perf() is None
    llm.load()  # nothing to load: a no-op, no probe needed
    llm.generate([{"role": "user", "content": "q"}], stage="s")
    assert llm.usage.by_stage()["s"].calls == 1
    with pytest.raises(ModelError):
        llm.generate([{"role": "user", "content": "again"}])  # the script is used up


def test_embedders_come_from_the_one_registry(tmp_path: Path) -> None:
    assert embedder_provider_names()[:4] == ("e5", "sentence-transformers", "openai", "hashing")
    with pytest.raises(ValidationError, match="unknown KAG_EMBEDDER 'tiny_test'.*e5, sentence-transformers"):
        Settings(home=tmp_path, embedder="tiny_test")
    register_embedder_provider(
        "tiny_test", lambda settings, usage: HashingEmbedder(12, usage=usage), dimension=lambda settings: 12, replace=True
    )
    settings = Settings(home=tmp_path, embedder="tiny_test")
    assert embedder_dimension(settings) == 12
    assert len(build_embedder(settings).embed_query("a text")) == 12

"""The shared ChatLLM machinery, driven through the scripted test double."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest
from models_testkit import GOOD, PROMPT, Extraction

from kag_neo4j.errors import (
    ModelError,
    ModelTimeoutError,
    StructuredOutputError,
    TransientModelError,
)
from kag_neo4j.models import ResponseCache, ScriptedLLM, Usage
from kag_neo4j.models.base import REPETITION, ChatMessage, Completion, CompletionRequest
from kag_neo4j.models.chat import ChatLLM, RetryPolicy, coerce_messages

FAST = RetryPolicy(max_retries=2, base_delay=0.0)


# ---------------------------------------------------------------- structured output
def test_generate_object_returns_a_validated_object() -> None:
    llm = ScriptedLLM([GOOD])
    result = llm.generate_object(PROMPT, Extraction, stage="extract")
    assert isinstance(result, Extraction)
    assert result.triples[0].object == "Real Madrid"
    # the scripted double cannot enforce a schema, so the schema went into the prompt
    sent = llm.calls[0].messages
    assert sent[0].role == "system" and '"triples"' in sent[0].content
    assert llm.calls[0].schema_ is not None


def test_enforcing_providers_get_the_schema_not_a_prompt_instruction() -> None:
    llm = ScriptedLLM([GOOD], enforce_schema=True)
    llm.generate_object(PROMPT, Extraction)
    assert llm.calls[0].messages == PROMPT
    assert llm.calls[0].schema_ == Extraction.model_json_schema()


def test_schema_violation_is_repaired_with_the_error_shown_to_the_model() -> None:
    bad = {"entities": [], "triples": [{"subject": "x"}]}
    llm = ScriptedLLM([bad, "```json\n" + '{"entities": ["A"], "triples": []}' + "\n```"])
    result = llm.generate_object(PROMPT, Extraction, stage="extract")
    assert result.entities == ["A"]
    assert len(llm.calls) == 2
    repair = llm.calls[1].messages
    assert repair[-2].role == "assistant" and '"subject": "x"' in repair[-2].content
    assert repair[-1].role == "user" and "triples.0.predicate" in repair[-1].content
    assert llm.usage.stage("extract").calls == 2


def test_persistent_violation_ends_in_a_clear_error_never_an_empty_result() -> None:
    llm = ScriptedLLM(["not json", '{"entities": []}', "{}"], max_repairs=2)
    with pytest.raises(StructuredOutputError) as info:
        llm.generate_object(PROMPT, Extraction, stage="extract", max_tokens=64)
    message = str(info.value)
    assert "3 attempt(s)" in message and "Extraction" in message and "'extract'" in message
    assert "max_tokens (now 64)" in message
    assert len(llm.calls) == 3


def test_a_reply_cut_off_at_max_tokens_is_not_repaired_but_reported_as_truncated() -> None:
    long_reply = {"entities": [{"name": "n" * 30, "type": "Thing"}] * 20}
    llm = ScriptedLLM([long_reply, GOOD], max_repairs=2)
    with pytest.raises(StructuredOutputError) as info:
        llm.generate_object(PROMPT, Extraction, stage="extract", max_tokens=50)
    assert info.value.truncated and "cut off at max_tokens=50" in str(info.value)
    assert len(llm.calls) == 1 and llm.remaining == 1
    with pytest.raises(StructuredOutputError) as again:
        asyncio.run(ScriptedLLM([long_reply]).agenerate_object(PROMPT, Extraction, max_tokens=50))
    assert again.value.truncated
    with pytest.raises(StructuredOutputError) as invalid:
        ScriptedLLM(["not json"], max_repairs=0).generate_object(PROMPT, Extraction)
    assert not invalid.value.truncated


class _Looping(ChatLLM):
    """A provider whose replies were stopped by its loop guard (``finish_reason`` ``repetition``)."""

    provider = "looping"

    def __init__(self, text: str) -> None:
        super().__init__(model_id="looping")
        self.text = text
        self.calls = 0

    def _complete(self, request: CompletionRequest) -> Completion:
        self.calls += 1
        return Completion(text=self.text, completion_tokens=40, finish_reason=REPETITION)


def test_a_reply_stopped_in_a_loop_keeps_what_came_before_the_loop() -> None:
    triple = '{"subject": "Ronaldo", "predicate": "played for", "object": "Real Madrid"}'
    llm = _Looping('{"entities": ["Ronaldo", "Real Madrid"], "triples": [' + f"{triple}, " * 3 + '{"subject": "Ron')
    value = llm.generate_object(PROMPT, Extraction, stage="extract")
    assert value.entities == ["Ronaldo", "Real Madrid"] and len(value.triples) == 3
    assert llm.calls == 1 and llm.usage.by_stage()["extract"].completion_tokens == 40


def test_a_loop_with_nothing_valid_before_it_is_reported_as_cut_off_not_repaired() -> None:
    llm = _Looping('{"entities": [], "triples": [{"subject": "Ronaldo", "predi')  # entities must not be empty
    with pytest.raises(StructuredOutputError) as info:
        llm.generate_object(PROMPT, Extraction, stage="extract", max_tokens=64)
    assert info.value.truncated and llm.calls == 1


def test_max_repairs_zero_means_one_attempt() -> None:
    llm = ScriptedLLM(["nope", GOOD], max_repairs=0)
    with pytest.raises(StructuredOutputError, match="1 attempt"):
        llm.generate_object(PROMPT, Extraction)
    assert llm.remaining == 1


def test_empty_reply_is_repaired() -> None:
    llm = ScriptedLLM(["", GOOD])
    assert llm.generate_object(PROMPT, Extraction).entities
    assert "empty" in llm.calls[1].messages[-1].content


def test_generate_json_with_a_raw_schema() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    llm = ScriptedLLM(['{"m": 1}', '{"n": "x"}', '{"n": 3}'])
    value, completion = llm.generate_json([ChatMessage(role="user", content="n?")], schema)
    assert value == {"n": 3}
    assert completion.text == '{"n": 3}'
    assert len(llm.calls) == 3


# ---------------------------------------------------------------- cache
def test_second_identical_call_is_a_cache_hit_with_zero_model_time(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "r.sqlite")
    llm = ScriptedLLM([GOOD], cache=cache, delay=0.05)
    first = llm.generate_object(PROMPT, Extraction, stage="extract")
    again = llm.generate_object(PROMPT, Extraction, stage="extract")
    assert again == first
    assert len(llm.calls) == 1
    stage = llm.usage.stage("extract")
    assert (stage.calls, stage.cache_hits) == (1, 1)
    assert stage.cached_tokens == stage.total_tokens > 0, "a hit counts what the response cost when computed"
    assert stage.seconds >= 0.05
    seconds_after_first = stage.seconds
    _, completion = llm.complete_object(PROMPT, Extraction, stage="extract")
    assert completion.cached and completion.seconds == 0.0
    assert llm.usage.stage("extract").seconds == seconds_after_first


def test_cache_survives_a_new_process_like_instance(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    ScriptedLLM(["hello"], cache=ResponseCache(path)).generate(PROMPT)
    fresh = ScriptedLLM([], cache=ResponseCache(path))  # no responses: a miss would raise
    assert fresh.generate(PROMPT) == "hello"
    assert fresh.usage.total().cache_hits == 1


def test_only_valid_structured_replies_are_cached(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "r.sqlite")
    llm = ScriptedLLM(["garbage", GOOD], cache=cache)
    llm.generate_object(PROMPT, Extraction)
    assert len(cache) == 1
    assert ScriptedLLM([], cache=cache).generate_object(PROMPT, Extraction).entities == GOOD["entities"]


def test_text_and_object_requests_do_not_share_entries(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "r.sqlite")
    llm = ScriptedLLM(["plain text", GOOD], cache=cache)
    assert llm.generate(PROMPT) == "plain text"
    assert llm.generate_object(PROMPT, Extraction).entities  # not served the text entry
    assert len(llm.calls) == 2


def test_parameters_are_part_of_the_key(tmp_path: Path) -> None:
    llm = ScriptedLLM(["a", "b", "c"], cache=ResponseCache(tmp_path / "r.sqlite"))
    assert llm.generate(PROMPT, max_tokens=10) == "a"
    assert llm.generate(PROMPT, max_tokens=11) == "b"
    assert llm.generate(PROMPT, max_tokens=10, temperature=0.7) == "c"
    assert llm.generate(PROMPT, max_tokens=10) == "a"


def test_stage_is_not_part_of_the_key(tmp_path: Path) -> None:
    llm = ScriptedLLM(["a"], cache=ResponseCache(tmp_path / "r.sqlite"))
    llm.generate(PROMPT, stage="plan")
    assert llm.generate(PROMPT, stage="judge") == "a"
    assert llm.usage.stage("judge").cache_hits == 1


def test_without_a_cache_every_call_reaches_the_model() -> None:
    llm = ScriptedLLM(["a", "b"])
    assert [llm.generate(PROMPT), llm.generate(PROMPT)] == ["a", "b"]


# ---------------------------------------------------------------- retries and timeouts
def test_transient_errors_are_retried_with_backoff() -> None:
    llm = ScriptedLLM(
        [TransientModelError("503"), TransientModelError("reset"), "ok"],
        retry=RetryPolicy(max_retries=2, base_delay=0.02, jitter=0.0),
    )
    started = time.monotonic()
    assert llm.generate(PROMPT, stage="s") == "ok"
    assert time.monotonic() - started >= 0.06  # 0.02 + 0.04
    usage = llm.usage.stage("s")
    assert (usage.calls, usage.failures) == (1, 2)


def test_retries_are_bounded() -> None:
    llm = ScriptedLLM([TransientModelError("503")] * 3 + ["never"], retry=FAST)
    with pytest.raises(TransientModelError, match="failed on 3 attempt"):
        llm.generate(PROMPT)
    assert llm.remaining == 1


def test_permanent_errors_are_not_retried() -> None:
    llm = ScriptedLLM([ModelError("bad key"), "never"], retry=FAST)
    with pytest.raises(ModelError, match="bad key"):
        llm.generate(PROMPT)
    assert llm.remaining == 1


def test_timeouts_raise_and_are_retried() -> None:
    llm = ScriptedLLM(["slow", "slow"], delay=0.3, timeout=0.05, retry=RetryPolicy(max_retries=1, base_delay=0.0))
    started = time.monotonic()
    with pytest.raises(ModelTimeoutError, match=r"timed out on 2 attempt.*KAG_LLM_TIMEOUT"):
        llm.generate(PROMPT)
    assert time.monotonic() - started < 0.3
    assert len(llm.calls) == 2


def test_timeouts_need_not_be_retried() -> None:
    llm = ScriptedLLM(["slow", "slow"], delay=0.3, timeout=0.05, retry=FAST)
    llm.retry_timeouts = False
    with pytest.raises(ModelTimeoutError, match="1 attempt"):
        llm.generate(PROMPT)
    assert len(llm.calls) == 1


def test_backoff_grows_and_is_capped() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=3.0, jitter=0.0)
    assert [policy.delay(i) for i in range(4)] == [1.0, 2.0, 3.0, 3.0]
    jittered = RetryPolicy(base_delay=1.0, jitter=0.5)
    assert all(0.5 <= jittered.delay(0) <= 1.5 for _ in range(50))


# ---------------------------------------------------------------- async and concurrency
def test_async_generate_and_object() -> None:
    llm = ScriptedLLM(["text", GOOD])

    async def run() -> tuple[str, Extraction]:
        return await llm.agenerate(PROMPT), await llm.agenerate_object(PROMPT, Extraction)

    text, obj = asyncio.run(run())
    assert text == "text" and obj.entities == GOOD["entities"]


def test_async_retries_and_timeouts() -> None:
    flaky = ScriptedLLM([TransientModelError("x"), "ok"], retry=FAST)
    assert asyncio.run(flaky.agenerate(PROMPT)) == "ok"
    slow = ScriptedLLM(["s", "s"], delay=0.3, timeout=0.05, retry=RetryPolicy(max_retries=1, base_delay=0.0))
    with pytest.raises(ModelTimeoutError):
        asyncio.run(slow.agenerate(PROMPT))


def test_async_repair_then_error() -> None:
    llm = ScriptedLLM(["x", "y"], max_repairs=1)
    with pytest.raises(StructuredOutputError, match="2 attempt"):
        asyncio.run(llm.agenerate_object(PROMPT, Extraction))


def _concurrency_probe() -> tuple[ScriptedLLM, list[int]]:
    lock = threading.Lock()
    state = {"now": 0}
    peaks: list[int] = []

    def respond(messages: list[ChatMessage]) -> str:
        with lock:
            state["now"] += 1
            peaks.append(state["now"])
        time.sleep(0.03)
        with lock:
            state["now"] -= 1
        return "ok"

    return ScriptedLLM(respond, concurrency=2), peaks


def test_sync_calls_are_bounded_by_concurrency() -> None:
    llm, peaks = _concurrency_probe()
    threads = [threading.Thread(target=llm.generate, args=(PROMPT,)) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(peaks) == 8 and max(peaks) == 2


def test_async_calls_are_bounded_by_concurrency() -> None:
    llm, peaks = _concurrency_probe()

    async def run() -> list[str]:
        return await asyncio.gather(*(llm.agenerate(PROMPT) for _ in range(8)))

    assert asyncio.run(run()) == ["ok"] * 8
    assert max(peaks) == 2


# ---------------------------------------------------------------- accounting and input checks
def test_usage_is_per_stage_and_can_be_shared() -> None:
    shared = Usage()
    a = ScriptedLLM(["x"], usage=shared)
    b = ScriptedLLM([GOOD], usage=shared)
    a.generate(PROMPT, stage="plan")
    b.generate_object(PROMPT, Extraction, stage="extract")
    assert set(shared.by_stage()) == {"plan", "extract"}
    assert shared.stage("extract").prompt_tokens > 0 and shared.stage("extract").completion_tokens > 0
    assert a.usage is b.usage is shared


def test_messages_are_checked() -> None:
    assert coerce_messages([{"role": "user", "content": "x"}]) == [ChatMessage(role="user", content="x")]
    with pytest.raises(ValueError, match="empty"):
        coerce_messages([])
    with pytest.raises(TypeError, match="not a string"):
        coerce_messages("hello")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"messages\[0\]"):
        coerce_messages([{"role": "robot", "content": "x"}])
    with pytest.raises(TypeError, match=r"messages\[1\]"):
        coerce_messages([ChatMessage(role="user", content="x"), 3])  # type: ignore[list-item]


def test_bad_arguments_are_rejected() -> None:
    with pytest.raises(ValueError, match="max_tokens"):
        ScriptedLLM(["x"]).generate(PROMPT, max_tokens=0)
    with pytest.raises(ValueError, match="concurrency"):
        ScriptedLLM(["x"], concurrency=0)
    with pytest.raises(ValueError, match="timeout"):
        ScriptedLLM(["x"], timeout=0)

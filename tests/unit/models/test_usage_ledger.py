from __future__ import annotations

import threading

from kag_neo4j.models.usage import StageUsage, Usage


def test_records_calls_hits_and_failures_per_stage() -> None:
    usage = Usage()
    usage.record_call("extract", prompt_tokens=100, completion_tokens=20, seconds=2.0)
    usage.record_call("extract", prompt_tokens=50, completion_tokens=10, seconds=1.0)
    usage.record_cache_hit("extract")
    usage.record_call("answer", prompt_tokens=7, completion_tokens=3, seconds=0.5)
    usage.record_failure("answer", seconds=0.25)

    extract = usage.stage("extract")
    assert (extract.calls, extract.cache_hits, extract.prompt_tokens, extract.completion_tokens) == (2, 1, 150, 30)
    assert extract.seconds == 3.0
    assert extract.tokens_per_second == 10.0
    answer = usage.stage("answer")
    assert (answer.calls, answer.failures, answer.seconds) == (1, 1, 0.75)
    total = usage.total()
    assert (total.calls, total.cache_hits, total.total_tokens) == (3, 1, 190)
    assert list(usage.by_stage()) == ["answer", "extract"]


def test_unknown_stage_is_empty_and_reset_clears() -> None:
    usage = Usage()
    assert usage.stage("nothing") == StageUsage()
    usage.record_call("x", prompt_tokens=1)
    usage.reset()
    assert usage.total() == StageUsage()


def test_as_dict_is_json_ready() -> None:
    usage = Usage()
    usage.record_call("plan", prompt_tokens=3, completion_tokens=4, seconds=0.1)
    data = usage.as_dict()
    assert data["stages"]["plan"]["prompt_tokens"] == 3
    assert data["total"]["completion_tokens"] == 4


def test_concurrent_records_are_not_lost() -> None:
    usage = Usage()

    def work() -> None:
        for _ in range(500):
            usage.record_call("s", prompt_tokens=1, completion_tokens=1)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert usage.stage("s").calls == 2000
    assert usage.stage("s").prompt_tokens == 2000


def test_rich_table_has_a_row_per_stage_and_total() -> None:
    usage = Usage()
    usage.record_call("a")
    usage.record_cache_hit("b")
    table = usage.rich_table()
    assert table.row_count == 3

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from kag_neo4j.errors import ConfigError
from kag_neo4j.models.base import ChatMessage
from kag_neo4j.models.cache import (
    CachedResponse,
    NullCache,
    ResponseCache,
    cache_key,
    open_cache,
)

MESSAGES = [ChatMessage(role="user", content="hello")]
BASE = {
    "provider": "llamacpp",
    "model": "m",
    "messages": MESSAGES,
    "schema": None,
    "params": {"max_tokens": 10, "temperature": 0.0},
}


def test_key_is_stable_and_ignores_param_order() -> None:
    assert cache_key(**BASE) == cache_key(**BASE)
    swapped = {**BASE, "params": {"temperature": 0.0, "max_tokens": 10}}
    assert cache_key(**swapped) == cache_key(**BASE)


@pytest.mark.parametrize(
    "change",
    [
        {"provider": "openai"},
        {"model": "other"},
        {"messages": [ChatMessage(role="user", content="hello!")]},
        {"messages": [ChatMessage(role="system", content="hello")]},
        {"schema": {"type": "object"}},
        {"params": {"max_tokens": 11, "temperature": 0.0}},
        {"params": {"max_tokens": 10, "temperature": 0.5}},
    ],
)
def test_key_changes_with_every_input(change: dict) -> None:
    assert cache_key(**{**BASE, **change}) != cache_key(**BASE)


def test_put_get_and_persist_across_instances(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "responses.sqlite"
    cache = ResponseCache(path)
    assert cache.get("k") is None
    cache.put("k", CachedResponse(text="答案", prompt_tokens=5, completion_tokens=2, seconds=1.5), provider="p", model="m")
    cache.close()
    again = ResponseCache(path)
    hit = again.get("k")
    assert hit == CachedResponse(text="答案", prompt_tokens=5, completion_tokens=2, seconds=1.5)
    assert len(again) == 1
    mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"
    again.delete("k")
    assert again.get("k") is None


def test_clear(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    for i in range(3):
        cache.put(str(i), CachedResponse(text="x"), provider="p", model="m")
    assert cache.clear() == 3
    assert len(cache) == 0


def test_thread_safe_writes(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")

    def work(offset: int) -> None:
        for i in range(50):
            cache.put(f"{offset}-{i}", CachedResponse(text=str(i)), provider="p", model="m")
            assert cache.get(f"{offset}-{i}") is not None

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(cache) == 200


def test_null_cache_and_open_cache(tmp_path: Path) -> None:
    null = NullCache()
    null.put("k", CachedResponse(text="x"), provider="p", model="m")
    assert null.get("k") is None
    assert isinstance(open_cache(tmp_path / "c.sqlite", disabled=True), NullCache)
    assert isinstance(open_cache(None), NullCache)
    assert isinstance(open_cache(tmp_path / "c.sqlite"), ResponseCache)


def test_unwritable_location_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(ConfigError, match="KAG_CACHE_PATH"):
        ResponseCache(blocker / "responses.sqlite")

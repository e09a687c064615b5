"""A persistent response cache (SQLite, WAL), so re-running a build or benchmark costs no model calls.

The key is a sha256 over a canonical JSON of provider, model id, messages, the requested JSON schema
(if any) and the sampling parameters. The pipeline stage is *not* part of the key: the same prompt
asked by two stages gets the same answer.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel

from kag_neo4j.errors import ConfigError

from .base import ChatMessage

_SCHEMA_VERSION = 1

_DDL = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    response TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    seconds REAL NOT NULL DEFAULT 0,
    created_at REAL NOT NULL
)
"""


class CachedResponse(BaseModel):
    """What the cache stores for one request."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0


def cache_key(
    *,
    provider: str,
    model: str,
    messages: Sequence[ChatMessage],
    schema: Mapping[str, Any] | None,
    params: Mapping[str, Any],
) -> str:
    """The stable cache key of one request (hex sha256)."""
    payload = {
        "v": _SCHEMA_VERSION,
        "provider": provider,
        "model": model,
        "messages": [[m.role, m.content] for m in messages],
        "schema": schema,
        "params": dict(params),
    }
    canonical = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ResponseStore(Protocol):
    """What an LLM needs from a cache."""

    def get(self, key: str) -> CachedResponse | None: ...

    def put(self, key: str, response: CachedResponse, *, provider: str, model: str) -> None: ...


class NullCache:
    """No cache: every request goes to the model (``--no-cache``)."""

    def get(self, key: str) -> CachedResponse | None:
        return None

    def put(self, key: str, response: CachedResponse, *, provider: str, model: str) -> None:
        return None

    def __repr__(self) -> str:
        return "NullCache()"


class ResponseCache:
    """A thread-safe SQLite response cache in WAL mode (several processes may share the file)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path).expanduser()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30.0)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute(_DDL)
            self._conn.commit()
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(
                f"cannot open the response cache at {self.path}: {exc}; "
                "set KAG_CACHE_PATH to a writable file, or pass --no-cache"
            ) from exc
        self._lock = threading.Lock()

    def get(self, key: str) -> CachedResponse | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT response, prompt_tokens, completion_tokens, seconds FROM responses WHERE key = ?",
                (key,),
            ).fetchone()
        if row is None:
            return None
        return CachedResponse(text=row[0], prompt_tokens=row[1], completion_tokens=row[2], seconds=row[3])

    def put(self, key: str, response: CachedResponse, *, provider: str, model: str) -> None:
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO responses "
                "(key, provider, model, response, prompt_tokens, completion_tokens, seconds, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    provider,
                    model,
                    response.text,
                    response.prompt_tokens,
                    response.completion_tokens,
                    response.seconds,
                    time.time(),
                ),
            )
            self._conn.commit()

    def delete(self, key: str) -> None:
        with self._lock:
            self._conn.execute("DELETE FROM responses WHERE key = ?", (key,))
            self._conn.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT count(*) FROM responses").fetchone()[0])

    def clear(self) -> int:
        """Delete every entry; returns how many were deleted."""
        with self._lock:
            deleted = self._conn.execute("DELETE FROM responses").rowcount
            self._conn.commit()
        return int(deleted)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.path)!r})"


def open_cache(path: Path | str | None, *, disabled: bool = False) -> ResponseCache | NullCache:
    """The cache for ``path``, or a :class:`NullCache` when ``disabled`` or no path is given."""
    if disabled or path is None:
        return NullCache()
    return ResponseCache(path)

"""Per-stage accounting of model calls: calls, tokens, seconds and cache hits.

Every LLM and embedder carries a :class:`Usage` ledger (``llm.usage``). Several models may share
one ledger, so the CLI and the benchmarks can print one table for a whole run.
"""

from __future__ import annotations

import threading
from typing import Any

from pydantic import BaseModel


class StageUsage(BaseModel):
    """Totals for one pipeline stage (or for everything, see :meth:`Usage.total`).

    ``calls`` counts requests that reached a model (repair attempts and retries included);
    ``cache_hits`` counts requests answered by the response cache, which cost no model time;
    ``cached_tokens`` is what those responses cost when they were computed (so a warm run still
    tells what a cold one spends). ``items`` counts texts embedded (embedders only).
    """

    calls: int = 0
    cache_hits: int = 0
    cached_tokens: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    failures: int = 0
    items: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def tokens_per_second(self) -> float:
        """Completion tokens per second of model time (0 when no model time was spent)."""
        return self.completion_tokens / self.seconds if self.seconds > 0 else 0.0

    def add(self, other: StageUsage) -> StageUsage:
        return StageUsage(
            calls=self.calls + other.calls,
            cache_hits=self.cache_hits + other.cache_hits,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            seconds=self.seconds + other.seconds,
            failures=self.failures + other.failures,
            items=self.items + other.items,
        )


class Usage:
    """A thread-safe ledger of model usage, keyed by pipeline stage."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stages: dict[str, StageUsage] = {}

    def record_call(
        self,
        stage: str,
        *,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        seconds: float = 0.0,
        items: int = 0,
    ) -> None:
        """Count one request that reached a model."""
        self._bump(
            stage,
            StageUsage(
                calls=1,
                prompt_tokens=max(0, int(prompt_tokens)),
                completion_tokens=max(0, int(completion_tokens)),
                seconds=max(0.0, float(seconds)),
                items=items,
            ),
        )

    def record_cache_hit(self, stage: str, *, tokens: int = 0) -> None:
        """Count one request answered from the response cache (zero model time); ``tokens``: what
        the cached response cost when it was computed."""
        self._bump(stage, StageUsage(cache_hits=1, cached_tokens=max(0, tokens)))

    def record_failure(self, stage: str, *, seconds: float = 0.0) -> None:
        """Count one failed request (it still cost ``seconds`` of model time)."""
        self._bump(stage, StageUsage(failures=1, seconds=max(0.0, seconds)))

    def _bump(self, stage: str, delta: StageUsage) -> None:
        with self._lock:
            self._stages[stage] = self._stages.get(stage, StageUsage()).add(delta)

    def stage(self, name: str) -> StageUsage:
        with self._lock:
            return self._stages.get(name, StageUsage()).model_copy()

    def by_stage(self) -> dict[str, StageUsage]:
        with self._lock:
            return {name: usage.model_copy() for name, usage in sorted(self._stages.items())}

    def total(self) -> StageUsage:
        result = StageUsage()
        for usage in self.by_stage().values():
            result = result.add(usage)
        return result

    def reset(self) -> None:
        with self._lock:
            self._stages.clear()

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready totals: ``{"stages": {name: {...}}, "total": {...}}``."""
        return {
            "stages": {name: usage.model_dump() for name, usage in self.by_stage().items()},
            "total": self.total().model_dump(),
        }

    def rich_table(self, title: str = "Model usage") -> Any:
        """A ``rich.table.Table`` of the ledger, one row per stage plus a total row."""
        from rich.table import Table

        table = Table(title=title)
        for column in ("stage", "calls", "cache hits", "prompt tok", "completion tok", "seconds", "failures"):
            table.add_column(column, justify="left" if column == "stage" else "right")
        rows = list(self.by_stage().items()) + [("total", self.total())]
        for name, usage in rows:
            table.add_row(
                name,
                str(usage.calls),
                str(usage.cache_hits),
                str(usage.prompt_tokens),
                str(usage.completion_tokens),
                f"{usage.seconds:.2f}",
                str(usage.failures),
            )
        return table

    def __repr__(self) -> str:
        total = self.total()
        return (
            f"Usage(calls={total.calls}, cache_hits={total.cache_hits}, "
            f"prompt_tokens={total.prompt_tokens}, completion_tokens={total.completion_tokens}, "
            f"seconds={total.seconds:.2f})"
        )

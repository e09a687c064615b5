"""``kag-neo4j models check``: load the configured LLM and embedder and measure them.

The check never reads or writes the response cache: it measures real model time.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from kag_neo4j.errors import KagError

from .messages import conversation
from .cache import NullCache

if TYPE_CHECKING:
    from kag_neo4j.config import Settings

CHECK_PROMPT = conversation("You are a concise assistant.", "In two short sentences, describe the river Danube.")

# Passages of about 60 words, English and Chinese, for the embedding speed test.
_EN = (
    "Real Madrid Club de Fútbol was founded in 1902 in Madrid. The club plays its home matches at the "
    "Santiago Bernabéu stadium and has won the European Cup more often than any other team. Cristiano "
    "Ronaldo played for the club from 2009 to 2018 and became its all-time top scorer."
)
_ZH = (
    "长江是亚洲最长的河流，全长约六千三百公里，流经青海、西藏、四川、重庆、湖北、湖南、江西、安徽、江苏和上海，"
    "最后注入东海。三峡工程位于长江中游，是世界上装机容量最大的水电站之一。"
)


class LLMCheck(BaseModel):
    provider: str
    model_id: str
    source: str | None = None
    path: str | None = None
    load_seconds: float | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    tokens_per_second: float = 0.0
    prompt_tokens_per_second: float | None = None
    reply: str = ""


class EmbedderCheck(BaseModel):
    provider: str
    model_id: str
    dimension: int
    load_seconds: float = 0.0
    passages: int = 0
    seconds: float = 0.0
    passages_per_second: float = 0.0
    query_ms: float = 0.0


class ModelsCheckReport(BaseModel):
    llm: LLMCheck | None = None
    embedder: EmbedderCheck | None = None
    errors: list[str] = []

    @property
    def ok(self) -> bool:
        return not self.errors and self.llm is not None and self.embedder is not None


def check_llm(settings: Settings, *, max_tokens: int = 40) -> LLMCheck:
    from .factory import build_llm

    llm = build_llm(settings, cache=NullCache())
    report = LLMCheck(provider=llm.provider, model_id=llm.model_id)
    path = llm.model_path
    if path is not None:  # a local model: time loading its weights
        started = time.monotonic()
        llm.load()
        report.load_seconds = round(time.monotonic() - started, 3)
        report.path = str(path)
        report.source = "cache" if str(path).startswith(str(settings.resolved_model_cache)) else "path"
    completion = llm.complete(CHECK_PROMPT, stage="check", max_tokens=max_tokens, temperature=0.0)
    report.reply = completion.text.strip()
    report.prompt_tokens = completion.prompt_tokens
    report.completion_tokens = completion.completion_tokens
    report.seconds = round(completion.seconds, 3)
    perf = llm.last_perf()
    if perf and perf.get("generation_seconds"):
        report.tokens_per_second = round(perf["generated_tokens"] / perf["generation_seconds"], 2)
        if perf.get("prompt_seconds"):
            report.prompt_tokens_per_second = round(perf["prompt_tokens"] / perf["prompt_seconds"], 2)
    elif completion.seconds > 0:
        report.tokens_per_second = round(completion.completion_tokens / completion.seconds, 2)
    llm.close()
    return report


def check_embedder(settings: Settings, *, passages: int = 8) -> EmbedderCheck:
    from .factory import build_embedder

    embedder = build_embedder(settings)
    started = time.monotonic()
    embedder.load()
    dimension = embedder.dimension
    load_seconds = time.monotonic() - started
    texts = [(_EN if i % 2 == 0 else _ZH) + f" ({i})" for i in range(passages)]
    started = time.monotonic()
    vectors = embedder.embed_documents(texts)
    seconds = time.monotonic() - started
    if len(vectors) != passages or any(len(v) != dimension for v in vectors):
        raise KagError(f"embedder {embedder.model_id} returned malformed vectors")
    started = time.monotonic()
    embedder.embed_query("When was Real Madrid founded?")
    query_ms = (time.monotonic() - started) * 1000
    return EmbedderCheck(
        provider=embedder.provider,
        model_id=embedder.model_id,
        dimension=dimension,
        load_seconds=round(load_seconds, 3),
        passages=passages,
        seconds=round(seconds, 3),
        passages_per_second=round(passages / seconds, 2) if seconds > 0 else 0.0,
        query_ms=round(query_ms, 1),
    )


def run_check(settings: Settings, *, llm: bool = True, embedder: bool = True) -> ModelsCheckReport:
    """Load and measure the configured models; failures are collected, not raised."""
    report = ModelsCheckReport()
    if embedder:
        try:
            report.embedder = check_embedder(settings)
        except (KagError, ImportError, OSError, RuntimeError, ValueError) as exc:
            report.errors.append(f"embedder ({settings.embedder}): {exc}")
    if llm:
        try:
            report.llm = check_llm(settings)
        except (KagError, ImportError, OSError, RuntimeError, ValueError) as exc:
            report.errors.append(f"llm ({settings.llm_provider}): {exc}")
    return report


def report_rows(report: ModelsCheckReport) -> list[tuple[str, str]]:
    """Label/value rows for a human-readable table."""
    rows: list[tuple[str, Any]] = []
    if report.llm:
        item = report.llm
        rows += [
            ("LLM", f"{item.model_id} ({item.provider})"),
            ("LLM weights", item.path or "-"),
            ("LLM load", f"{item.load_seconds:.2f} s" if item.load_seconds is not None else "-"),
            ("LLM generation", f"{item.tokens_per_second:.1f} tokens/s ({item.completion_tokens} tokens)"),
            ("LLM prompt", f"{item.prompt_tokens_per_second:.1f} tokens/s" if item.prompt_tokens_per_second else "-"),
            ("LLM reply", item.reply[:80]),
        ]
    if report.embedder:
        item2 = report.embedder
        rows += [
            ("embedder", f"{item2.model_id} ({item2.provider})"),
            ("dimension", str(item2.dimension)),
            ("embedder load", f"{item2.load_seconds:.2f} s"),
            ("passages/s", f"{item2.passages_per_second:.1f} ({item2.passages} passages)"),
            ("query latency", f"{item2.query_ms:.1f} ms"),
        ]
    return [(label, str(value)) for label, value in rows]

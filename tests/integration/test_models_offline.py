"""The offline default models, for real: llama.cpp + Qwen2.5-Coder-1.5B GGUF and multilingual-e5-small.

Needs the offline defaults installed (`kag-neo4j models install`); no network, no API key, no Neo4j.
Kept to three short generations: the model runs at ~10-25 tokens/s on 2 cores.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel, Field
from typer.testing import CliRunner

from kag_neo4j.cli.models import app
from kag_neo4j.config import Settings, load_settings
from kag_neo4j.models import ChatMessage, build_embedder, build_llm
from kag_neo4j.models.chat import ChatLLM
from kag_neo4j.models.registry import DEFAULT_LLM, E5_SMALL

pytestmark = pytest.mark.slow


class Entity(BaseModel):
    name: str
    type: str


class Relation(BaseModel):
    subject: str
    predicate: str
    object: str


class Graph(BaseModel):
    entities: list[Entity] = Field(min_length=1, max_length=8)
    relations: list[Relation] = Field(max_length=8)


SYSTEM = ChatMessage(role="system", content="You extract entities and the relations between them. Reply with JSON only.")
EN = "Cristiano Ronaldo played for Real Madrid from 2009 to 2018. Real Madrid was founded in 1902 in Madrid."
ZH = "C罗于2009年至2018年效力于皇家马德里。皇家马德里足球俱乐部于1902年在马德里成立。"


def _ask(text: str) -> list[ChatMessage]:
    return [SYSTEM, ChatMessage(role="user", content=f"Extract the entities and relations.\nText: {text}")]


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    # the defaults (no provider, model or key configured), with a fresh response cache
    return load_settings(cache_path=tmp_path_factory.mktemp("kag-cache") / "responses.sqlite")


@pytest.fixture(scope="module")
def llm(settings: Settings) -> Iterator[ChatLLM]:
    model = build_llm(settings)
    yield model
    model.close()


def test_models_check_loads_and_measures_the_defaults() -> None:
    result = CliRunner().invoke(app, ["check", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    if load_settings().llm_provider == "llamacpp" and load_settings().llm_model is None:
        assert report["llm"]["model_id"] == DEFAULT_LLM.model_id
    assert report["llm"]["tokens_per_second"] > 0
    assert report["llm"]["reply"]
    assert report["embedder"]["model_id"] == E5_SMALL.model_id
    assert report["embedder"]["dimension"] == 384
    assert report["embedder"]["passages_per_second"] > 0


def test_structured_extraction_in_english_and_chinese_then_a_cache_hit(llm: ChatLLM, settings: Settings) -> None:
    assert llm.provider == "llamacpp" and Path(llm.model_path).name == DEFAULT_LLM.file  # type: ignore[attr-defined]
    english = llm.generate_object(_ask(EN), Graph, stage="extract", max_tokens=256)
    assert any("Madrid" in entity.name for entity in english.entities)
    chinese = llm.generate_object(_ask(ZH), Graph, stage="extract", max_tokens=256)
    assert any("马德里" in entity.name for entity in chinese.entities)

    before = llm.usage.stage("extract")
    assert before.calls >= 2 and before.cache_hits == 0 and before.completion_tokens > 0
    again = llm.generate_object(_ask(EN), Graph, stage="extract", max_tokens=256)
    after = llm.usage.stage("extract")
    assert again == english
    assert after.cache_hits == 1
    assert (after.calls, after.seconds, after.completion_tokens) == (before.calls, before.seconds, before.completion_tokens)


def test_e5_embeds_english_and_chinese(settings: Settings) -> None:
    embedder = build_embedder(settings)
    assert embedder.dimension == 384
    madrid, yangtze = embedder.embed_documents(
        ["Real Madrid was founded in 1902 in Madrid.", "长江是亚洲最长的河流。"]
    )

    def score(query: str, doc: list[float]) -> float:
        q = embedder.embed_query(query)
        return sum(a * b for a, b in zip(q, doc, strict=True))

    assert score("When was the Madrid club established?", madrid) > score("When was the Madrid club established?", yangtze)
    assert score("皇家马德里是哪一年成立的？", madrid) > score("皇家马德里是哪一年成立的？", yangtze)
    assert score("亚洲最长的河是哪条？", yangtze) > score("亚洲最长的河是哪条？", madrid)


def test_the_prefix_cache_restores_an_earlier_prompt_and_still_answers_right(settings: Settings) -> None:
    from kag_neo4j.models.base import CompletionRequest
    from kag_neo4j.models.install import resolve_gguf
    from kag_neo4j.models.llamacpp import LlamaCppLLM

    path = resolve_gguf(settings.llm_model, settings.resolved_model_cache).path
    passages = " ".join(f"Passage {i}: the Harrow Valley Railway's station number {i} opened in {1870 + i}." for i in range(12))
    instructions = ChatMessage(role="system", content=f"Answer in one short phrase from these passages. {passages}")

    def ask(question: str) -> CompletionRequest:
        return CompletionRequest(messages=(instructions, ChatMessage(role="user", content=question)), max_tokens=12)

    # the same prefix, another prompt in between (as the solver's plan, sub-answers and answer alternate)
    other = CompletionRequest(messages=(SYSTEM, ChatMessage(role="user", content=f"Extract: {EN}")), max_tokens=12)
    sequence = [ask("When did station 3 open?"), other, ask("When did station 7 open?")]
    replies: dict[int, list[str]] = {}
    evaluated: dict[int, int] = {}  # prompt tokens llama.cpp evaluated for the last call
    for cache_mb in (0, 256):
        model = LlamaCppLLM(path, n_threads=settings.llm_threads, prefix_cache_mb=cache_mb)
        try:
            completions = [model._complete(request) for request in sequence]
            replies[cache_mb] = [completion.text for completion in completions]
            evaluated[cache_mb] = int((model.last_perf() or {})["prompt_tokens"])
        finally:
            model.close()
    sent = completions[-1].prompt_tokens
    assert evaluated[0] > sent * 0.9, "without the cache the last prompt is evaluated almost whole"
    assert evaluated[256] < sent * 0.3, "with it, only what follows the shared prefix is evaluated"
    # the reply is the model's own either way (where two next tokens nearly tie, KV values computed
    # in another batch may pick the other: BENCHMARKS.md counts how often), and here it is right
    assert all("1877" in found[-1] for found in replies.values()), replies


class Verdict(BaseModel):
    station: str
    year: int


def test_the_grammar_shortlist_picks_the_tokens_llama_cpp_s_own_chain_picks(settings: Settings) -> None:
    from kag_neo4j.models.base import CompletionRequest
    from kag_neo4j.models.grammar_sampler import GreedyGrammarSampler
    from kag_neo4j.models.install import resolve_gguf
    from kag_neo4j.models.llamacpp import LlamaCppLLM

    path = resolve_gguf(settings.llm_model, settings.resolved_model_cache).path
    question = ChatMessage(role="user", content=f"{EN}\nWhich club did Ronaldo join, and in which year? Reply in Chinese.")
    request = CompletionRequest(messages=(SYSTEM, question), max_tokens=40, json_schema=Verdict.model_json_schema())
    texts: dict[int, str] = {}
    steps: dict[int, tuple[int, int]] = {}
    # 0: llama.cpp's chain (the grammar sees the whole vocabulary at every step); 64: the default;
    # 1: only the likeliest token first, so every step where the model leans outside JSON falls back
    for shortlist in (0, 64, 1):
        model = LlamaCppLLM(path, n_threads=settings.llm_threads, grammar_shortlist=shortlist)
        try:
            texts[shortlist] = model._complete(request).text
            sampler = model._llama._sampler
            if shortlist:
                assert isinstance(sampler, GreedyGrammarSampler)
                steps[shortlist] = (sampler.shortlisted, sampler.full)
        finally:
            model.close()
    assert texts[64] == texts[0] and texts[1] == texts[0], texts
    Verdict.model_validate_json(texts[0])
    assert steps[64][0] > steps[64][1], "the 64 likeliest tokens decide most steps"
    assert steps[1][1] > steps[64][1], "with one token shown first, more steps fall back to the whole vocabulary"

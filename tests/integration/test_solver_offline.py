"""The offline default models answer a multi-hop numeric question over a small fixture corpus.

Real multilingual-e5-small and Qwen2.5-Coder-1.5B (llama.cpp), no key, no network: the corpus is
loaded in light mode (no LLM), then the solver plans, retrieves and computes. Slow: minutes on
two cores.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kag_neo4j.api import KAG
from kag_neo4j.builder.pipeline import LoadOptions, load
from kag_neo4j.config import load_settings
from kag_neo4j.models import build_embedder, build_llm
from kag_neo4j.store.database import Database

pytestmark = pytest.mark.slow

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "solver"
QUESTION = "How many years after the Brackenford Observatory was founded was the Varga Comet first observed?"


def test_offline_model_answers_how_many_years_after(db: Database, tmp_path_factory: pytest.TempPathFactory) -> None:
    # the default models, a fresh response cache (so the model really runs), the test database
    settings = load_settings(cache_path=tmp_path_factory.mktemp("kag-cache") / "responses.sqlite")
    llm = build_llm(settings)
    embedder = build_embedder(settings)
    summary = load([CORPUS], db, settings, LoadOptions(mode="light"), embedder=embedder)
    assert summary.documents_loaded == 3

    answer = KAG(db, llm, embedder).ask(QUESTION)
    print(answer.plan, answer.answer, answer.usage, [(s.op, s.source, s.outputs) for s in answer.steps], sep="\n")
    assert answer.known and "45" in answer.answer
    cited = {c.document_id for c in answer.citations}
    assert any("brackenford" in doc for doc in cited) and any("varga-comet" in doc for doc in cited)
    assert answer.usage["llm_calls"] <= 6
    assert db.read("MATCH (r:KagRun {id: $id}) RETURN r.answer AS a", id=answer.run_id)[0]["a"] == answer.answer

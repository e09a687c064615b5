"""Full mode with the real offline LLM (Qwen2.5-Coder-1.5B via llama.cpp) and a shipped schema.

Slow (about 30 s per chunk on 2 cores): marked ``slow``; run with ``-m slow``. It needs the
offline model (``kag-neo4j models install``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kag_neo4j.builder.pipeline import LoadOptions, load
from kag_neo4j.config import Settings, load_settings
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.resources import resource_dir
from kag_neo4j.schema.validate import load_schema
from kag_neo4j.store.database import Database
from tests.integration.conftest import TEST_DIMENSION

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SCHEMA_LABELS = {"Company", "Organization", "Person", "Regulator", "Filing", "Industry"}


@pytest.mark.slow
def test_markdown_and_pdf_load_in_full_mode_with_the_offline_model(db: Database, test_settings: Settings) -> None:
    # a missing or broken offline model fails this test (deselect slow tests with -m "not slow")
    from kag_neo4j.models import build_llm

    # the weights `kag-neo4j models install` put in this environment's model cache, not the
    # test's temporary home (which holds none: the test would depend on the part packages)
    installed = load_settings().resolved_model_cache
    settings = test_settings.model_copy(update={"llm_provider": "llamacpp", "llm_model": None, "model_cache": installed})
    llm = build_llm(settings)
    schema = load_schema(str(resource_dir("schema") / "CompanyFinance.schema"))
    paths = [FIXTURES / "builder" / "companies" / "acme.md", FIXTURES / "docs" / "sample.pdf"]
    options = LoadOptions(mode="full", spg_schema=schema)
    summary = load(paths, db, settings, options, llm=llm, embedder=HashingEmbedder(TEST_DIMENSION))
    assert summary.documents_loaded == 2 and summary.extraction_failures == 0
    # one call per chunk, and two more for the halves of a chunk whose reply stated no fact
    assert summary.chunks <= summary.llm_calls + summary.llm_cache_hits <= 3 * summary.chunks
    labels = {label for row in db.read("MATCH (e:Entity) RETURN labels(e) AS l") for label in row["l"]}
    assert labels & SCHEMA_LABELS, f"no schema label among {labels}"
    facts = db.read(
        "MATCH (a)-[r]->(b) WHERE (a:Entity OR a:Event) AND (b:Entity OR b:Event OR b:Concept) "
        "RETURN type(r) AS type, r.chunk_ids AS chunks"
    )
    assert facts, "the model extracted no relation at all"
    chunk_ids = {row["id"] for row in db.read("MATCH (c:Chunk) RETURN c.id AS id")}
    assert all(row["chunks"] and set(row["chunks"]) <= chunk_ids for row in facts)
    again = load(paths, db, settings, options, llm=llm, embedder=HashingEmbedder(TEST_DIMENSION))
    assert again.documents_skipped == 2

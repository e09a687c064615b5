"""kag-neo4j on a Neo4j without GDS (like Aura Free or a plain server): a real local instance
started with ``kag-neo4j server start --no-gds`` (APOC only) loads a corpus, searches and answers,
with Personalized PageRank in plain Cypher and a one-line warning saying what that changes.

The instance (``pytest-nogds-<pid>``) is this module's own: started here beside the session's
server, sharing the provisioned runtime jars, and removed at the end.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from kag_neo4j.api import KAG
from kag_neo4j.builder.pipeline import LoadOptions, load
from kag_neo4j.config import Settings, load_settings
from kag_neo4j.eval.loading import clear_knowledge_base
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.models.scripted import ScriptedLLM
from kag_neo4j.quickstart import corpus_dir
from kag_neo4j.solver.question_search import search
from kag_neo4j.solver.retrieval import RetrievalError
from kag_neo4j.store import migrations, server
from kag_neo4j.store.database import NO_GDS_WARNING, Capabilities, Connection, Database

pytestmark = pytest.mark.skipif(shutil.which("mvn") is None or shutil.which("java") is None,
                                reason="the local launcher needs Java and Maven")

DIMENSION = 64
REPOSITORY = Path(__file__).resolve().parents[2]


@dataclass
class NoGds:
    settings: Settings
    db: Database
    embedder: HashingEmbedder


@pytest.fixture(scope="module")
def no_gds() -> Iterator[NoGds]:
    name = f"pytest-nogds-{os.getpid()}"
    settings = load_settings(server_name=name).model_copy(update={
        "neo4j_uri": None, "server_gds": False, "server_heap": "512m", "server_pagecache": "64m",
        "embedding_dimensions": DIMENSION})
    shutil.rmtree(server.instance_dir(settings), ignore_errors=True)
    try:
        state, _ = server.start(settings)
        db = Database(Connection(state.uri, "neo4j", server.instance_auth(settings)))
        embedder = HashingEmbedder(dimension=DIMENSION)
        migrations.migrate(db, embedding_dimension=DIMENSION)
        load([corpus_dir()], db, settings, LoadOptions(mode="light"), embedder=embedder)
        yield NoGds(settings, db, embedder)
        db.close()
    finally:
        server.stop(settings, timeout=30)
        shutil.rmtree(server.instance_dir(settings), ignore_errors=True)


def test_the_server_has_no_gds_and_says_so(no_gds: NoGds) -> None:
    names = no_gds.db.read("SHOW PROCEDURES YIELD name WHERE name STARTS WITH 'gds.' RETURN name")
    assert names == []
    assert no_gds.db.capabilities == Capabilities(gds=False)
    state = server.read_state(no_gds.settings)
    assert state is not None and not server.has_gds(state)
    versions = server.check_plugins(state.uri, server.instance_auth(no_gds.settings), gds=False)
    assert versions["gds"] is None and str(versions["apoc"]).startswith("5.26")


def test_search_ranks_by_pagerank_in_cypher_and_warns(no_gds: NoGds) -> None:
    kag = KAG(no_gds.db, ScriptedLLM([]), no_gds.embedder)
    result = kag.search("Who founded the Harrow Valley Rail Company?", k=5)
    assert result.ppr_backend == "cypher" and result.warnings == [NO_GDS_WARNING]
    assert result.chunks and any("ppr" in chunk.ranks for chunk in result.chunks), "PPR ranked chunks without GDS"
    dense = kag.search("Who founded the Harrow Valley Rail Company?", k=5, recipe="dense")
    assert dense.ppr_backend is None and dense.warnings == []
    with pytest.raises(RetrievalError, match="no Graph Data Science plugin"):
        search(no_gds.db, no_gds.embedder, "Who founded the Harrow Valley Rail Company?", recipe_name="hybrid-gds")


def test_ask_answers_from_the_cli_with_the_warning(no_gds: NoGds, tmp_path: Path) -> None:
    # a scripted model whose plans never parse: the question falls back to chunk retrieval (the
    # Cypher PPR backend) and the scripted reader cites its first passage
    script = tmp_path / "responses.json"
    script.write_text(json.dumps([{"logical_form": "no plan"}, {"answer": "scripted reading", "evidence": [1]}]),
                      encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith("NEO4J_") and key != "KAG_CONFIG"}
    env.update(KAG_SERVER_NAME=no_gds.settings.server_name, KAG_HOME=str(no_gds.settings.home),
               KAG_EMBEDDER="hashing", KAG_EMBEDDING_DIMENSIONS=str(DIMENSION), KAG_LLM_PROVIDER="scripted",
               KAG_LLM_MODEL=str(script), KAG_NO_CACHE="true",  # the script, not a cached reply of another one
               PYTHONPATH=str(REPOSITORY), COLUMNS="200", NO_COLOR="1")
    done = subprocess.run([sys.executable, "-m", "tests.integration.kag_cli", "ask", "Who founded the Harrow Valley Rail Company?",
                           "--json", "--no-trace"], capture_output=True, text=True, env=env, cwd=REPOSITORY, timeout=300)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert NO_GDS_WARNING in answer["warnings"]
    assert answer["citations"], answer
    retrievals = [query for step in answer["steps"] for query in step["queries"]
                  if query["name"].startswith("procedures/hybrid_retrieval")]
    assert retrievals and {query["name"] for query in retrievals} == {"procedures/hybrid_retrieval_local"}


def test_clearing_the_knowledge_base_needs_no_gds(no_gds: NoGds) -> None:
    clear_knowledge_base(no_gds.db)
    assert no_gds.db.read("MATCH (c:Chunk) RETURN count(c) AS n")[0]["n"] == 0

"""KAG.search: single-shot hybrid retrieval with no LLM, on the solver's fixture graph."""

from __future__ import annotations

import pytest

from kag_neo4j.api import KAG
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.models.scripted import ScriptedLLM
from kag_neo4j.store.database import Database
from tests.integration.conftest import TEST_DIMENSION
from tests.integration.solver_fixtures import chunk_id, knowledge_counts, write_fixture_graph


def _no_llm(messages: object) -> str:
    raise AssertionError("search must not call the LLM")


@pytest.fixture
def kag(db: Database) -> KAG:
    embedder = HashingEmbedder(dimension=TEST_DIMENSION)
    write_fixture_graph(db, embedder)
    return KAG(db, ScriptedLLM(_no_llm), embedder)


def test_search_links_the_question_and_ranks_chunks_without_a_model(kag: KAG) -> None:
    before = knowledge_counts(kag.db)
    result = kag.search("Where was Ada Pembroke born?", k=3)
    assert "Ada Pembroke" in result.mentions
    assert result.seed_entity_ids and result.seed_entity_ids[0] == "person:ada"
    assert 1 <= len(result.chunks) <= 3
    assert chunk_id("ada") in [c.chunk_id for c in result.chunks]
    scores = [c.score for c in result.chunks]
    assert scores == sorted(scores, reverse=True)
    assert all(c.ranks for c in result.chunks), "each chunk names the ranked lists that found it"
    assert "ppr" in {name for c in result.chunks for name in c.ranks}
    assert knowledge_counts(kag.db) == before


def test_names_joined_by_and_each_seed_pagerank(kag: KAG) -> None:
    result = kag.search("Did Ada Pembroke and Kestrel Bay share a harbour?", k=3)
    assert {"Ada Pembroke", "Kestrel Bay"} <= set(result.mentions)
    assert {"person:ada", "town:kestrel"} <= set(result.seed_entity_ids)


def test_a_dense_search_links_nothing(kag: KAG) -> None:
    result = kag.search("Where was Ada Pembroke born?", k=2, recipe="dense")
    assert result.mentions == [] and result.seed_entity_ids == []
    assert {name for c in result.chunks for name in c.ranks} == {"dense"}


def test_an_unknown_recipe_names_the_choices(kag: KAG) -> None:
    with pytest.raises(ValueError, match="hybrid"):
        kag.search("anything", recipe="nope")

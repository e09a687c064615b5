"""Our retrievers inside neo4j-graphrag's own ``GraphRAG`` pipeline, on the solver's fixture graph.

The pipeline's LLM is a neo4j-graphrag ``LLMInterface`` test double that records the prompt
GraphRAG built; the ranks in the items' metadata are checked against the indexes queried
directly and against the run's stored trace, never against values the test supplied.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import neo4j
import pytest
from neo4j_graphrag.embeddings.base import Embedder as GraphragEmbedderBase
from neo4j_graphrag.generation import GraphRAG
from neo4j_graphrag.llm.base import LLMInterface
from neo4j_graphrag.llm.types import LLMResponse

from kag_neo4j.graphrag import KagHybridRetriever, KagSolverRetriever
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.solver.retrieval import RECIPES
from kag_neo4j.store.database import Connection, Database
from tests.integration.conftest import TEST_DIMENSION
from tests.integration.solver_fixtures import DOCS, chunk_id, knowledge_counts
from tests.integration.test_solver_ask import FOUNDER_TOWN, YEARS_AFTER, Router, embedder, graph, opening_year  # noqa: F401 - fixtures

QUESTION = "Where was Ada Pembroke born?"


class RecordingLLM(LLMInterface):
    """neo4j-graphrag's LLM interface: remembers every prompt and answers with a fixed line."""

    def __init__(self) -> None:
        super().__init__(model_name="recording")
        self.prompts: list[str] = []

    def invoke(self, input: str, message_history: Any = None, system_instruction: str | None = None) -> LLMResponse:
        self.prompts.append(input)
        return LLMResponse(content="(recorded)")

    async def ainvoke(self, input: str, message_history: Any = None,
                      system_instruction: str | None = None) -> LLMResponse:
        return self.invoke(input, message_history, system_instruction)


class ForeignEmbedder(GraphragEmbedderBase):
    """A neo4j-graphrag Embedder of an application (here: the graph's hashing vectors)."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = HashingEmbedder(dimension=TEST_DIMENSION)
        self.calls = 0

    def embed_query(self, text: str) -> list[float]:
        self.calls += 1
        return self.inner.embed_query(text)


@pytest.fixture
def driver(neo4j_connection: Connection) -> Iterator[neo4j.Driver]:
    with neo4j.GraphDatabase.driver(neo4j_connection.uri, auth=neo4j_connection.auth) as own:
        yield own


def _dense_order(db: Database, embedder: HashingEmbedder, question: str) -> list[str]:
    """The vector index's own ranking of every chunk for ``question``."""
    rows = db.read("CALL db.index.vector.queryNodes('chunk_embedding', 50, $vector) YIELD node, score "
                   "RETURN node.id AS id ORDER BY score DESC", vector=embedder.embed_query(question))
    return [row["id"] for row in rows]


def test_graphrag_generates_from_the_chunks_our_hybrid_retriever_ranked(
    graph: Database, embedder: HashingEmbedder, driver: neo4j.Driver
) -> None:
    before = knowledge_counts(graph)
    foreign = ForeignEmbedder()
    retriever = KagHybridRetriever(driver, foreign, neo4j_database=graph.database)
    llm = RecordingLLM()
    result = GraphRAG(retriever=retriever, llm=llm).search(QUESTION, retriever_config={"top_k": 3},
                                                           return_context=True)
    assert result.answer == "(recorded)" and len(llm.prompts) == 1 and foreign.calls > 0
    context = result.retriever_result
    assert context is not None and 1 <= len(context.items) <= 3
    prompt = llm.prompts[0]
    found = [item.metadata["chunk_id"] for item in context.items if item.metadata]
    assert chunk_id("ada") in found, "the birthplace passage is retrieved"
    for item in context.items:
        assert item.content and item.content in prompt, "GraphRAG's context holds every chunk we found"
    assert DOCS["ada"][1] in prompt
    assert context.metadata is not None and context.metadata["__retriever"] == "KagHybridRetriever"
    assert "person:ada" in context.metadata["seed_entity_ids"]

    dense = _dense_order(graph, embedder, QUESTION)
    weights = RECIPES["hybrid"].weights.model_dump()
    for position, item in enumerate(context.items, start=1):
        meta = item.metadata or {}
        assert meta["rank"] == position and meta["document_id"] == meta["chunk_id"].split("#")[0]
        assert meta["title"] == DOCS[meta["document_id"]][0]
        ranks = meta["ranks"]
        if "dense" in ranks:
            assert ranks["dense"] == dense.index(meta["chunk_id"]) + 1, "the dense rank is the vector index's"
        # the fused score is weighted RRF over exactly the ranks reported
        assert meta["score"] == pytest.approx(sum(weights[name] / (60 + rank) for name, rank in ranks.items()))
    assert "ppr" in {name for item in context.items for name in (item.metadata or {})["ranks"]}
    scores = [(item.metadata or {})["score"] for item in context.items]
    assert scores == sorted(scores, reverse=True)
    assert knowledge_counts(graph) == before


def test_a_dense_recipe_per_call_with_our_database_and_embedder(graph: Database, embedder: HashingEmbedder) -> None:
    retriever = KagHybridRetriever(graph, embedder)
    llm = RecordingLLM()
    result = GraphRAG(retriever=retriever, llm=llm).search(
        QUESTION, retriever_config={"top_k": 2, "recipe": "dense"}, return_context=True)
    assert result.retriever_result is not None
    items = result.retriever_result.items
    dense = _dense_order(graph, embedder, QUESTION)
    assert [(i.metadata or {})["chunk_id"] for i in items] == dense[:2]
    assert [(i.metadata or {})["ranks"] for i in items] == [{"dense": 1}, {"dense": 2}]
    assert all(i.content in llm.prompts[0] for i in items)
    assert (result.retriever_result.metadata or {})["seed_entity_ids"] == []


def test_graphrag_generates_from_the_chunks_the_solver_cited(
    graph: Database, embedder: HashingEmbedder, driver: neo4j.Driver
) -> None:
    router = Router(plan=[FOUNDER_TOWN])
    retriever = KagSolverRetriever(driver, embedder, router.llm, neo4j_database=graph.database)
    llm = RecordingLLM()
    question = "In which town was the founder of the Harrow Valley Rail Company born?"
    result = GraphRAG(retriever=retriever, llm=llm).search(question, return_context=True)
    assert router.kinds == ["plan"], "the solver answered from graph facts"
    context = result.retriever_result
    assert context is not None and context.metadata is not None
    meta = context.metadata
    assert meta["answer"] == "Kestrel Bay" and meta["known"] is True
    assert [q["question"] for q in meta["sub_questions"]] == [
        "Who founded the Harrow Valley Rail Company?", "In which town was that person born?"]
    prompt = llm.prompts[0]
    assert DOCS["hvrc"][1] in prompt and DOCS["ada"][1] in prompt
    assert all(item.content in prompt for item in context.items)

    # the items are the chunks the stored run used, each where it first used it
    first = _first_use(graph, meta["run_id"])
    items = {(i.metadata or {})["chunk_id"]: i.metadata or {} for i in context.items}
    assert set(items) == set(first)
    assert {cid for cid, m in items.items() if m["cited"]} == {chunk_id("hvrc"), chunk_id("ada")}
    for cid, m in items.items():
        assert (m["step"], m["rank"]) == first[cid]

    only = KagSolverRetriever(graph, embedder, Router(plan=[FOUNDER_TOWN]).llm, trace=False, only_cited=True)
    cited = only.search(question, top_k=1)
    assert len(cited.items) == 1 and (cited.items[0].metadata or {})["cited"]
    assert (cited.metadata or {})["run_id"] is None


def _first_use(db: Database, run_id: str) -> dict[str, tuple[int, int]]:
    """chunk id -> (record index, rank) where the stored run first used it."""
    used = db.read("MATCH (:KagRun {id: $run})-[:HAS_STEP]->(s:KagStep)-[u:USED]->(c:Chunk) "
                   "RETURN c.id AS chunk, s.id AS step, u.rank AS rank", run=run_id)
    first: dict[str, tuple[int, int]] = {}
    for step, rank, chunk in sorted((int(r["step"].rsplit(":", 1)[1]), r["rank"], r["chunk"]) for r in used):
        first.setdefault(chunk, (step, rank))
    return first


def test_the_solver_retriever_puts_cited_chunks_before_the_other_chunks_it_read(
    graph: Database, embedder: HashingEmbedder
) -> None:
    router = Router(plan=[YEARS_AFTER], subanswer=[opening_year])
    retriever = KagSolverRetriever(graph, embedder, router.llm)
    result = retriever.search("How many years after the Harrow Valley Rail Company was founded did the Millbrook "
                              "Viaduct open?")
    meta = result.metadata or {}
    assert meta["answer"] == "28"
    items = [i.metadata or {} for i in result.items]
    first = _first_use(graph, meta["run_id"])
    assert [m["chunk_id"] for m in items] == sorted(first, key=lambda c: (c not in {chunk_id("hvrc"), chunk_id("viaduct")},
                                                                        first[c]))
    flags = [m["cited"] for m in items]
    assert flags[:2] == [True, True] and not any(flags[2:]) and len(flags) > 2, "the viaduct step read more chunks"


def test_a_driver_handed_in_stays_open_and_reaches_the_home_database(
    graph: Database, driver: neo4j.Driver
) -> None:
    borrowed = Database.from_driver(driver)
    assert borrowed.database == graph.database
    borrowed.close()
    driver.verify_connectivity()  # still open: it belongs to the caller


def test_bad_arguments_name_what_is_expected(graph: Database, embedder: HashingEmbedder) -> None:
    with pytest.raises(TypeError, match="neo4j.Driver"):
        KagHybridRetriever("bolt://nowhere", embedder)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Embedder"):
        KagHybridRetriever(graph, object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="connected to"):
        KagHybridRetriever(graph, embedder, neo4j_database="elsewhere")

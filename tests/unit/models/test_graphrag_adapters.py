"""Our models inside neo4j-graphrag 1.22 components (LLMInterfaceV2 / Embedder)."""

from __future__ import annotations

import asyncio
import json
import warnings

import pytest
from models_testkit import GOOD, Extraction

from kag_neo4j.errors import TransientModelError
from kag_neo4j.models import (
    HashingEmbedder,
    ScriptedLLM,
    as_graphrag_embedder,
    as_graphrag_llm,
)
from kag_neo4j.models.chat import RetryPolicy

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from neo4j_graphrag.components.embedder import TextChunkEmbedder
    from neo4j_graphrag.components.entity_relation_extractor import (
        LLMEntityRelationExtractor,
    )
    from neo4j_graphrag.components.types import TextChunk, TextChunks
    from neo4j_graphrag.embeddings.base import Embedder as GraphragEmbedderBase
    from neo4j_graphrag.exceptions import EmbeddingsGenerationError, LLMGenerationError
    from neo4j_graphrag.llm import LLMInterface, LLMInterfaceV2
    from neo4j_graphrag.types import LLMMessage

GRAPH = {
    "nodes": [
        {"id": "0", "label": "Person", "properties": {"name": "Ronaldo"}},
        {"id": "1", "label": "Club", "properties": {"name": "Real Madrid"}},
    ],
    "relationships": [{"start_node_id": "0", "end_node_id": "1", "type": "PLAYED_FOR", "properties": {}}],
}
CHUNKS = TextChunks(chunks=[TextChunk(text="Ronaldo played for Real Madrid.", index=0)])


def test_is_both_graphrag_llm_interfaces() -> None:
    adapter = as_graphrag_llm(ScriptedLLM([]))
    assert isinstance(adapter, LLMInterfaceV2) and isinstance(adapter, LLMInterface)
    assert adapter.supports_structured_output
    assert adapter.model_name == "scripted"


def test_v1_string_input_with_system_instruction() -> None:
    llm = ScriptedLLM(["answer"])
    response = as_graphrag_llm(llm).invoke("question?", system_instruction="be brief")
    assert response.content == "answer"
    assert response.usage is not None and response.usage.response_tokens > 0
    assert [(m.role, m.content) for m in llm.calls[0].messages] == [("system", "be brief"), ("user", "question?")]


def test_v2_messages_with_a_pydantic_response_format() -> None:
    llm = ScriptedLLM(["oops", GOOD])
    messages = [LLMMessage(role="user", content="extract")]
    response = as_graphrag_llm(llm, stage="gr").invoke(messages, response_format=Extraction)
    assert Extraction.model_validate_json(response.content).entities == GOOD["entities"]
    assert llm.usage.stage("gr").calls == 2  # invalid reply repaired


@pytest.mark.parametrize(
    "response_format",
    [
        {"type": "json_schema", "json_schema": {"name": "n", "schema": {"type": "object", "required": ["n"]}}},
        {"type": "object", "required": ["n"]},
    ],
)
def test_dict_response_formats(response_format: dict) -> None:
    llm = ScriptedLLM(['{"m": 1}', '{"n": 1}'])
    response = as_graphrag_llm(llm).invoke([LLMMessage(role="user", content="x")], response_format=response_format)
    assert json.loads(response.content) == {"n": 1}


def test_model_params_and_kwargs_reach_our_llm() -> None:
    llm = ScriptedLLM(["a", "b"])
    adapter = as_graphrag_llm(llm, max_tokens=77)
    adapter.invoke("x")
    adapter.invoke("y", temperature=0.5, max_tokens=5)
    assert [(c.max_tokens, c.temperature) for c in llm.calls] == [(77, 0.0), (5, 0.5)]


def test_errors_become_llm_generation_errors() -> None:
    llm = ScriptedLLM([TransientModelError("down")], retry=RetryPolicy(max_retries=0))
    with pytest.raises(LLMGenerationError, match="down"):
        as_graphrag_llm(llm).invoke("x")


def test_async_invoke() -> None:
    llm = ScriptedLLM(["a", GOOD])
    adapter = as_graphrag_llm(llm)

    async def run() -> tuple[str, str]:
        text = await adapter.ainvoke("x")
        obj = await adapter.ainvoke([LLMMessage(role="user", content="y")], response_format=Extraction)
        return text.content, obj.content

    text, obj = asyncio.run(run())
    assert text == "a" and json.loads(obj)["entities"] == GOOD["entities"]


@pytest.mark.parametrize("structured", [True, False])
def test_graphrag_entity_relation_extractor_runs_on_our_llm(structured: bool) -> None:
    llm = ScriptedLLM([GRAPH])
    extractor = LLMEntityRelationExtractor(
        llm=as_graphrag_llm(llm, stage="graphrag"), use_structured_output=structured, create_lexical_graph=False
    )
    graph = asyncio.run(extractor.run(chunks=CHUNKS))
    assert sorted(node.label for node in graph.nodes) == ["Club", "Person"]
    assert [rel.type for rel in graph.relationships] == ["PLAYED_FOR"]
    assert (llm.calls[0].schema_ is not None) is structured
    assert llm.usage.stage("graphrag").calls == 1


def test_embedder_adapter_in_a_graphrag_component() -> None:
    ours = HashingEmbedder(dimension=32)
    adapter = as_graphrag_embedder(ours)
    assert isinstance(adapter, GraphragEmbedderBase)
    assert adapter.dimension == 32
    assert adapter.embed_query("x") == ours.embed_query("x")
    assert adapter.embed_documents(["a", "b"]) == ours.embed_documents(["a", "b"])
    embedded = asyncio.run(TextChunkEmbedder(embedder=adapter).run(text_chunks=CHUNKS))
    assert len(embedded.chunks[0].metadata["embedding"]) == 32


def test_embedder_errors_become_graphrag_errors() -> None:
    class Broken(HashingEmbedder):
        def _embed(self, texts: list[str], *, query: bool) -> list[list[float]]:
            return [[0.0]]

    with pytest.raises(EmbeddingsGenerationError, match="expected 256"):
        as_graphrag_embedder(Broken()).embed_query("x")

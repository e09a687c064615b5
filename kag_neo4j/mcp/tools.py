"""What the MCP tools do: plain functions over one :class:`~kag_neo4j.api.KAG`, pydantic results.

Every question-time tool (``ask``, ``search``, ``trace``, ``schema``) reads in read transactions
(``ask`` then stores its run, as ``kag-neo4j ask`` does). ``load`` writes; the server offers it only
when started with ``--allow-writes``. A bad argument raises :class:`ToolInputError` naming the
input and the fix.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from kag_neo4j.api import KAG
from kag_neo4j.browser import param_line
from kag_neo4j.config import Settings
from kag_neo4j.errors import KagError
from kag_neo4j.solver.results import Citation, KGFact
from kag_neo4j.solver.retrieval import RankedChunk

__all__ = [
    "MAX_K",
    "AskResult",
    "LoadResult",
    "SchemaResult",
    "SearchToolResult",
    "ToolInputError",
    "TraceResult",
    "ask",
    "load",
    "schema",
    "search",
    "trace",
]

#: the most chunks one ``search`` call returns
MAX_K = 50


class ToolInputError(KagError):
    """An argument of an MCP tool call is out of range or names nothing."""


class AskResult(BaseModel):
    question: str
    answer: str
    known: bool = Field(description="false when the evidence was missing (the answer then says so)")
    citations: list[Citation]
    kg_path: list[KGFact]
    run_id: str | None = Field(description="the stored trace (read it with the trace tool); null when not stored")
    warnings: list[str]


class SearchToolResult(BaseModel):
    question: str
    recipe: str
    chunks: list[RankedChunk] = Field(description="best first; ranks: the chunk's rank in each list that found it")
    mentions: list[str] = Field(description="entity mentions found in the question")
    seed_entity_ids: list[str] = Field(description="the entities that seeded Personalized PageRank")
    warnings: list[str] = Field(default_factory=list, description="what this server's retrieval lacks (e.g. no GDS)")


class TraceStep(BaseModel):
    index: int
    op: str
    lf: str = Field(description="the step's logical form")
    source: str
    result: str
    facts: list[dict[str, Any]]
    used: list[dict[str, Any]] = Field(description="chunks and entities the step used, with rank and score")
    error: str | None = None


class TraceResult(BaseModel):
    run_id: str
    question: str
    answer: str
    cited_chunk_ids: list[str]
    steps: list[TraceStep]
    browser_param: str = Field(description="run this line in Neo4j Browser first")
    browser_query: str = Field(description="then this query: it draws the reasoning path")


class SchemaRelation(BaseModel):
    source: str
    name: str
    target: str


class SchemaType(BaseModel):
    name: str
    kind: str
    parent: str | None
    labels: list[str]
    properties: list[str]


class SchemaNamespace(BaseModel):
    namespace: str
    types: list[SchemaType]
    relations: list[SchemaRelation]


class SchemaResult(BaseModel):
    graph_types: list[str] = Field(description="entity types in the graph (its labels and applied schemas' types)")
    graph_relations: list[dict[str, str | None]] = Field(description="relation types, with domain and range when known")
    open_predicates: list[str] = Field(description="the most frequent open-fact predicates")
    schemas: list[SchemaNamespace] = Field(description="the SPG schemas applied with `kag-neo4j schema apply`")


class LoadResult(BaseModel):
    summary: dict[str, Any]
    read_failures: list[str]


def _question(question: str) -> str:
    if not question.strip():
        raise ToolInputError("question is empty: pass the question as text, e.g. {\"question\": \"Who founded X?\"}")
    return question


def ask(kag: KAG, question: str, mode: Literal["static", "iterative"] = "static") -> AskResult:
    answer = kag.ask(_question(question), mode=mode)
    return AskResult(question=answer.question, answer=answer.answer, known=answer.known, citations=answer.citations,
                     kg_path=answer.kg_path, run_id=answer.run_id, warnings=answer.warnings)


def search(kag: KAG, question: str, k: int = 5, recipe: str = "hybrid") -> SearchToolResult:
    if not 1 <= k <= MAX_K:
        raise ToolInputError(f"k={k} is out of range: ask for 1 to {MAX_K} chunks")
    found = kag.search(_question(question), k=k, recipe=recipe)
    return SearchToolResult(question=found.question, recipe=recipe, chunks=found.chunks, mentions=found.mentions,
                            seed_entity_ids=found.seed_entity_ids, warnings=found.warnings)


def _json_list(text: object) -> list[dict[str, Any]]:
    if not isinstance(text, str) or not text:
        return []
    value = json.loads(text)
    return value if isinstance(value, list) else []


def trace(kag: KAG, run_id: str) -> TraceResult:
    from kag_neo4j.browser import browser_query

    view = kag.trace(run_id)  # KagError on a malformed or unknown id
    steps = []
    for item in view.steps:
        step: dict[str, Any] = item["step"]
        steps.append(TraceStep(
            index=int(step.get("index", 0)), op=str(step.get("op", "")), lf=str(step.get("lf", "")),
            source=str(step.get("source", "")), result=str(step.get("result", "")),
            facts=_json_list(step.get("facts")), used=list(item.get("used", [])), error=step.get("error"),
        ))
    run = view.run
    return TraceResult(run_id=run_id, question=str(run.get("question", "")), answer=str(run.get("answer", "")),
                       cited_chunk_ids=view.cited, steps=steps, browser_param=param_line(run_id),
                       browser_query=browser_query(kag.db.kb))


def schema(kag: KAG) -> SchemaResult:
    from kag_neo4j.schema.metagraph import read_schema, stored_namespaces
    from kag_neo4j.solver.graph_schema import read_graph_schema

    vocabulary = read_graph_schema(kag.db)
    namespaces = []
    for name in stored_namespaces(kag.db):
        resolved = read_schema(kag.db, name)
        if resolved is None:
            continue
        namespaces.append(SchemaNamespace(
            namespace=str(resolved.namespace),
            types=[SchemaType(name=t.name, kind=t.kind.value, parent=t.parent, labels=list(t.labels),
                              properties=[p.name for p in t.properties]) for t in resolved.types],
            relations=[SchemaRelation(source=r.source, name=r.name, target=r.target) for r in resolved.relations()],
        ))
    return SchemaResult(
        graph_types=list(vocabulary.types),
        graph_relations=[{"name": spec.name, "domain": spec.domain, "range": spec.range}
                         for spec in vocabulary.relations.values()],
        open_predicates=list(vocabulary.open_predicates),
        schemas=namespaces,
    )


def load(kag: KAG, settings: Settings, paths: list[str], mode: Literal["full", "light"] = "full") -> LoadResult:
    from kag_neo4j.builder.pipeline import LoadOptions
    from kag_neo4j.builder.pipeline import load as load_paths

    if not paths:
        raise ToolInputError("paths is empty: give at least one file or folder on the server's machine")
    missing = [path for path in paths if not Path(path).exists()]
    if missing:
        raise ToolInputError(f"no such file or folder: {', '.join(missing)} (paths are read on the server's machine; "
                             "give absolute paths)")
    summary = load_paths(paths, kag.db, settings, LoadOptions(mode=mode), llm=kag.llm, embedder=kag.embedder)
    data = summary.model_dump()
    return LoadResult(summary=data, read_failures=[str(f) for f in summary.read_failures])

"""The methods an evaluation compares, all on the same graph, embedder and LLM.

Retrieval (passage recall):

==================  =====================================================================
``dense``           our Cypher, vector index only (``RECIPES['dense']``)
``fulltext``        our Cypher, fulltext (BM25) index only
``dense+ppr``       dense + Personalized PageRank seeded by the question's linked entities
``ours``            dense + local PPR in plain Cypher fused by weighted RRF (``RECIPES['hybrid']``)
``ours-gds``        ``ours`` with exact PPR by GDS over the whole projection (``RECIPES['hybrid-gds']``)
``ours-cypher``     ``ours`` with local PPR in plain Cypher, no projection (``RECIPES['hybrid-cypher']``)
``graphrag-vector`` neo4j-graphrag's ``VectorRetriever`` on ``chunk_embedding``
``graphrag-hybrid`` neo4j-graphrag's ``HybridRetriever`` on ``chunk_embedding`` + ``chunk_fulltext``
``naive``           NaiveRAG: dense top-k, and (with QA) the same LLM answers from those passages
``ours-solver``     the logical-form solver's own recall: the chunks its steps used, in the order
                    it used them (needs the LLM; with QA its answer is scored too, from one run)
==================  =====================================================================

Question answering is pluggable: an *answerer* is a callable ``(question, retrieval or None) ->
QAOutput`` (answer, cited chunk ids). ``naive`` answers from its own top-k passages; ``ours``
answers with the logical-form solver when it is installed. Adding another answerer is one line::

    QA_FACTORIES["mine"] = lambda ctx: my_answer_function
"""

from __future__ import annotations

import importlib
import logging
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from kag_neo4j.config import Settings
from kag_neo4j.errors import EvalError
from kag_neo4j.eval.steps import StepOutcome, step_outcomes
from kag_neo4j.models.base import LLM, Embedder
from kag_neo4j.models.usage import Usage
from kag_neo4j.prompts.naive_answer import (
    NAIVE_ANSWER_PROMPT_VERSION,
    NaivePassage,
    naive_answer_messages,
    parse_naive_answer,
)
from kag_neo4j.solver.chunks import RankedChunk
from kag_neo4j.solver.question_search import recipe as search_recipe
from kag_neo4j.solver.question_search import search
from kag_neo4j.solver.results import PlanOrigin
from kag_neo4j.solver.runtime import SolverConfig
from kag_neo4j.store import cypher
from kag_neo4j.store.database import Database
from kag_neo4j.store.lucene import lucene_terms

__all__ = [
    "DEFAULT_METHODS",
    "QA_FACTORIES",
    "RETRIEVAL_FACTORIES",
    "EvalMethod",
    "MethodContext",
    "QAOutput",
    "RetrievalOutput",
    "SeedLinks",
    "available_methods",
    "build_methods",
]

log = logging.getLogger(__name__)

#: what ``kag-neo4j eval`` runs when ``--methods`` is not given
DEFAULT_METHODS: tuple[str, ...] = ("dense", "fulltext", "dense+ppr", "ours", "graphrag-vector", "graphrag-hybrid")


class SeedLinks(BaseModel):
    """What a method that links the question seeded PageRank with (the eval tallies it: ``linking.py``)."""

    mentions: list[str] = Field(default_factory=list, description="the question's mentions")
    seeds: list[str] = Field(default_factory=list, description="the entities they linked to")
    titled: list[str] = Field(default_factory=list, description="the first chunks of the documents they title")


class RetrievalOutput(BaseModel):
    """A method's chunks, best first (``document_id`` is filled in after timing when a retriever lacks it)."""

    chunks: list[RankedChunk]
    details: dict[str, Any] = Field(default_factory=dict)
    steps: list[StepOutcome] | None = Field(default=None, description="a solver run's Retrieval steps")
    plan_origin: PlanOrigin | None = Field(default=None, description="how a solver run's static plan came about")
    links: SeedLinks | None = Field(default=None, description="a linking method's seeds (None: it links nothing)")


class QAOutput(BaseModel):
    """An answer and the chunks it cites. Usage is measured by the runner on the shared ledger."""

    answer: str
    cited_chunk_ids: list[str] = Field(default_factory=list)
    details: dict[str, Any] = Field(default_factory=dict)
    steps: list[StepOutcome] | None = Field(default=None, description="a solver run's Retrieval steps")
    plan_origin: PlanOrigin | None = Field(default=None, description="how a solver run's static plan came about")


RetrieveFn = Callable[[str], RetrievalOutput]
AnswerFn = Callable[[str, RetrievalOutput | None], QAOutput]


@dataclass
class EvalMethod:
    """A named method: a retriever, an answerer, or both. ``config`` is part of the cache key."""

    name: str
    description: str
    retrieve: RetrieveFn | None = None
    answer: AnswerFn | None = None
    answer_uses_retrieval: bool = False
    config: dict[str, Any] = field(default_factory=dict)
    qa_unavailable: str | None = None
    #: run once untimed before timing starts (off for methods whose retrieval calls the LLM)
    warm_up: bool = True


@dataclass
class MethodContext:
    """What every method shares: the graph, the embedder, the LLM (built on first use)."""

    db: Database
    embedder: Embedder
    settings: Settings | None = None
    k: int = 10
    answer_k: int = 5
    link_k: int = 1
    llm_factory: Callable[[], LLM] | None = None
    usage: Usage = field(default_factory=Usage)
    #: the solver's knobs for ``ours`` and ``ours-solver`` (``kag-neo4j eval --solver KEY=VALUE``; None: defaults)
    solver: SolverConfig | None = None
    _llm: LLM | None = None
    _documents: dict[str, str] = field(default_factory=dict)

    def llm(self) -> LLM:
        if self._llm is None:
            if self.llm_factory is None:
                raise EvalError("question answering needs an LLM; pass --llm (or --qa with the configured model)")
            self._llm = self.llm_factory()
        return self._llm

    @property
    def llm_id(self) -> str | None:
        return self._llm.model_id if self._llm is not None else None

    def documents_of(self, chunk_ids: Sequence[str]) -> dict[str, str]:
        """chunk id -> document id (remembered for the run)."""
        missing = [cid for cid in dict.fromkeys(chunk_ids) if cid not in self._documents]
        if missing:
            for row in self.db.read(cypher.query("eval/chunk_documents"), chunk_ids=missing):
                self._documents[row["chunk_id"]] = row["document_id"]
        return {cid: self._documents[cid] for cid in chunk_ids if cid in self._documents}

    def entity_documents(self, entity_ids: Sequence[str]) -> dict[str, list[str]]:
        """entity id -> the documents it leads to in one step of PageRank's graph (mentioned in, titled by)."""
        if not entity_ids:
            return {}
        rows = self.db.read(cypher.query("eval/entity_documents"), entity_ids=list(dict.fromkeys(entity_ids)))
        return {row["entity_id"]: list(row["document_ids"]) for row in rows}


# --- our retrieval (one Cypher statement, procedures/hybrid_retrieval.cypher) ----------------------


def _cypher_method(name: str, recipe: str, description: str, *, linked: bool) -> Callable[[MethodContext], EvalMethod]:
    def build(ctx: MethodContext) -> EvalMethod:
        config = search_recipe(recipe, ctx.k)

        def retrieve(question: str) -> RetrievalOutput:
            found = search(ctx.db, ctx.embedder, question, k=ctx.k, recipe_name=recipe, link_k=ctx.link_k)
            if not linked:
                return RetrievalOutput(chunks=found.chunks)
            links = SeedLinks(mentions=found.mentions, seeds=found.seed_entity_ids, titled=found.seed_title_chunk_ids)
            return RetrievalOutput(chunks=found.chunks, details=links.model_dump(), links=links)

        return EvalMethod(name=name, description=description, retrieve=retrieve,
                          config={"recipe": recipe, **config.model_dump(), "linked": linked, "link_k": ctx.link_k})

    return build


# --- neo4j-graphrag's retrievers on the same indexes -----------------------------------------------


def _quiet_graphrag() -> None:
    # neo4j-graphrag 1.22 warns on every search that its default 'id' field will go in 2.0; we
    # read our own properties (return_properties), so the warning says nothing about this use.
    warnings.filterwarnings("ignore", message="The default returned 'id' field", category=DeprecationWarning)


def _graphrag_item(record: Any) -> Any:
    from neo4j_graphrag.types import RetrieverResultItem

    node = record.get("node") or {}
    return RetrieverResultItem(content=node.get("text") or "", metadata={
        "chunk_id": node.get("id"), "title": node.get("title"), "score": record.get("score")})


def _graphrag_output(result: Any) -> RetrievalOutput:
    chunks = [
        RankedChunk(chunk_id=item.metadata["chunk_id"], title=item.metadata.get("title"), text=item.content or "",
                    score=item.metadata.get("score") or 0.0)
        for item in result.items
        if item.metadata and item.metadata.get("chunk_id")
    ]
    return RetrievalOutput(chunks=chunks)


def _graphrag_vector(ctx: MethodContext) -> EvalMethod:
    from neo4j_graphrag.retrievers import VectorRetriever

    from kag_neo4j.models.graphrag import as_graphrag_embedder

    _quiet_graphrag()
    retriever = VectorRetriever(
        ctx.db.driver, ctx.db.kb.stored("chunk_embedding"), as_graphrag_embedder(ctx.embedder),
        return_properties=["id", "title", "text"], result_formatter=_graphrag_item, neo4j_database=ctx.db.database,
    )

    def retrieve(question: str) -> RetrievalOutput:
        return _graphrag_output(retriever.search(query_text=question, top_k=ctx.k))

    return EvalMethod(name="graphrag-vector", description="neo4j-graphrag VectorRetriever (chunk_embedding)",
                      retrieve=retrieve, config={"top_k": ctx.k, "index": "chunk_embedding"})


def _graphrag_hybrid(ctx: MethodContext) -> EvalMethod:
    from neo4j.exceptions import ClientError
    from neo4j_graphrag.exceptions import SearchQueryParseError
    from neo4j_graphrag.retrievers import HybridRetriever

    from kag_neo4j.models.graphrag import as_graphrag_embedder

    _quiet_graphrag()
    retriever = HybridRetriever(
        ctx.db.driver, ctx.db.kb.stored("chunk_embedding"), ctx.db.kb.stored("chunk_fulltext"),
        as_graphrag_embedder(ctx.embedder),
        return_properties=["id", "title", "text"], result_formatter=_graphrag_item, neo4j_database=ctx.db.database,
    )

    def retrieve(question: str) -> RetrievalOutput:
        # The question goes in as its user would pass it; only a question Lucene cannot parse is
        # retried with its words escaped (and the row says so).
        try:
            return _graphrag_output(retriever.search(query_text=question, top_k=ctx.k))
        except (SearchQueryParseError, ClientError) as exc:
            # neo4j-graphrag maps Lucene's ParseException only; a lexical error ('/' opens a regex)
            # arrives as the server's ClientError
            if isinstance(exc, ClientError) and "org.apache.lucene.queryparser" not in str(exc):
                raise
            vector = ctx.embedder.embed_query(question)
            output = _graphrag_output(retriever.search(query_text=lucene_terms(question), query_vector=vector,
                                                       top_k=ctx.k))
            output.details["lucene_escaped"] = True
            return output

    return EvalMethod(name="graphrag-hybrid", description="neo4j-graphrag HybridRetriever (naive ranker)",
                      retrieve=retrieve, config={"top_k": ctx.k, "ranker": "naive"})


# --- question answering --------------------------------------------------------------------------


def naive_answerer(ctx: MethodContext) -> AnswerFn:
    """NaiveRAG: the first ``answer_k`` distinct passages of the retrieval + one LLM call."""

    def answer(question: str, retrieval: RetrievalOutput | None) -> QAOutput:
        chunks: list[RankedChunk] = []
        documents: set[str] = set()
        for chunk in retrieval.chunks if retrieval else []:
            key = chunk.document_id or chunk.chunk_id
            if key in documents or not chunk.text:
                continue
            documents.add(key)
            chunks.append(chunk)
            if len(chunks) == ctx.answer_k:
                break
        passages = [NaivePassage(title=c.title, text=c.text or "") for c in chunks]
        reply = ctx.llm().generate(naive_answer_messages(question, passages), stage="answer", max_tokens=64)
        parsed = parse_naive_answer(reply, len(passages))
        cited = [chunks[n - 1].chunk_id for n in parsed.sources] or [c.chunk_id for c in chunks]
        return QAOutput(answer=parsed.answer, cited_chunk_ids=cited, details={"reply": reply})

    return answer


def solver_answerer(ctx: MethodContext) -> AnswerFn | None:
    """The logical-form solver (``KAG(...).ask``) as an answerer; ``None`` while it is not installed.

    Runs are not traced (``trace=False``): an evaluation leaves the knowledge base as it found it.
    """
    try:
        api = importlib.import_module("kag_neo4j.api")
    except ImportError:
        return None
    kag = api.KAG(ctx.db, ctx.llm(), ctx.embedder, config=ctx.solver)

    def answer(question: str, _retrieval: RetrievalOutput | None) -> QAOutput:
        result = kag.ask(question, trace=False)
        cited = list(dict.fromkeys(citation.chunk_id for citation in result.citations))
        return QAOutput(answer=result.answer, cited_chunk_ids=cited, steps=step_outcomes(result),
                        plan_origin=result.plan_origin,
                        details={"known": result.known, "plan": result.plan, "kg_path": len(result.kg_path)})

    return answer


# --- the solver's own recall ----------------------------------------------------------------------


def _solver_recall(ctx: MethodContext) -> EvalMethod:
    """``ours-solver``: one untraced ``KAG.ask`` per question; its ranking is the chunks the run
    retrieved, cited first, then first use first (:func:`kag_neo4j.solver.used_chunks.used_chunks`)."""
    from kag_neo4j.api import KAG
    from kag_neo4j.solver.used_chunks import used_chunks

    if ctx.llm_factory is None:
        raise EvalError("ours-solver runs the logical-form solver, which needs an LLM; pass --llm provider:model "
                        "(or --qa with the configured model)")
    kag = KAG(ctx.db, ctx.llm(), ctx.embedder, config=ctx.solver)

    def retrieve(question: str) -> RetrievalOutput:
        answer = kag.ask(question, trace=False)
        chunks = [RankedChunk(chunk_id=c.chunk_id, score=c.score) for c in used_chunks(answer)]
        cited = list(dict.fromkeys(citation.chunk_id for citation in answer.citations))
        solver = {"answer": answer.answer, "known": answer.known, "cited": cited, "plan": answer.plan,
                  "kg_path": len(answer.kg_path)}
        return RetrievalOutput(chunks=chunks, steps=step_outcomes(answer), plan_origin=answer.plan_origin,
                               details={"solver": solver})

    return EvalMethod(name="ours-solver",
                      description="the solver's recall: chunks its run retrieved, cited first, then in order of use",
                      retrieve=retrieve, warm_up=False,
                      config={"solver": kag.config.model_dump(mode="json"), "llm": kag.llm.model_id})


def solver_recall_answerer(_ctx: MethodContext) -> AnswerFn:
    """``ours-solver`` with QA: the answer of the run its retrieval already made (no second run)."""

    def answer(question: str, retrieval: RetrievalOutput | None) -> QAOutput:
        solved = retrieval.details.get("solver") if retrieval is not None else None
        if not isinstance(solved, dict):
            raise EvalError(f"ours-solver has no solver run for {question!r} to take the answer from")
        return QAOutput(answer=str(solved["answer"]), cited_chunk_ids=list(solved["cited"]))

    return answer


RETRIEVAL_FACTORIES: dict[str, Callable[[MethodContext], EvalMethod]] = {
    "dense": _cypher_method("dense", "dense", "vector index only (our Cypher)", linked=False),
    "fulltext": _cypher_method("fulltext", "fulltext", "fulltext BM25 only (our Cypher)", linked=False),
    "dense+ppr": _cypher_method("dense+ppr", "dense+ppr", "dense + PPR from linked entities, RRF", linked=True),
    "ours": _cypher_method("ours", "hybrid", "the default recipe: dense + local PPR (seeded by exact names and the "
                           "documents they title), RRF", linked=True),
    "ours-gds": _cypher_method("ours-gds", "hybrid-gds", "ours, with exact PPR by GDS over the whole projection",
                               linked=True),
    "ours-cypher": _cypher_method("ours-cypher", "hybrid-cypher", "ours, with local PPR in plain Cypher (no GDS)",
                                  linked=True),
    "graphrag-vector": _graphrag_vector,
    "graphrag-hybrid": _graphrag_hybrid,
    "naive": _cypher_method("naive", "dense", "NaiveRAG: dense top-k (+ the LLM for QA)", linked=False),
    "ours-solver": _solver_recall,
}

#: name -> factory of an answerer (``None`` when the answerer is not available in this install)
QA_FACTORIES: dict[str, Callable[[MethodContext], AnswerFn | None]] = {
    "naive": naive_answerer,
    "ours": solver_answerer,
    "ours-solver": solver_recall_answerer,
}

#: answerers that read the method's own retrieval (their latency includes it)
_USES_RETRIEVAL = {"naive", "ours-solver"}


def available_methods() -> list[str]:
    return sorted(set(RETRIEVAL_FACTORIES) | set(QA_FACTORIES))


def parse_methods(text: str | Sequence[str] | None, *, qa: bool) -> list[str]:
    """Method names from ``dense,ours`` (or a list); unknown names are an :class:`EvalError`."""
    if text is None:
        names = list(DEFAULT_METHODS) + (["naive"] if qa else [])
    elif isinstance(text, str):
        names = [name.strip() for name in text.split(",") if name.strip()]
    else:
        names = [name.strip() for name in text if name.strip()]
    known = set(available_methods())
    unknown = [name for name in names if name not in known]
    if unknown:
        raise EvalError(f"unknown method(s) {', '.join(unknown)}; choose from {', '.join(available_methods())}")
    if not names:
        raise EvalError(f"--methods is empty; choose from {', '.join(available_methods())}")
    return list(dict.fromkeys(names))


def build_methods(names: Sequence[str], ctx: MethodContext, *, qa: bool) -> list[EvalMethod]:
    """The methods to compare; with ``qa`` their answerers are attached (when available)."""
    methods = []
    for name in names:
        factory = RETRIEVAL_FACTORIES.get(name)
        method = factory(ctx) if factory else EvalMethod(name=name, description=f"{name} (QA only)")
        if qa and name in QA_FACTORIES:
            started = time.monotonic()
            answerer = QA_FACTORIES[name](ctx)
            if answerer is None:
                method.qa_unavailable = f"{name}: its answerer is not installed in this checkout"
            else:
                method.answer = answerer
                method.answer_uses_retrieval = name in _USES_RETRIEVAL
                solver = (ctx.solver or SolverConfig()).model_dump(mode="json")
                method.config["qa"] = {"answer_k": ctx.answer_k, "prompt": NAIVE_ANSWER_PROMPT_VERSION} \
                    if name == "naive" else {"answerer": name, "solver": solver}
            log.debug("answerer %s ready in %.2fs", name, time.monotonic() - started)
        if method.retrieve is None and method.answer is None:
            raise EvalError(method.qa_unavailable or f"method {name} has nothing to run without --qa")
        methods.append(method)
    return methods

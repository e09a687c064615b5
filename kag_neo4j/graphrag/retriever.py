"""kag-neo4j's retrieval as neo4j-graphrag (1.22) retrievers, for ``GraphRAG(retriever=..., llm=...)``.

* :class:`KagHybridRetriever` — single-shot hybrid retrieval (no LLM): the question's mentions are
  linked to entities that seed Personalized PageRank, and ``procedures/hybrid_retrieval.cypher``
  fuses dense, fulltext and PPR ranks (:func:`kag_neo4j.solver.question_search.search`). Each
  item is a chunk: ``content`` its text, ``metadata`` its ``chunk_id``, ``document_id``,
  ``title``, fused ``score``, ``rank`` in the fusion and ``ranks`` (list -> rank in each list
  that found it: ``dense``, ``fulltext``, ``ppr``).
* :class:`KagSolverRetriever` — the logical-form solver (:meth:`kag_neo4j.api.KAG.ask`): the
  items are the chunks the run cited, then the other chunks it retrieved (its question search,
  then its steps), in the order it used them (:func:`kag_neo4j.solver.used_chunks.used_chunks`);
  the result's ``metadata`` holds the run id, the solver's answer and its sub-questions, so a
  pipeline can generate from (or next to) them.

Both take a ``neo4j.Driver`` plus ``neo4j_database`` (as neo4j-graphrag's retrievers do) or our
:class:`~kag_neo4j.store.database.Database`, and our embedder or a neo4j-graphrag ``Embedder``;
``kb`` names the knowledge base to retrieve from (:mod:`kag_neo4j.store.knowledge_base`; default:
the Database's, else ``default``).
Like every neo4j-graphrag retriever, construction checks the Neo4j version and sets the
driver's user agent to neo4j-graphrag's. Reads run in read transactions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import neo4j
from neo4j_graphrag.embeddings.base import Embedder as GraphragEmbedderBase
from neo4j_graphrag.retrievers.base import Retriever
from neo4j_graphrag.types import RawSearchResult, RetrieverResultItem

from kag_neo4j.api import KAG
from kag_neo4j.models.base import LLM, Embedder
from kag_neo4j.models.graphrag import GraphragLLM, as_kag_embedder
from kag_neo4j.solver.question_search import search
from kag_neo4j.solver.runtime import SolverConfig
from kag_neo4j.solver.solve import Mode
from kag_neo4j.solver.used_chunks import used_chunks
from kag_neo4j.store import cypher
from kag_neo4j.store.database import Database

__all__ = ["KagHybridRetriever", "KagSolverRetriever"]

Formatter = Callable[[neo4j.Record], RetrieverResultItem]
AnyEmbedder = Embedder | GraphragEmbedderBase


def _database(driver: neo4j.Driver | Database, neo4j_database: str | None, kb: str | None) -> Database:
    if isinstance(driver, Database):
        if neo4j_database is not None and neo4j_database != driver.database:
            raise ValueError(
                f"neo4j_database={neo4j_database!r} but the Database given is connected to {driver.database!r}; "
                "pass one or the other"
            )
        return driver if kb is None or kb == driver.kb.name else driver.in_kb(kb)
    if isinstance(driver, neo4j.Driver):
        return Database.from_driver(driver, neo4j_database, kb=kb)
    raise TypeError(
        f"a retriever needs a neo4j.Driver (with neo4j_database) or a kag_neo4j Database, got {type(driver).__name__}"
    )


def _chunk_item(record: neo4j.Record) -> RetrieverResultItem:
    metadata = {key: record[key] for key in record.keys() if key != "text"}
    return RetrieverResultItem(content=record["text"] or "", metadata=metadata)


class KagHybridRetriever(Retriever):
    """Hybrid retrieval (``KAG.search``: dense + PPR fused by RRF) as a neo4j-graphrag ``Retriever``.

    ``recipe`` names one of ``kag_neo4j.solver.retrieval.RECIPES`` (``hybrid``, ``dense``,
    ``fulltext``, ``dense+ppr``); ``search(..., recipe=...)`` overrides it per call. ``link_k``
    entities are linked per mention of the question.
    """

    def __init__(
        self,
        driver: neo4j.Driver | Database,
        embedder: AnyEmbedder,
        *,
        neo4j_database: str | None = None,
        kb: str | None = None,
        recipe: str = "hybrid",
        link_k: int = 1,
        result_formatter: Formatter | None = None,
    ) -> None:
        self.db = _database(driver, neo4j_database, kb)
        super().__init__(self.db.driver, self.db.database)
        self.embedder = as_kag_embedder(embedder)
        self.recipe = recipe
        self.link_k = link_k
        self.result_formatter = result_formatter

    def get_search_results(self, query_text: str, top_k: int = 5, recipe: str | None = None) -> RawSearchResult:
        """The ``top_k`` chunks for ``query_text`` by hybrid retrieval (no LLM).

        Args:
            query_text (str): The question.
            top_k (int): How many chunks to return (default 5).
            recipe (str): A retrieval recipe (``hybrid``, ``dense``, ``fulltext``, ``dense+ppr``).

        Returns:
            RawSearchResult: one record per chunk, best first; metadata: the recipe, the question's
            mentions and the entity ids that seeded PageRank.
        """
        name = recipe or self.recipe
        found = search(self.db, self.embedder, query_text, k=top_k, recipe_name=name, link_k=self.link_k)
        records = [
            neo4j.Record({
                "chunk_id": chunk.chunk_id, "document_id": chunk.document_id, "title": chunk.title,
                "text": chunk.text, "score": chunk.score, "rank": rank, "ranks": dict(chunk.ranks),
            })
            for rank, chunk in enumerate(found.chunks, start=1)
        ]
        return RawSearchResult(records=records, metadata={
            "recipe": name, "mentions": found.mentions, "seed_entity_ids": found.seed_entity_ids})

    def default_record_formatter(self, record: neo4j.Record) -> RetrieverResultItem:
        return _chunk_item(record)


class KagSolverRetriever(Retriever):
    """The logical-form solver as a neo4j-graphrag ``Retriever``: the chunks a run cited and used.

    Each ``search`` is one :meth:`kag_neo4j.api.KAG.ask` (LLM calls: plan, sub-answers, judge,
    answer). ``trace`` stores the run as a ``(:KagRun)`` (its id is in the result's metadata);
    ``only_cited`` returns the cited chunks alone.
    """

    def __init__(
        self,
        driver: neo4j.Driver | Database,
        embedder: AnyEmbedder,
        llm: LLM | GraphragLLM,
        *,
        neo4j_database: str | None = None,
        kb: str | None = None,
        config: SolverConfig | None = None,
        mode: Mode = "static",
        trace: bool = True,
        only_cited: bool = False,
        result_formatter: Formatter | None = None,
    ) -> None:
        self.db = _database(driver, neo4j_database, kb)
        super().__init__(self.db.driver, self.db.database)
        model = llm.llm if isinstance(llm, GraphragLLM) else llm
        self.kag = KAG(self.db, model, as_kag_embedder(embedder), config=config)
        self.mode: Mode = mode
        self.trace = trace
        self.only_cited = only_cited
        self.result_formatter = result_formatter

    def get_search_results(self, query_text: str, top_k: int | None = None, mode: Mode | None = None) -> RawSearchResult:
        """Answer ``query_text`` with the solver; the chunks it cited, then those its steps used.

        Args:
            query_text (str): The question.
            top_k (int): At most this many chunks (default: all of them).
            mode (str): ``static`` (plan the whole DAG at once) or ``iterative``.

        Returns:
            RawSearchResult: one record per chunk; metadata: ``run_id``, ``answer``, ``known``,
            ``sub_questions`` (step, question, logical form, outputs, source) and ``kg_path``.
        """
        answer = self.kag.ask(query_text, trace=self.trace, mode=mode or self.mode)
        chunks = [c for c in used_chunks(answer) if c.cited or not self.only_cited]  # cited first
        if top_k is not None:
            chunks = chunks[:top_k]
        rows = {row["chunk_id"]: row for row in self.db.read(
            cypher.query("solver/chunks_by_id"), chunk_ids=[c.chunk_id for c in chunks])}
        records = [
            neo4j.Record({
                "chunk_id": c.chunk_id, "document_id": rows[c.chunk_id]["document_id"],
                "title": rows[c.chunk_id]["title"], "text": rows[c.chunk_id]["text"], "cited": c.cited,
                "step": c.step, "rank": c.rank, "score": c.score, "steps": c.steps,
            })
            for c in chunks
            if c.chunk_id in rows  # a chunk deleted since the run read it is not handed on
        ]
        sub_questions: list[dict[str, Any]] = [
            {"index": s.index, "step": s.step, "question": s.question, "lf": s.lf, "outputs": s.outputs,
             "source": s.source}
            for s in answer.steps if s.op == "Retrieval"
        ]
        return RawSearchResult(records=records, metadata={
            "run_id": answer.run_id, "answer": answer.answer, "known": answer.known, "sub_questions": sub_questions,
            "kg_path": [fact.text() for fact in answer.kg_path], "warnings": list(answer.warnings)})

    def default_record_formatter(self, record: neo4j.Record) -> RetrieverResultItem:
        return _chunk_item(record)

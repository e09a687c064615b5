"""The solver's runtime: configuration, and the two doors to the outside — Neo4j and the LLM.

Every question-time query goes through the step's :meth:`Runtime.runner` (a
:class:`~kag_neo4j.store.runner.QueryRunner`: a read transaction; the statement comes from a
``.cypher`` file and every value is a parameter) and is written down, with its exact parameters,
in the step's :class:`~kag_neo4j.solver.results.QueryRecord` for the trace: the step's own
queries (:meth:`Runtime.read`) and those of linking, hybrid retrieval and projection upkeep, which
take the runner. Every model call goes through
:meth:`Runtime.ask`, which records its tokens on the step.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from kag_neo4j.models.base import LLM, ChatMessage, Embedder
from kag_neo4j.prompts.context import EvidenceBudget, Language
from kag_neo4j.resources import ResourceFolder
from kag_neo4j.solver.memory import Memory
from kag_neo4j.solver.results import QueryRecord, StepRecord
from kag_neo4j.solver.retrieval import RankedList, RetrievalConfig
from kag_neo4j.store import cypher
from kag_neo4j.store.database import Capabilities, Database
from kag_neo4j.store.knowledge_base import KnowledgeBase

__all__ = ["Runtime", "SolverConfig", "StepRunner", "elide"]

M = TypeVar("M", bound=BaseModel)


class SolverConfig(BaseModel):
    """Knobs of the solver (defaults suit a local 1.5B model: few calls, short prompts)."""

    model_config = ConfigDict(extra="forbid")  # a misspelt knob is an error, not a silent default

    #: supplementary judge rounds when the plan's output is not bound (each: 1 LLM call + 1 search)
    max_rounds: int = Field(default=2, ge=0, le=10)
    #: steps the iterative planner may add
    max_iterations: int = Field(default=6, ge=1, le=20)
    #: independent steps of one DAG layer run in this many threads
    concurrency: int = Field(default=4, ge=1, le=32)
    #: chunks the run's first record (``Search``) retrieves for the question itself, before planning, by
    #: single-shot search (the ``hybrid`` recipe of ``KAG.search``); 0 skips it. They lead the run's
    #: uncited chunks (:mod:`kag_neo4j.solver.used_chunks`), and the judge reads them beside the steps' chunks
    question_k: int = Field(default=10, ge=0, le=50)
    #: chunks a step retrieves when graph facts do not answer it
    chunk_k: int = Field(default=4, ge=1, le=50)
    #: passages the judge and the final answer see
    judge_passages: int = Field(default=5, ge=1, le=50)
    #: candidate entities per mention
    link_k: int = Field(default=3, ge=1, le=20)
    #: how close a linked entity's name must be to the mention to anchor a hop (else: PPR seed only)
    name_threshold: float = Field(default=0.8, ge=0, le=1)
    #: how well a stored predicate must match the plan's to answer without a model
    predicate_threshold: float = Field(default=0.85, ge=0, le=1)
    #: open facts need this confidence to answer without a model (schema relations always qualify)
    graph_confidence: float = Field(default=0.75, ge=0, le=1)
    #: facts one hop reads for the predicate it asks (a set question's answer is at most this long:
    #: a hop cut here says so in ``Answer.warnings``); 100 keeps KAG's supplychain chain whole (38 companies)
    hop_limit: int = Field(default=100, ge=1, le=1000)
    widen_limit: int = Field(default=40, ge=1, le=1000)
    budget: EvidenceBudget = Field(default_factory=EvidenceBudget)
    retrieval: RetrievalConfig = Field(default_factory=lambda: RetrievalConfig(k=4))
    plan_max_tokens: int = Field(default=400, ge=32)
    #: times a planner reply that does not parse is sent back with what is wrong with it, before the
    #: one-step fallback plan. 0 by default: with the offline 1.5B model 1 repair in 30 gave a usable
    #: plan (BENCHMARKS.md), at the cost of a second planning call; a larger model may gain from 1
    plan_repairs: int = Field(default=0, ge=0, le=3)
    #: skip planning: every static run is the one-step plan (retrieve chunks for the question itself,
    #: answer from them), with ``plan_origin`` "one step" — no planning call, no hops
    one_step: bool = False
    #: a step that reads one earlier result asks its sub-question with that result's name in place of
    #: the phrase that refers to it ("Who was in charge of that country?" -> "… of Somalia?";
    #: :mod:`kag_neo4j.solver.sub_question`)
    spell_out_references: bool = True
    #: a sub-answer that only repeats the earlier result its step starts from ("Somalia" for "who
    #: was in charge of that country?") is asked once more, told it is not the answer (stage
    #: ``subanswer-again``), and a second such reply leaves the step unanswered; false keeps the first reply
    reask_echo: bool = True
    #: a step whose sub-question asks a place or a time while the plan types its answer otherwise
    #: ("Where was that director born?" over ``o2:Date``) is answered as the words ask: no type hint
    #: for a place, a date for a time (:func:`kag_neo4j.solver.sub_question.asked_kind`)
    words_over_type: bool = True
    subanswer_max_tokens: int = Field(default=64, ge=8)
    deduce_max_tokens: int = Field(default=128, ge=8)
    judge_max_tokens: int = Field(default=128, ge=16)
    answer_max_tokens: int = Field(default=96, ge=8)


def elide(params: dict[str, Any]) -> dict[str, Any]:
    """Parameters fit for the trace: vectors become ``<384-d vector>``."""
    out: dict[str, Any] = {}
    for key, value in params.items():
        if (
            isinstance(value, Sequence)
            and not isinstance(value, str)
            and len(value) > 16
            and all(isinstance(v, float) for v in value[:16])
        ):
            out[key] = f"<{len(value)}-d vector>"
        else:
            out[key] = value
    return out


class StepRunner:
    """A :class:`~kag_neo4j.store.runner.QueryRunner` that notes every query on one step record:
    its name, text, parameters (vectors elided), row count and time, and the error of a query
    that failed (then re-raised)."""

    def __init__(self, db: Database, record: StepRecord) -> None:
        self._db = db
        self._record = record

    @property
    def database(self) -> str:
        return self._db.database

    @property
    def kb(self) -> KnowledgeBase:
        return self._db.kb

    @property
    def capabilities(self) -> Capabilities:
        return self._db.capabilities

    def query(self, name: str, folder: ResourceFolder = "cypher", /, **params: Any) -> list[dict[str, Any]]:
        text = cypher.query(name, folder)
        began = time.perf_counter()
        error: str | None = None
        rows: list[dict[str, Any]] = []
        try:
            rows = self._db.read(text, **params)
            return rows
        except Exception as exc:
            error = " ".join(str(exc).split())[:300] or type(exc).__name__
            raise
        finally:
            shown, shown_params = self._db.kb.scope(text, elide(params))  # as it ran, for Neo4j Browser
            self._record.queries.append(
                QueryRecord(
                    name=f"{folder}/{name}", cypher=shown, params=shown_params, rows=len(rows),
                    ms=round((time.perf_counter() - began) * 1000, 2), error=error,
                )
            )


class Runtime:
    """What every operator of one run shares."""

    def __init__(
        self,
        db: Database,
        llm: LLM,
        embedder: Embedder,
        *,
        config: SolverConfig,
        language: Language,
        memory: Memory | None = None,
        extra_lists: Sequence[RankedList] = (),
        question: str = "",
    ) -> None:
        self.db = db
        #: the question the run answers (each step also has its own sub-question)
        self.question = question
        self.llm = llm
        self.embedder = embedder
        self.config = config
        self.language: Language = language
        self.memory = memory or Memory()
        #: custom ranked lists every chunk retrieval of the run fuses in
        self.extra_lists = tuple(extra_lists)
        self._lock = threading.Lock()
        self.records: list[StepRecord] = []
        #: what the answer should say was left out or went wrong (``Answer.warnings``)
        self.warnings: list[str] = []

    # ---- records ------------------------------------------------------------------------------

    def new_record(self, op: str, **fields: Any) -> StepRecord:
        with self._lock:
            record = StepRecord(index=len(self.records), op=op, **fields)
            self.records.append(record)
            return record

    def warn(self, message: str) -> None:
        """Note ``message`` for the run's ``Answer.warnings`` (once)."""
        with self._lock:
            if message not in self.warnings:
                self.warnings.append(message)

    # ---- Neo4j --------------------------------------------------------------------------------

    def runner(self, record: StepRecord) -> StepRunner:
        """The :class:`~kag_neo4j.store.runner.QueryRunner` of ``record``'s step: linking,
        retrieval, projection and custom ranked lists run their queries through it."""
        return StepRunner(self.db, record)

    def read(
        self, record: StepRecord, name: str, folder: ResourceFolder = "cypher", **params: Any
    ) -> list[dict[str, Any]]:
        """Run ``<folder>/<name>.cypher`` in a read transaction and note it on ``record``."""
        return self.runner(record).query(name, folder, **params)

    # ---- LLM ----------------------------------------------------------------------------------

    def ask(
        self,
        record: StepRecord,
        messages: Sequence[ChatMessage],
        response_model: type[M],
        *,
        stage: str,
        max_tokens: int,
    ) -> M:
        """One structured model call; its tokens are added to ``record``."""
        value, completion = self.llm.complete_object(messages, response_model, stage=stage, max_tokens=max_tokens)
        record.llm_calls += 0 if completion.cached else 1
        record.prompt_tokens += completion.prompt_tokens
        record.completion_tokens += completion.completion_tokens
        return value

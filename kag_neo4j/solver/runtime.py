"""The solver's runtime: configuration, and the two doors to the outside — Neo4j and the LLM.

Every question-time query goes through :meth:`Runtime.read` (a read transaction; the statement
comes from a ``.cypher`` file and every value is a parameter) and is written down in the step's
:class:`~kag_neo4j.solver.results.QueryRecord` for the trace. Every model call goes through
:meth:`Runtime.ask`, which records its tokens on the step.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, Field

from kag_neo4j.models.base import LLM, ChatMessage, Embedder
from kag_neo4j.prompts.context import EvidenceBudget, Language
from kag_neo4j.solver.memory import Memory
from kag_neo4j.solver.results import QueryRecord, StepRecord
from kag_neo4j.solver.retrieval import RetrievalConfig
from kag_neo4j.store import cypher
from kag_neo4j.store.database import Database

__all__ = ["Runtime", "SolverConfig", "elide"]

M = TypeVar("M", bound=BaseModel)


class SolverConfig(BaseModel):
    """Knobs of the solver (defaults suit a local 1.5B model: few calls, short prompts)."""

    #: supplementary judge rounds when the plan's output is not bound (each: 1 LLM call + 1 search)
    max_rounds: int = Field(default=2, ge=0, le=10)
    #: steps the iterative planner may add
    max_iterations: int = Field(default=6, ge=1, le=20)
    #: independent steps of one DAG layer run in this many threads
    concurrency: int = Field(default=4, ge=1, le=32)
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
    hop_limit: int = Field(default=25, ge=1, le=1000)
    widen_limit: int = Field(default=40, ge=1, le=1000)
    budget: EvidenceBudget = Field(default_factory=EvidenceBudget)
    retrieval: RetrievalConfig = Field(default_factory=lambda: RetrievalConfig(k=4))
    plan_max_tokens: int = Field(default=400, ge=32)
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
    ) -> None:
        self.db = db
        self.llm = llm
        self.embedder = embedder
        self.config = config
        self.language: Language = language
        self.memory = memory or Memory()
        self._lock = threading.Lock()
        self.records: list[StepRecord] = []

    # ---- records ------------------------------------------------------------------------------

    def new_record(self, op: str, **fields: Any) -> StepRecord:
        with self._lock:
            record = StepRecord(index=len(self.records), op=op, **fields)
            self.records.append(record)
            return record

    # ---- Neo4j --------------------------------------------------------------------------------

    def read(
        self, record: StepRecord, name: str, folder: str = "cypher", **params: Any
    ) -> list[dict[str, Any]]:
        """Run ``<folder>/<name>.cypher`` in a read transaction and note it on ``record``."""
        text = cypher.query(name, folder)  # type: ignore[arg-type]
        began = time.perf_counter()
        rows = self.db.read(text, **params)
        self.note_query(record, f"{folder}/{name}", text, params, rows=len(rows), began=began)
        return rows

    def note_query(
        self,
        record: StepRecord,
        name: str,
        text: str,
        params: dict[str, Any],
        *,
        rows: int,
        began: float,
    ) -> None:
        record.queries.append(
            QueryRecord(
                name=name,
                cypher=text,
                params=elide(params),
                rows=rows,
                ms=round((time.perf_counter() - began) * 1000, 2),
            )
        )

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

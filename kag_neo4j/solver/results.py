"""What a question run returns: the :class:`Answer`, its citations, KG path and step records.

A :class:`StepRecord` is one executed unit (an action of the plan, or a judge / supplementary /
answer round). It holds everything the trace stores in ``(:KagStep)``: the logical form, the
Cypher it ran with its parameters, timings, token counts and what it used.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

__all__ = [
    "Answer",
    "Citation",
    "KGFact",
    "PlanOrigin",
    "QueryRecord",
    "RunConfig",
    "StepRecord",
    "Used",
]

Layer = Literal["schema", "open", "property"]


class Citation(BaseModel):
    """A chunk the answer rests on."""

    document_id: str
    chunk_id: str
    title: str | None = None
    text: str = Field(description="a snippet of the chunk")


class KGFact(BaseModel):
    """One fact of the knowledge graph the answer used: ``subject -predicate-> object``.

    ``layer`` says which knowledge layer it came from: a schema relation, an open fact
    (``:RELATED``) or a property of the subject (``object_id`` is then ``None``). A fact a rule
    derived (``kag-neo4j rules apply``) names the rule and its version.
    """

    subject: str
    subject_id: str
    predicate: str
    object: str
    object_id: str | None = None
    layer: Layer
    chunk_ids: list[str] = Field(default_factory=list)
    confidence: float = 1.0
    #: the rule that derived the fact (its id) and the rule's version; None for a loaded fact
    derived_by: str | None = None
    rule_version: str | None = None

    def text(self) -> str:
        return f"{self.subject} -[{self.predicate}]-> {self.object}"


class QueryRecord(BaseModel):
    """One Cypher statement a step ran (parameters with vectors elided)."""

    name: str
    cypher: str
    params: dict[str, Any] = Field(default_factory=dict)
    rows: int = 0
    ms: float = 0.0
    error: str | None = Field(default=None, description="why the statement failed (it was then retried or raised)")


class Used(BaseModel):
    """A chunk or entity a step used, with its rank in that step and a score."""

    kind: Literal["Chunk", "Entity"]
    id: str
    rank: int
    score: float = 0.0


Source = Literal[
    "graph", "chunks", "graph+chunks", "math", "deduce", "deduce+llm", "sort", "output", "judge", "answer",
    "plan", "operator", "none",
]


class StepRecord(BaseModel):
    """One executed unit of a run (see the module docs)."""

    index: int
    op: str
    step: int | None = Field(default=None, description="the plan's Step number")
    action: int | None = Field(default=None, description="the plan's Action number")
    question: str = ""
    lf: str = Field(default="", description="the logical form that ran")
    layer: int | None = Field(default=None, description="the DAG layer (steps in one layer ran concurrently)")
    depends_on: list[int] = Field(default_factory=list, description="indices of the records this one read from")
    source: Source = "none"
    outputs: dict[str, str] = Field(default_factory=dict, description="alias -> value it was bound to")
    facts: list[KGFact] = Field(default_factory=list)
    #: of ``facts`` given to a sub-answer (a ``graph+chunks`` step), those whose other end is an entity
    #: the answer named: the graph facts the answer rests on, in the run's KG path
    answer_facts: list[KGFact] = Field(default_factory=list)
    used: list[Used] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list, description="ids of the chunks that support the outputs")
    queries: list[QueryRecord] = Field(default_factory=list)
    ms: float = 0.0
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    note: str = ""
    error: str | None = None

    @property
    def chunk_ids(self) -> list[str]:
        return [item.id for item in self.used if item.kind == "Chunk"]


class RunConfig(BaseModel):
    """What a run was configured with (built by :func:`kag_neo4j.solver.run_config.run_config`;
    stored on its ``(:KagRun)``)."""

    solver: dict[str, Any] = Field(description="the SolverConfig, as JSON data")
    embedder: str
    graph_version: int
    prompt_versions: dict[str, str] = Field(default_factory=dict)
    ranked_lists: dict[str, float] = Field(default_factory=dict, description="custom ranked list -> weight")


#: how a static plan came about (:meth:`kag_neo4j.solver.planner.Planner.plan`): its first reply
#: parsed, the reply to a repair message did, neither (the one-step fallback plan), or the solver was
#: configured to skip planning (``SolverConfig.one_step``: the same one-step plan, no planning call)
PlanOrigin = Literal["first try", "repaired", "fallback", "one step"]


class Answer(BaseModel):
    """The result of :meth:`kag_neo4j.api.KAG.ask`.

    ``known`` is false when the evidence was missing: ``answer`` then says so (fail closed) and
    ``citations`` / ``kg_path`` are empty. ``run_id`` names the ``(:KagRun)`` trace (``None``
    with ``trace=False``, or when the trace could not be written: ``warnings`` then says why).
    """

    question: str
    answer: str
    known: bool
    citations: list[Citation] = Field(default_factory=list)
    kg_path: list[KGFact] = Field(default_factory=list)
    run_id: str | None = None
    warnings: list[str] = Field(default_factory=list, description="what went wrong around the answer (never in it)")
    steps: list[StepRecord] = Field(default_factory=list)
    usage: dict[str, Any] = Field(default_factory=dict)
    plan: str = ""
    mode: Literal["static", "iterative"] = "static"
    plan_origin: PlanOrigin | None = Field(default=None, description="how the static plan came about (None: iterative)")
    language: Literal["en", "zh"] = "en"
    ms: float = 0.0
    config: RunConfig | None = Field(default=None, description="what the run was configured with (stored on its trace)")

    @property
    def llm_calls(self) -> int:
        return int(self.usage.get("llm_calls", 0))

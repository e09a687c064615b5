"""What a run was configured with, stored on its ``(:KagRun)`` so that a trace says how it was made.

Stored properties (``kag-neo4j trace <id> --json`` shows them under ``run``): ``config`` (the
:class:`~kag_neo4j.solver.runtime.SolverConfig`, JSON text), ``embedder`` (its model id),
``graph_version`` (the ``(:KagMeta {key: 'graph'})`` version the run read at its start),
``prompt_versions`` (prompt -> version, JSON text) and ``ranked_lists`` (custom ranked list ->
weight, JSON text); the LLM's id is ``model``.
"""

from __future__ import annotations

from collections.abc import Sequence

from kag_neo4j.prompts.answer import ANSWER_PROMPT_VERSION
from kag_neo4j.prompts.deduce import DEDUCE_PROMPT_VERSION
from kag_neo4j.prompts.iterate import ITERATE_PROMPT_VERSION
from kag_neo4j.prompts.judge import JUDGE_PROMPT_VERSION
from kag_neo4j.prompts.plan import PLAN_PROMPT_VERSION
from kag_neo4j.prompts.subanswer import SUBANSWER_PROMPT_VERSION
from kag_neo4j.solver.results import RunConfig
from kag_neo4j.solver.retrieval import RankedList
from kag_neo4j.solver.runtime import SolverConfig

__all__ = ["PROMPT_VERSIONS", "RunConfig", "run_config"]

#: the versions of the prompts a question run may use
PROMPT_VERSIONS: dict[str, str] = {
    "plan": PLAN_PROMPT_VERSION,
    "iterate": ITERATE_PROMPT_VERSION,
    "subanswer": SUBANSWER_PROMPT_VERSION,
    "deduce": DEDUCE_PROMPT_VERSION,
    "judge": JUDGE_PROMPT_VERSION,
    "answer": ANSWER_PROMPT_VERSION,
}


def run_config(
    config: SolverConfig, embedder_id: str, graph_version: int, ranked_lists: Sequence[RankedList] = ()
) -> RunConfig:
    """The :class:`RunConfig` of a run with these parts (the prompt versions are this package's)."""
    return RunConfig(solver=config.model_dump(mode="json"), embedder=embedder_id, graph_version=graph_version,
                     prompt_versions=dict(PROMPT_VERSIONS),
                     ranked_lists={ranked.name: float(ranked.weight) for ranked in ranked_lists})

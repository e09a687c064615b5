"""Where a question's model time goes: the LLM's calls, tokens and seconds per pipeline stage.

The run's ledger (:class:`kag_neo4j.models.usage.Usage`) counts by stage (``plan``, ``subanswer``,
``judge``, ``answer``, …); a question's share is the ledger after it minus the ledger before it.
The mean over a method's answered questions says which stage a latency target has to cut, and the
part of the answer time outside every stage is retrieval, Cypher and the query embeddings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel

from kag_neo4j.models.usage import StageUsage, Usage

__all__ = ["StageCost", "mean_stages", "stage_costs", "stage_snapshot"]


class StageCost(BaseModel):
    """One stage's model use, for one question or averaged over a method's questions."""

    calls: float = 0.0
    prompt_tokens: float = 0.0
    completion_tokens: float = 0.0
    seconds: float = 0.0


def stage_snapshot(usage: Usage) -> dict[str, StageUsage]:
    """The ledger's totals by stage, now."""
    return usage.by_stage()


def stage_costs(before: Mapping[str, StageUsage], after: Mapping[str, StageUsage]) -> dict[str, StageCost]:
    """What each stage spent between two snapshots; stages that spent nothing are left out."""
    costs: dict[str, StageCost] = {}
    for name, total in after.items():
        base = before.get(name, StageUsage())
        cost = StageCost(calls=total.calls - base.calls, prompt_tokens=total.prompt_tokens - base.prompt_tokens,
                         completion_tokens=total.completion_tokens - base.completion_tokens,
                         seconds=round(total.seconds - base.seconds, 4))
        if cost.calls or cost.seconds > 0:
            costs[name] = cost
    return costs


def mean_stages(questions: Sequence[Mapping[str, StageCost]]) -> dict[str, StageCost]:
    """The mean per question of each stage, over ``questions`` (a stage a question skipped counts 0)."""
    if not questions:
        return {}
    names = sorted({name for stages in questions for name in stages})
    count = len(questions)
    means: dict[str, StageCost] = {}
    for name in names:
        rows = [stages.get(name, StageCost()) for stages in questions]
        means[name] = StageCost(calls=sum(r.calls for r in rows) / count,
                                prompt_tokens=sum(r.prompt_tokens for r in rows) / count,
                                completion_tokens=sum(r.completion_tokens for r in rows) / count,
                                seconds=sum(r.seconds for r in rows) / count)
    return means

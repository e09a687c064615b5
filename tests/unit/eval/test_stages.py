"""A question's model time by stage: the ledger's difference across the question, and the mean over questions."""

from __future__ import annotations

import pytest

from kag_neo4j.eval.stages import StageCost, mean_stages, stage_costs, stage_snapshot
from kag_neo4j.models.usage import Usage


def test_a_question_is_charged_only_what_its_stages_spent_after_the_snapshot() -> None:
    usage = Usage()
    usage.record_call("plan", prompt_tokens=1000, completion_tokens=90, seconds=12.0)
    usage.record_call("embed_query", seconds=0.05)
    before = stage_snapshot(usage)
    usage.record_call("plan", prompt_tokens=1040, completion_tokens=110, seconds=14.5)
    usage.record_call("subanswer", prompt_tokens=480, completion_tokens=20, seconds=6.0)
    usage.record_call("subanswer", prompt_tokens=500, completion_tokens=30, seconds=7.0)
    usage.record_failure("judge", seconds=1.5)
    costs = stage_costs(before, stage_snapshot(usage))
    assert set(costs) == {"plan", "subanswer", "judge"}, "a stage that spent nothing in the question is left out"
    assert costs["plan"] == StageCost(calls=1, prompt_tokens=1040, completion_tokens=110, seconds=14.5)
    assert costs["subanswer"] == StageCost(calls=2, prompt_tokens=980, completion_tokens=50, seconds=13.0)
    assert costs["judge"].calls == 0 and costs["judge"].seconds == 1.5, "a failed call still cost its seconds"


def test_the_mean_counts_a_stage_a_question_skipped_as_zero() -> None:
    means = mean_stages([
        {"plan": StageCost(calls=1, prompt_tokens=1000, completion_tokens=100, seconds=10.0),
         "subanswer": StageCost(calls=2, prompt_tokens=900, completion_tokens=40, seconds=12.0)},
        {"plan": StageCost(calls=1, prompt_tokens=1100, completion_tokens=140, seconds=14.0)},
    ])
    assert means["plan"].seconds == pytest.approx(12.0) and means["plan"].completion_tokens == pytest.approx(120)
    assert means["subanswer"].calls == pytest.approx(1.0) and means["subanswer"].seconds == pytest.approx(6.0)
    assert mean_stages([]) == {}

"""The Deduce response model is a plain, schema-able pydantic model."""

from __future__ import annotations

from kag_neo4j.prompts.deduce import (
    ENTAILMENT_LABELS,
    JUDGEMENT_VERDICTS,
    DeduceResponse,
)


def test_defaults_and_schema() -> None:
    response = DeduceResponse()
    assert (response.answer, response.answers, response.reasoning) == ("", [], "")
    schema = DeduceResponse.model_json_schema()
    assert set(schema["properties"]) == {"answer", "answers", "reasoning"}
    assert "multiChoice" in schema["properties"]["answers"]["description"]


def test_parses_model_json() -> None:
    response = DeduceResponse.model_validate_json('{"answer": "yes", "reasoning": "Founded 1902 < 1903."}')
    assert response.answer in JUDGEMENT_VERDICTS
    assert "neutral" in ENTAILMENT_LABELS

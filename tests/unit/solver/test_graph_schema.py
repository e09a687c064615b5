"""The planner's view of the graph: of more types than it shows, those the relations connect first."""

from __future__ import annotations

from kag_neo4j.solver.graph_schema import GraphSchema
from kag_neo4j.solver.validate import PredicateSpec


def _medicine(extra_types: int) -> GraphSchema:
    return GraphSchema(
        types=[f"Type{i}" for i in range(extra_types)] + ["Hospital", "Doctor", "Disease", "Symptom", "Medicine"],
        relations={
            "worksAt": PredicateSpec("worksAt", "Doctor", "Hospital"),
            "commonSymptom": PredicateSpec("commonSymptom", "Disease", "Symptom"),
            "applicableMedicine": PredicateSpec("applicableMedicine", "Disease", "Medicine"),
        },
    )


def _types(summary: str) -> list[str]:
    (line,) = [line for line in summary.splitlines() if line.startswith("Entity types: ")]
    return line.removeprefix("Entity types: ").split(", ")


def test_types_that_fit_keep_their_order() -> None:
    schema = _medicine(extra_types=3)
    assert _types(schema.summary(max_items=16)) == schema.types


def test_of_many_types_those_the_relations_connect_come_first() -> None:
    schema = _medicine(extra_types=20)  # Disease is the 23rd type
    assert "Disease" not in _types(GraphSchema(types=schema.types).summary(max_items=16))
    shown = _types(schema.summary(max_items=16))
    assert shown[:5] == ["Hospital", "Doctor", "Disease", "Symptom", "Medicine"]
    assert shown[5:] == [f"Type{i}" for i in range(11)]
    assert "applicableMedicine(Disease->Medicine)" in schema.summary(max_items=16)

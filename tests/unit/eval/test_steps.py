"""Counting a solver run's Retrieval steps and checking graph-answered ones against gold hop answers."""

from __future__ import annotations

from kag_neo4j.eval.steps import StepOutcome, step_outcomes, tally_steps
from kag_neo4j.solver.results import Answer, StepRecord


def test_only_retrieval_steps_are_counted_in_their_order() -> None:
    answer = Answer(question="q", answer="a", known=True, steps=[
        StepRecord(index=0, op="Search", source="chunks"),
        StepRecord(index=1, op="Retrieval", source="graph", outputs={"o1": "Ermengarde of Tours"}),
        StepRecord(index=2, op="Math", source="math", outputs={"m1": "3"}),
        StepRecord(index=3, op="Retrieval", source="chunks", outputs={"o2": "20 March 851"}),
    ])
    assert step_outcomes(answer) == [StepOutcome(source="graph", values=["Ermengarde of Tours"]),
                                     StepOutcome(source="chunks", values=["20 March 851"])]


def test_a_graph_step_matches_a_gold_hop_answer_by_normalised_whole_words() -> None:
    gold = ["Ermengarde of Tours", "20 March 851"]
    steps = [StepOutcome(source="graph", values=["ermengarde of tours."]),   # normalised equal
             StepOutcome(source="graph", values=["Lyon, 20 March 851"]),     # holds a gold answer
             StepOutcome(source="graph", values=["Ermengarde"]),             # held by one
             StepOutcome(source="graph", values=["Ermen"]),                  # a part of a word is not a match
             StepOutcome(source="chunks", values=["Ermengarde of Tours"])]   # not from the graph: not scored
    tally = tally_steps(steps, gold)
    assert (tally.steps, tally.graph, tally.graph_gold) == (5, 4, 3)


def test_without_gold_hop_answers_graph_steps_are_counted_not_scored() -> None:
    tally = tally_steps([StepOutcome(source="graph", values=["x"])], [])
    assert (tally.graph, tally.graph_gold) == (1, None)
    assert tally_steps([StepOutcome(source="graph", values=[""])], ["a"]).graph_gold == 0, "empty matches nothing"

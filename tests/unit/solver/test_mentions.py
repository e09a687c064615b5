"""Question mentions for entity linking (the capitalised n-gram fallback)."""

from __future__ import annotations

import pytest

from kag_neo4j.solver import mentions
from kag_neo4j.solver.mentions import capitalised_mentions, question_mentions


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Who was the first president of the association which published Journal of Psychotherapy Integration?",
         ["Journal of Psychotherapy Integration"]),
        ("What county shares a border with the county in which Johnnycake, West Virginia is located?",
         ["Johnnycake", "West Virginia"]),
        ("What kind of plane dropped the bomb on Akinoshu Kenji's birthplace?", ["Akinoshu Kenji"]),
        ("Which band was formed first, Circus Diablo or the Exies?", ["Circus Diablo", "Exies"]),
        ("Which of the two tornado outbreaks killed the most people?", []),
        ('Who sang "blue moon of kentucky" first?', ["blue moon of kentucky"]),
        ("Simon & Simon starred which actor?", ["Simon & Simon"]),
        ("Besides Little Rock, Arkansas, where does Bari Lurie work?", ["Little Rock", "Arkansas", "Bari Lurie"]),
    ],
)
def test_capitalised_runs_quotes_and_no_question_words(question: str, expected: list[str]) -> None:
    assert capitalised_mentions(question) == expected


def test_a_run_joined_by_and_also_gives_its_parts() -> None:
    found = capitalised_mentions("Are Watertown International Airport and Alexandria International Airport in one state?")
    assert found == ["Watertown International Airport and Alexandria International Airport",
                     "Watertown International Airport", "Alexandria International Airport"]


def test_a_qualifier_in_brackets_also_gives_the_qualified_name_of_the_last_part() -> None:
    assert capitalised_mentions("Are Naked Tango and Algiers (Film) from one country?") == [
        "Naked Tango and Algiers", "Naked Tango", "Algiers", "Algiers (Film)", "Film"]
    assert capitalised_mentions("Who directed Atomised (film)?") == ["Atomised", "Atomised (film)"]


def test_ner_mentions_come_first_and_capitalised_ones_fill_the_gaps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mentions, "_light_ner", lambda: lambda text: ["Ada Pembroke", "1832"])
    assert question_mentions("Where did Ada Pembroke meet Tomas Reyne?", ner=True) == ["Ada Pembroke", "1832", "Tomas Reyne"]
    assert question_mentions("Where did Ada Pembroke meet Tomas Reyne?", ner=False) == ["Ada Pembroke", "Tomas Reyne"]


def test_without_ner_an_english_question_is_read_by_its_capitals_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    def never(_text: str) -> list[str]:
        raise AssertionError("the NER model must not run")

    monkeypatch.setattr(mentions, "_light_ner", lambda: never)
    # the parts of a run joined by "and" stay (with NER they would fill no gap: the whole run contains them)
    assert question_mentions("Did Ed Roland and Adam Duritz meet?", ner=False) == [
        "Ed Roland and Adam Duritz", "Ed Roland", "Adam Duritz"]


def test_without_ner_a_question_in_a_script_without_capitals_still_reaches_the_ner(monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[str] = []
    monkeypatch.setattr(mentions, "_light_ner", lambda: lambda text: read.append(text) or ["甲状腺结节"])
    question = "甲状腺结节可以吃什么药？"
    question_mentions(question, ner=False)
    assert read == [question]
    assert question_mentions("Who founded Kelso College?", ner=False) == ["Kelso College"] and read == [question]


def test_without_the_ner_model_capitalised_mentions_remain(monkeypatch: pytest.MonkeyPatch) -> None:
    from kag_neo4j.errors import ModelUnavailableError

    def missing(_text: str) -> list[str]:
        raise ModelUnavailableError("spaCy model is not installed")

    monkeypatch.setattr(mentions, "_light_ner", lambda: missing)
    assert question_mentions("Who founded Kelso College?", ner=True) == ["Kelso College"]

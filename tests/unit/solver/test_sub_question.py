"""spell_out: a step's reference to an earlier result, replaced by the result's name."""

from __future__ import annotations

import pytest

from kag_neo4j.solver.sub_question import Reference, spell_out


@pytest.mark.parametrize(
    ("question", "references", "expected"),
    [
        # the noun is a word of the type the earlier step gave the result
        ("Who was in charge of that country?", [Reference("Somalia", "Country")], "Who was in charge of Somalia?"),
        ("Which peak is the highest of this mountain range?", [Reference("Lewis Range", "MountainRange")],
         "Which peak is the highest of Lewis Range?"),
        # a common noun for what the type does not say (an author typed Person), possessive kept
        ("Where was that author's mother born?", [Reference("Judith Viorst", "Person")],
         "Where was Judith Viorst's mother born?"),
        ("Where did this band form?", [Reference("Iron Maiden", None)], "Where did Iron Maiden form?"),
        # two references: each takes the phrase of its own type first
        ("Is that city in this state?", [Reference("Montana", "State"), Reference("Helena", "City")],
         "Is Helena in Montana?"),
        # names with regex metacharacters are inserted as written
        (r"Who founded that company?", [Reference(r"AT&T \1 (US)", "Company")], r"Who founded AT&T \1 (US)?"),
    ],
)
def test_a_reference_to_an_earlier_result_is_replaced_by_its_name(
    question: str, references: list[Reference], expected: str
) -> None:
    assert spell_out(question, references) == expected


@pytest.mark.parametrize(
    ("question", "references"),
    [
        # "that" as a relative pronoun is no reference
        ("When did the country that produced Fist Power gain independence?", [Reference("Hong Kong", "Country")]),
        ("How many trawlers shelter in its harbour?", [Reference("Kestrel Bay", "Town")]),  # no demonstrative
        ("Who was in charge of Somalia?", [Reference("Somalia", "Country")]),  # already named
        ("这个国家的首都是哪里？", [Reference("索马里", "Country")]),  # English only
        ("Who was in charge of that country?", []),
    ],
)
def test_a_question_without_a_recognised_reference_is_unchanged(question: str, references: list[Reference]) -> None:
    assert spell_out(question, references) == question

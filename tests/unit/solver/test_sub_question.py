"""spell_out: a step's reference to an earlier result, replaced by the result's name; asked_kind and
contradicts: what a sub-question's words ask, against the type the plan gives its answer."""

from __future__ import annotations

import pytest

from kag_neo4j.solver.sub_question import Reference, asked_kind, contradicts, spell_out
from kag_neo4j.solver.validate import VALUE_TYPES


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


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("Where was that director born?", "place"),
        ("  where did Iron Maiden form?", "place"),
        ("In which city did the treaty get signed?", "place"),
        ("What country is Helena in?", "place"),
        ("When did the country where Steven Blankaart was born refuse to surrender Namibia?", "time"),
        ("In what year was the bridge opened?", "time"),
        ("Which decade saw the mine close?", "time"),
        ("甲状腺结节患者应该去哪里就诊？", "place"),
        ("柏*是什么时候注册公司的？", "time"),
        # neither: the question word is not a place or time word, or "where"/"when" is not the question word
        ("Who was born where the river bends?", None),
        ("What was the director's name when he was born?", None),
        ("Which company built the viaduct?", None),
        ("How many trawlers shelter in its harbour?", None),
        ("Whereas the film is French, who directed it?", None),
        ("Whence came the name?", None),
    ],
)
def test_the_kind_of_answer_a_sub_question_asks(question: str, kind: str | None) -> None:
    assert asked_kind(question) == kind


@pytest.mark.parametrize(
    ("kind", "type_name", "contradiction"),
    [
        ("place", "Date", True),  # "Where was that director born?" over o2:Date
        ("place", "Integer", True),
        ("place", "City", False),
        ("place", "Organization", False),  # "where did she study?" -> a university
        ("place", "Entity", False),
        ("place", None, False),
        ("time", "Country", True),  # "When did the country ... refuse ...?" over o:Country
        ("time", "Year", False),
        ("time", "Integer", False),
        ("time", "Text", False),
        (None, "Date", False),
    ],
)
def test_a_plan_type_contradicts_the_words_only_when_it_cannot_be_that_kind(
    kind: str | None, type_name: str | None, contradiction: bool
) -> None:
    assert contradicts(kind, type_name, VALUE_TYPES) is contradiction  # type: ignore[arg-type]

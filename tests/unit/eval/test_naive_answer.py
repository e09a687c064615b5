"""The NaiveRAG prompt and the parsing of its two-line reply."""

from __future__ import annotations

from kag_neo4j.prompts.naive_answer import (
    NaivePassage,
    naive_answer_messages,
    parse_naive_answer,
)


def test_the_prompt_numbers_the_passages_and_cuts_long_ones() -> None:
    messages = naive_answer_messages(
        "Where was Ada born?", [NaivePassage(title="Ada", text="Ada was born in Millbrook."),
                                NaivePassage(title=None, text="x" * 50)], max_chars=30)
    assert [m.role for m in messages] == ["system", "user"]
    user = messages[1].content
    assert "[1] Ada\nAda was born in Millbrook." in user
    assert "[2]\n" + "x" * 30 + " ..." in user
    assert user.index("[2]") < user.index("Question: Where was Ada born?") < user.index("Answer:")


def test_answer_and_sources_lines() -> None:
    parsed = parse_naive_answer("Answer: G. Stanley Hall.\nSources: 2, 4, 9, 2", passages=5)
    assert parsed.answer == "G. Stanley Hall" and parsed.sources == [2, 4], "out-of-range and repeated numbers dropped"
    assert parse_naive_answer("**Answer:** \"Dunmore\"\n**Sources:** [1]", passages=3).answer == "Dunmore"


def test_a_bare_reply_is_its_first_line_and_an_empty_one_is_unknown() -> None:
    assert parse_naive_answer("Millbrook\nbecause passage 1 says so", passages=2).answer == "Millbrook"
    assert parse_naive_answer("Sources: 1\nMillbrook", passages=2).answer == "Millbrook"
    empty = parse_naive_answer("   ", passages=2)
    assert empty.answer == "unknown" and empty.sources == []

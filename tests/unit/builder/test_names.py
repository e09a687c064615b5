"""Name keys and the lexical guard of embedding merges."""

from __future__ import annotations

import pytest

from kag_neo4j.builder.names import MAX_KEY, display_rank, name_key, similar_names


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("The Beatles", "beatles"),
        ("  Zürich ", "zurich"),
        ("Jean-Paul Sartre", "jean paul sartre"),
        ("McDonald's", "mcdonald"),
        ("U.S.A.", "u s a"),
        ("促肾上腺皮质[激]素", "促肾上腺皮质 激 素"),
        ("ガンダム", "ガンダム"),  # kana keep their voicing marks
        ("Ａｃｍｅ", "acme"),  # full-width letters (NFKC)
        ("A", "a"),
        ("!!!", ""),
    ],
)
def test_name_key(name: str, key: str) -> None:
    assert name_key(name) == key


def test_voiced_kana_do_not_collapse() -> None:
    assert name_key("ガ") != name_key("カ")


def test_long_keys_are_shortened_with_a_hash() -> None:
    long = "word " * 100
    key = name_key(long)
    assert len(key) == MAX_KEY and "~" in key
    assert name_key(long + "x") != key


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("charles babbage", "charles babbages", True),
        ("babbage", "charles babbage", True),
        ("charles babbage", "babbage", False),  # a full name never merges into a bare surname
        ("ibm", "international business machines", True),
        ("international business machines", "ibm", True),
        ("1990 fifa world cup", "1994 fifa world cup", False),
        ("paris", "london", False),
        ("john smith", "john smyth", False),
        ("namibians", "namibian", True),
        ("younger", "young", False),
        ("hellenic", "hellenistic", False),
        ("puzo", "mario puzo", True),
        ("de niro", "robert de niro", True),
        ("toronto", "university of toronto", False),
        ("coventry", "coventry cathedral", False),
        ("anglican church of canada", "anglican church of australia", False),
        ("department of environment", "ministry of environment", False),
        ("road back", "laid back", False),
        ("cwrc", "crc", False),
        ("paris", "parisian", False),
        ("colombia", "columbia", False),
        ("eastern newfoundland", "western newfoundland", False),
        ("人生长激素", "生长激素", False),
    ],
)
def test_similar_names(a: str, b: str, expected: bool) -> None:
    assert similar_names(a, b) is expected


def test_display_rank_prefers_plain_names() -> None:
    names = ["the United States", "United States", "``United States", "United States'"]
    assert min(names, key=display_rank) == "United States"

"""The one Lucene escaper: every special character escaped on its own, for any input."""

from __future__ import annotations

import re

import pytest

from kag_neo4j.store.lucene import SPECIAL_CHARACTERS, escape, lucene_phrase, lucene_terms

HOSTILE = [
    'a && b || c', "a & b | c", 'ac/dc "live" (x)', "field:value", "title:*", "/regex.*/", "[1 TO 5]",
    "{a TO b}", "fuzzy~0.8", "boost^10", "\\", "trailing\\", '"', '"unbalanced', "+must -not !bang",
    "?wild*", "NOT", "AND OR NOT TO", "x') DETACH DELETE n //", "\x00\n\t", "", "   ", "名字:中文",
]


def _unescaped_special(text: str) -> list[str]:
    """Special characters in ``text`` not preceded by an escaping backslash."""
    found, escaped = [], False
    for char in text:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in SPECIAL_CHARACTERS:
            found.append(char)
    return found + (["dangling \\"] if escaped else [])


@pytest.mark.parametrize("text", HOSTILE)
def test_escape_leaves_no_special_character_bare(text: str) -> None:
    assert _unescaped_special(escape(text)) == []
    assert re.sub(r"\\(.)", r"\1", escape(text)) == text, "escaping only adds backslashes"


def test_ampersand_and_bar_are_escaped_one_by_one() -> None:
    assert escape("a&&b||c&d|e") == r"a\&\&b\|\|c\&d\|e"


@pytest.mark.parametrize("text", HOSTILE)
def test_terms_are_words_only(text: str) -> None:
    query = lucene_terms(text)
    assert _unescaped_special(query) == []
    assert all(word not in {"AND", "OR", "NOT", "TO"} for word in query.split())


def test_terms_dedupe_lower_operator_words_and_cap() -> None:
    assert lucene_terms("Ronaldo AND Real Madrid, Ronaldo NOT") == "Ronaldo and Real Madrid not"
    assert lucene_terms("?!/") == ""
    assert len(lucene_terms(" ".join(f"w{i}" for i in range(100)), max_terms=5).split()) == 5


@pytest.mark.parametrize("text", HOSTILE)
def test_a_phrase_cannot_be_closed_by_its_text(text: str) -> None:
    phrase = lucene_phrase("alias_text", text)
    assert phrase.startswith('alias_text:"') and phrase.endswith('"')
    assert _unescaped_special(phrase[len('alias_text:"'):-1]) == []

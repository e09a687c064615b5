"""Cypher literals for Browser :param lines: one line, every kind of value."""

from __future__ import annotations

from kag_neo4j.store.literals import cypher_literal


def test_a_literal_stays_on_one_line_and_keeps_its_quotes_closed() -> None:
    literal = cypher_literal("a'b\\c\nd")
    assert "\n" not in literal
    assert literal == "'a\\'b\\\\c\\nd'"


def test_nested_values() -> None:
    assert cypher_literal([1, 2.5, True, None, "x"]) == "[1, 2.5, true, null, 'x']"

"""Graph lookup helpers that need no database."""

from __future__ import annotations

from kag_neo4j.builder.graph_lookup import lucene_phrase


def test_lucene_phrase_escapes_special_characters() -> None:
    assert lucene_phrase("alias_text", 'ac/dc "live" (x)') == 'alias_text:"ac\\/dc \\"live\\" \\(x\\)"'

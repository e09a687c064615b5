"""What a delete recomputes for an entity the deleted document said something about."""

from __future__ import annotations

from kag_neo4j.builder.delete import restored_entities


def said(entity: str, doc: str, description: str | None = None, kind: str | None = None,
         properties: str | None = None) -> dict:
    return {"id": entity, "doc": doc, "description": description, "semantic_type": kind, "properties_json": properties}


def test_the_first_remaining_document_wins_and_keys_only_the_deleted_one_gave_are_removed() -> None:
    rows = restored_entities([
        said("x", "a", None, "Person", '{"born": 1815}'),
        said("x", "b", "b's words", "Scientist", '{"born": 1816, "died": 1852}'),
        said("x", "c", "c's words", None, '{"born": 1817}'),
        said("y", "a", "only a talks about y"),
    ], "b")
    assert rows == [{"id": "x", "description": "c's words", "semantic_type": "Person",
                     "properties": {"born": 1815}, "keys": ["born", "died"]}]


def test_an_entity_only_the_deleted_document_described_is_emptied() -> None:
    assert restored_entities([said("x", "b", "b's words", "Person", '{"k": "v"}')], "b") == [
        {"id": "x", "description": "", "semantic_type": None, "properties": {}, "keys": ["k"]}]
    assert restored_entities([said("x", "a", "a's words")], "b") == []

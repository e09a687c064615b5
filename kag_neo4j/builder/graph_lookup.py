"""Graph lookup for entity resolution: the Neo4j reads that find existing and similar entities.

:class:`GraphLookup` implements :class:`~kag_neo4j.builder.resolution.EntityLookup` with the
queries in ``cypher/builder/`` (``existing_entities``, ``alias_entities``, ``similar_entities``),
in slices so that one read never carries an unbounded parameter list.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from kag_neo4j.store.cypher import query


class GraphLookup:
    """:class:`~kag_neo4j.builder.resolution.EntityLookup` over Neo4j: ids, the ``entity_fulltext`` index (aliases) and the
    ``entity_embedding`` vector index."""

    def __init__(self, db: Any) -> None:
        self.db = db

    def existing(self, ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for start in range(0, len(ids), 5000):
            rows = self.db.read(query("builder/existing_entities"), ids=list(ids[start : start + 5000]))
            found.update(row["id"] for row in rows)
        return found

    def by_alias(self, rows: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
        matches: dict[str, list[dict[str, Any]]] = {}
        for start in range(0, len(rows), 1000):
            part = [{"id": r["id"], "family": r["family"], "query": lucene_phrase("alias_text", r["key"])}
                    for r in rows[start : start + 1000]]
            for row in self.db.read(query("builder/alias_entities"), rows=part):
                matches.setdefault(row["id"], []).append(row)
        return matches

    def similar(self, rows: Sequence[dict[str, Any]], *, min_cosine: float, k: int) -> dict[str, list[dict[str, Any]]]:
        matches: dict[str, list[dict[str, Any]]] = {}
        for start in range(0, len(rows), 500):
            part = list(rows[start : start + 500])
            for row in self.db.read(query("builder/similar_entities"), rows=part, k=k,
                                    min_score=(1.0 + min_cosine) / 2.0):
                matches.setdefault(row["id"], []).append(row)
        return matches


    def known_records(self, keys: Sequence[str], concept_ids: Sequence[str]) -> list[dict[str, Any]]:
        """Typed records (by name key) and concepts (by id) already in the graph: ``type``, ``id``
        (the record id, a concept's name) and ``name`` of each (``builder/known_names``)."""
        rows: list[dict[str, Any]] = []
        for start in range(0, max(len(keys), len(concept_ids)), 5000):
            rows += self.db.read(query("builder/known_names"), keys=list(keys[start : start + 5000]),
                                 concept_ids=list(concept_ids[start : start + 5000]))
        return rows


_LUCENE_SPECIAL = re.compile(r'([+\-&|!(){}\[\]^"~*?:\\/])')


def lucene_phrase(field_name: str, text: str) -> str:
    """A Lucene phrase query for ``text`` in ``field_name``, special characters escaped."""
    escaped = _LUCENE_SPECIAL.sub(r"\\\1", text)
    return field_name + ':"' + escaped + '"'

"""What a change to the graph touches — labels, relationship types and property keys — so that
only the registered rules that read it are re-applied (:mod:`kag_neo4j.rules.refresh`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict

from kag_neo4j.store.cypher import query
from kag_neo4j.store.database import Transaction


class Footprint(BaseModel):
    model_config = ConfigDict(frozen=True)

    labels: frozenset[str] = frozenset()
    types: frozenset[str] = frozenset()
    keys: frozenset[str] = frozenset()

    def __or__(self, other: Footprint) -> Footprint:
        return Footprint(labels=self.labels | other.labels, types=self.types | other.types, keys=self.keys | other.keys)

    @classmethod
    def of(cls, labels: Any = (), types: Any = (), keys: Any = ()) -> Footprint:
        """From (nested) lists of names, as Cypher's ``collect`` returns them."""
        return cls(labels=frozenset(_flat(labels)), types=frozenset(_flat(types)), keys=frozenset(_flat(keys)))

    @property
    def empty(self) -> bool:
        return not (self.labels or self.types or self.keys)


#: what a taxonomy write touches (concepts and their hierarchy)
TAXONOMY = Footprint(labels=frozenset({"Concept"}), types=frozenset({"IS_A", "BELONGS_TO"}))


def _flat(value: Any) -> Iterable[str]:
    if isinstance(value, (list, tuple)):
        for item in value:
            yield from _flat(item)
    elif isinstance(value, str):
        yield value


def document_footprint(tx: Transaction, doc_ids: list[str]) -> Footprint:
    """What the stored documents ``doc_ids`` touch: the labels and keys of the nodes their chunks
    mention, the types and keys of the stored relationships around those nodes."""
    if not doc_ids:
        return Footprint()
    record = tx.run(query("rules/footprint"), {"doc_ids": doc_ids}).single()
    if record is None:
        return Footprint()
    return Footprint.of(record["labels"], record["types"], record["keys"])

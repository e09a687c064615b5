"""What a question's mentions linked to, scored against its gold passages.

Single-shot search seeds PageRank with what the question's mentions link to, exactly by resolution key:
the entities of that key (hubs left out: ``RetrievalConfig.max_seed_chunks``) and the documents it titles
(their first chunk). A linked entity *leads to* a gold passage when, in one step of PageRank's graph, it
reaches that passage's document: it is mentioned in one of its chunks, or its name titles it (a title
anchor); a titled document leads to itself. ``kag-neo4j eval`` counts, per question of a method that
links (``dense+ppr``, ``ours``, ``ours-cypher``, ``ours-gds``):

* ``mentions``: the mentions the question's NER read;
* ``entities`` and ``titles``: the entities and the documents they linked to (the seeds);
* ``gold_seeds``: the seeds that lead to a gold passage (the linking's precision is its share of seeds);
* ``gold`` and ``gold_reached``: the gold passages, and those some seed leads to (its coverage).

A seed that leads to no gold passage is not always wrong (a bridge entity can lead there in two steps),
but a question whose seeds reach none of its passages gets nothing from PageRank but its dense seed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel

__all__ = ["LinkTally", "tally_links"]


class LinkTally(BaseModel):
    """One question's query-time links (see the module docs)."""

    mentions: int
    entities: int
    titles: int = 0
    gold_seeds: int
    gold: int
    gold_reached: int

    @property
    def seeds(self) -> int:
        return self.entities + self.titles


def tally_links(
    mentions: int, entity_units: Mapping[str, Sequence[str]], title_units: Sequence[str], gold_units: Sequence[str],
) -> LinkTally:
    """``entity_units``: each linked entity's id -> the recall units (passages) it leads to in one step;
    ``title_units``: the unit of each document the mentions title."""
    gold = set(gold_units)
    leads = [set(units) & gold for units in entity_units.values()] + [{unit} & gold for unit in title_units]
    return LinkTally(mentions=mentions, entities=len(entity_units), titles=len(title_units),
                     gold_seeds=sum(1 for reached in leads if reached), gold=len(gold),
                     gold_reached=len(set().union(*leads)))

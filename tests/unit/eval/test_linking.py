"""Query-time links (entities, titled documents) scored against a question's gold passages."""

from __future__ import annotations

from kag_neo4j.eval.linking import LinkTally, tally_links


def test_a_seed_counts_once_however_many_gold_passages_it_leads_to() -> None:
    tally = tally_links(3, {"e:ada": ["ada", "hvrc"], "e:hvrc": ["hvrc"], "e:nile": ["nile"]}, ["kestrel", "nile"],
                        ["ada", "hvrc", "kestrel"])
    assert tally == LinkTally(mentions=3, entities=3, titles=2, gold_seeds=3, gold=3, gold_reached=3)
    assert tally.seeds == 5


def test_no_seed_reaches_nothing_and_repeated_gold_units_count_once() -> None:
    assert tally_links(2, {}, [], ["ada", "ada"]) == LinkTally(mentions=2, entities=0, gold_seeds=0, gold=1,
                                                               gold_reached=0)
    assert tally_links(0, {"e:x": []}, [], []).gold_seeds == 0

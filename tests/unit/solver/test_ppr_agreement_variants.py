"""benchmarks/ppr_agreement.py: the local PageRank variants it compares with exact GDS PageRank."""

from __future__ import annotations

from kag_neo4j.solver.retrieval import RECIPES
from tests.unit.benchmark_scripts import load_script

ppr_agreement = load_script("ppr_agreement")


def test_the_variants_follow_the_recipe_unless_an_order_is_asked() -> None:
    variants = ppr_agreement.variants_for(5, [4], [100])
    order = "/deg" if RECIPES["hybrid"].ppr_frontier_per_degree else "/mass"
    last = RECIPES["hybrid"].ppr_last_frontier
    assert list(variants) == ["gds", "dense (for scale)", f"cypher h4 f100 l{last} {order}"]
    local = variants[f"cypher h4 f100 l{last} {order}"]
    assert local.ppr_backend == "cypher" and local.weights.dense == 0 and local.k_ppr == 5
    assert variants["gds"].ppr_backend == "gds"


def test_both_orders_are_compared_at_every_hop_count_and_frontier() -> None:
    variants = ppr_agreement.variants_for(5, [3, 4], [100, 200], (False, True), [0, 300])
    local = {name: config for name, config in variants.items() if name.startswith("cypher")}
    assert len(local) == 16
    assert local["cypher h3 f200 l200 /deg"].ppr_frontier_per_degree
    assert not local["cypher h3 f200 l200 /mass"].ppr_frontier_per_degree
    chosen = local["cypher h3 f200 l300 /mass"]
    assert (chosen.ppr_hops, chosen.ppr_frontier, chosen.ppr_last_frontier) == (3, 200, 300)
    assert local["cypher h4 f100 l100 /deg"].ppr_last_frontier == 100, "0: the frontier's own size"

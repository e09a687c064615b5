"""The plain-Cypher PPR backend: its procedure is hybrid_retrieval's but for the PPR block, calls no
plugin, and is chosen by ``ppr_backend`` from what the server declares."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from kag_neo4j.solver.retrieval import DEFAULT_PPR_BACKEND, RECIPES, RetrievalConfig, RetrievalError, ppr_backend
from kag_neo4j.store import cypher
from kag_neo4j.store.database import NO_GDS_WARNING, Capabilities

PPR_BLOCK = re.compile(r"^CALL \(dense, linked, titled\) \{\n.*?^\}\n", re.DOTALL | re.MULTILINE)


def _parts(name: str) -> tuple[str, str]:
    text = cypher.query(name, "procedures")
    statement = text[text.index("\nCALL () {") + 1:]  # after the header comment
    block = PPR_BLOCK.search(statement)
    assert block is not None, name
    return PPR_BLOCK.sub("<ppr>\n", statement, count=1), block.group(0)


def test_local_procedure_is_hybrid_retrieval_but_for_its_ppr_block() -> None:
    exact, exact_ppr = _parts("hybrid_retrieval")
    local, local_ppr = _parts("hybrid_retrieval_local")
    assert local == exact, "edit procedures/hybrid_retrieval_local.cypher like hybrid_retrieval.cypher outside PPR"
    assert "gds.pageRank.stream" in exact_ppr and "gds." not in local_ppr
    # the same seeds: the block's opening lines up to the PPR call are identical
    seeds = exact_ppr[:exact_ppr.index("  CALL gds.pageRank.stream")]
    assert local_ppr.startswith(seeds)


def test_local_procedure_calls_no_plugin() -> None:
    text = cypher.query("hybrid_retrieval_local", "procedures")
    assert re.findall(r"\b(?:gds|apoc)\.[A-Za-z_.]+\s*\(", text) == []


@dataclass
class _Server:
    """What ppr_backend reads of a runner: the declared capabilities and the database name."""

    capabilities: Capabilities
    database: str = "neo4j"


@pytest.mark.parametrize(("backend", "gds", "chosen"), [
    ("auto", True, DEFAULT_PPR_BACKEND), ("auto", False, "cypher"), ("gds", True, "gds"),
    ("cypher", True, "cypher"), ("cypher", False, "cypher"),
])
def test_backend_follows_the_recipe_and_the_server(backend: str, gds: bool, chosen: str) -> None:
    config = RetrievalConfig(ppr_backend=backend)
    assert ppr_backend(_Server(Capabilities(gds=gds)), config) == chosen  # type: ignore[arg-type]


def test_gds_backend_on_a_server_without_gds_names_the_fix() -> None:
    with pytest.raises(RetrievalError, match="no Graph Data Science plugin.*ppr_backend 'cypher' or 'auto'"):
        ppr_backend(_Server(Capabilities(gds=False)), RECIPES["hybrid-gds"])  # type: ignore[arg-type]


def test_only_a_server_without_gds_warns() -> None:
    assert Capabilities(gds=True).warnings == []
    assert Capabilities(gds=False).warnings == [NO_GDS_WARNING]
    assert "\n" not in NO_GDS_WARNING and "plain Cypher" in NO_GDS_WARNING


def test_the_backend_recipes_are_the_hybrid_recipe_with_a_backend() -> None:
    from kag_neo4j.solver.retrieval import RECIPES

    for name, backend in (("hybrid-gds", "gds"), ("hybrid-cypher", "cypher")):
        assert RECIPES[name].ppr_backend == backend
        assert RECIPES[name].model_dump(exclude={"ppr_backend"}) == RECIPES["hybrid"].model_dump(exclude={"ppr_backend"})


def test_single_shot_search_ranks_by_local_pagerank_of_four_hops() -> None:
    """The measured default of ``ours`` (benchmarks/results/latency-figures.md): one read, bounded cost."""
    assert RECIPES["hybrid"].ppr_backend == "cypher" and RECIPES["hybrid"].ppr_hops == 4
    assert RetrievalConfig().ppr_backend == "auto", "the solver's step retrieval: GDS where installed"


def test_the_reference_keeps_the_frontier_by_mass_or_by_mass_per_relationship() -> None:
    """Two hops, one node kept a hop: the hub h holds more mass after the first push (two relationships
    to the seed) but spreads it over ten mentions; r holds less, over one. By mass the walk goes on from
    h (to its chunk u); by mass per relationship from r (to t)."""
    from kag_neo4j.solver.local_ppr import local_ppr

    neighbours = {"s": ["h", "h", "r"], "h": ["s", "s", "u", *(f"x{i}" for i in range(8))], "r": ["s", "t"],
                  "u": ["h"], "t": ["r"]}
    chunks = {"u", "t", *(f"x{i}" for i in range(8))}
    by_mass = local_ppr(neighbours, ["s"], damping=0.5, hops=2, frontier=1, ranked=chunks)
    assert set(by_mass) == {"s", "h", "u"}
    mentions = {"h": 10, "r": 1, "s": 0}
    by_degree = local_ppr(neighbours, ["s"], damping=0.5, hops=2, frontier=1, ranked=chunks, mentions=mentions)
    assert set(by_degree) == {"s", "r", "t"}
    assert by_degree["r"] < by_mass["h"], "the node kept is the one with less mass"


def test_the_reference_widens_the_frontier_before_the_last_push() -> None:
    """Two hops, one node kept a hop: a and b tie after the first push and the key order keeps a, so the
    last push reaches a's chunks alone; with two nodes kept before it, b's chunk t, which takes more
    mass than any of a's, is the one the last push keeps."""
    from kag_neo4j.solver.local_ppr import local_ppr

    neighbours = {"s": ["a", "b"], "a": ["s", "u", "v"], "b": ["s", "t"], "u": ["a"], "v": ["a"], "t": ["b"]}
    chunks = {"u", "v", "t"}
    narrow = local_ppr(neighbours, ["s"], damping=0.5, hops=2, frontier=1, ranked=chunks)
    wide = local_ppr(neighbours, ["s"], damping=0.5, hops=2, frontier=1, ranked=chunks, last_frontier=2)
    assert set(narrow) == {"s", "a", "u"}
    assert set(wide) == {"s", "a", "b", "t"}
    assert wide["t"] > narrow["u"]

"""Local Personalized PageRank: the reference implementation for the Cypher backend.

``procedures/hybrid_retrieval_local.cypher`` ranks chunks by this, without GDS and without a
projection (``RetrievalConfig.ppr_backend = 'cypher'``); ``tests/integration/test_ppr_backends.py``
compares the procedure with :func:`local_ppr` on a small graph, and both with exact GDS PageRank.

PPR with damping ``d`` and reset vector ``s`` (``1 / |seeds|`` on each seed) is the power series
``(1 - d) Σ_t d^t (P^T)^t s``, ``P`` the random walk over the undirected graph (each relationship
one step; a node's mass is split evenly over its relationships). The local version:

* pushes the mass ``hops`` times: ``r_0 = s``, ``r_{t+1}(v) = Σ_{u ~ v} d · r_t(u) / deg(u)``;
* after each push keeps only the ``frontier`` nodes with the most mass (ties: node key order;
  ``last_frontier`` nodes after the push before the last one, when given), so
  its cost is bounded by the seeds' neighbourhood, not by the graph; with ``mentions`` (each node's
  ``MENTIONED_IN`` relationships, ``RetrievalConfig.ppr_frontier_per_degree``) the nodes with the most
  ``mass / (mentions + 1)``: what a push would give each of their neighbours, the order in which
  push-style local PageRank pushes;
* scores a node by ``Σ_t r_t(v)`` (the constant ``1 - d`` left out: ranks are what matter);
* only chunks are ranked, so the last push moves mass onto chunks only (``ranked``).

The graph is the one PageRank's projection holds (``procedures/project_graph.cypher`` v3): Entity and
Chunk nodes joined, both ways, by the mutual index (``MENTIONED_IN``) and by title anchors (``TITLE_ANCHOR``:
an entity whose ``name_key`` is a document's ``title_key`` and that document's chunks, written by the
builder, ``cypher/builder/merge_title_anchors.cypher``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence

__all__ = ["local_ppr"]


def local_ppr(
    neighbours: Mapping[str, Sequence[str]], seeds: Sequence[str], *, damping: float, hops: int, frontier: int,
    ranked: Collection[str] | None = None, mentions: Mapping[str, int] | None = None, last_frontier: int | None = None,
) -> dict[str, float]:
    """Scores of the nodes the seeds' mass reaches; ``neighbours[node]`` lists one entry per
    relationship (a node twice for two relationships). With ``ranked`` (the nodes whose scores are
    used: the chunks), the last push keeps only the mass that lands on them, so other nodes take no
    place in its frontier (the procedure skips the frontier's chunks at its last hop)."""
    if not seeds:
        return {}
    current = {seed: 1.0 / len(seeds) for seed in dict.fromkeys(seeds)}
    scores: dict[str, float] = defaultdict(float)
    for node, mass in current.items():
        scores[node] += mass
    for hop in range(1, hops + 1):
        pushed: dict[str, float] = defaultdict(float)
        for node, mass in current.items():
            around = neighbours.get(node, ())
            for other in around:
                if hop < hops or ranked is None or other in ranked:
                    pushed[other] += damping * mass / len(around)
        width = last_frontier if last_frontier is not None and hop == hops - 1 else frontier
        if mentions is None:
            kept = sorted(pushed.items(), key=lambda item: (-item[1], item[0]))[:width]
        else:
            per_relationship = {node: mass / (mentions.get(node, 0) + 1) for node, mass in pushed.items()}
            kept = sorted(pushed.items(), key=lambda item: (-per_relationship[item[0]], item[0]))[:width]
        current = dict(kept)
        for node, mass in current.items():
            scores[node] += mass
    return dict(scores)

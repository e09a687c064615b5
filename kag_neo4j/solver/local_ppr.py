"""Local Personalized PageRank: the reference implementation for the Cypher backend.

``procedures/hybrid_retrieval_local.cypher`` ranks chunks by this, without GDS and without a
projection (``RetrievalConfig.ppr_backend = 'cypher'``); ``tests/integration/test_ppr_backends.py``
compares the procedure with :func:`local_ppr` on a small graph, and both with exact GDS PageRank.

PPR with damping ``d`` and reset vector ``s`` (``1 / |seeds|`` on each seed) is the power series
``(1 - d) Σ_t d^t (P^T)^t s``, ``P`` the random walk over the undirected graph (each relationship
one step; a node's mass is split evenly over its relationships). The local version:

* pushes the mass ``hops`` times: ``r_0 = s``, ``r_{t+1}(v) = Σ_{u ~ v} d · r_t(u) / deg(u)``;
* after each push keeps only the ``frontier`` nodes with the most mass (ties: node key order), so
  its cost is bounded by the seeds' neighbourhood, not by the graph;
* scores a node by ``Σ_t r_t(v)`` (the constant ``1 - d`` left out: ranks are what matter).

The graph is the one PageRank's projection holds (``procedures/project_graph.cypher``): Entity and
Chunk nodes, every relationship between two of them but ``NEXT`` and ``PART_OF``, both ways.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

__all__ = ["local_ppr"]


def local_ppr(
    neighbours: Mapping[str, Sequence[str]], seeds: Sequence[str], *, damping: float, hops: int, frontier: int,
) -> dict[str, float]:
    """Scores of the nodes the seeds' mass reaches; ``neighbours[node]`` lists one entry per
    relationship (a node twice for two relationships)."""
    if not seeds:
        return {}
    current = {seed: 1.0 / len(seeds) for seed in dict.fromkeys(seeds)}
    scores: dict[str, float] = defaultdict(float)
    for node, mass in current.items():
        scores[node] += mass
    for _ in range(hops):
        pushed: dict[str, float] = defaultdict(float)
        for node, mass in current.items():
            around = neighbours.get(node, ())
            for other in around:
                pushed[other] += damping * mass / len(around)
        kept = sorted(pushed.items(), key=lambda item: (-item[1], item[0]))[:frontier]
        current = dict(kept)
        for node, mass in current.items():
            scores[node] += mass
    return dict(scores)

"""Reciprocal Rank Fusion (RRF), the reference implementation for the Cypher version.

``score(d) = Σ_i w_i / (k + rank_i(d))`` over the ranked lists ``i`` that contain ``d``, with
1-based ranks. The Cypher procedure ``procedures/hybrid_retrieval.cypher`` must give the same
scores and the same order: ``tests/integration/test_hybrid_retrieval.py`` compares it against
:func:`rrf` (``test_cypher_fusion_agrees_with_the_python_reference``, and
``test_cypher_fusion_of_a_custom_list_agrees_with_the_python_reference`` for a custom ranked list).

The lists are the built-in ``dense``, ``fulltext`` and ``ppr`` and any custom ranked lists
(:class:`kag_neo4j.solver.retrieval.RankedList`), which reach the procedure as ``$extra_lists``
and are fused by the same rules; the procedure first leaves out ids of chunks that do not exist
or whose document is still loading (as the built-in lists leave out such chunks before ranking).

Conventions (mirror them in Cypher):

* a document listed twice in one list counts once, at its best (first) rank; its later copies
  still take up their ranks (the documents after them keep their positions);
* weights default to 1.0; a list without a weight when weights are given is an error; extra
  weights for lists that are absent are ignored; weights must be finite and ``>= 0``;
* a list with weight 0 contributes nothing, and a document found only in zero-weight lists is
  left out;
* order: score descending, then best rank over the contributing lists ascending, then id
  ascending; scores are compared after rounding to 12 decimals so that summation order cannot
  change the order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

__all__ = ["DEFAULT_K", "rrf"]

DEFAULT_K = 60
_SCORE_DECIMALS = 12


def rrf(
    ranked_lists: Mapping[str, Sequence[str]],
    weights: Mapping[str, float] | None = None,
    k: int = DEFAULT_K,
) -> list[tuple[str, float]]:
    """Fuse ``ranked_lists`` (list name -> ids, best first) into ``[(id, score), ...]``."""
    if isinstance(k, bool) or not isinstance(k, int | float) or not math.isfinite(k) or k < 0:
        raise ValueError(f"RRF k must be a finite number >= 0 (60 is the usual value), got {k!r}")
    if weights is not None:
        missing = sorted(name for name in ranked_lists if name not in weights)
        if missing:
            raise ValueError(
                f"no RRF weight for ranked list(s) {', '.join(map(repr, missing))}; give every list a "
                "weight or pass weights=None for equal weights"
            )
        for name, weight in weights.items():
            if (
                isinstance(weight, bool)
                or not isinstance(weight, int | float)
                or not math.isfinite(weight)
                or weight < 0
            ):
                raise ValueError(f"RRF weight for {name!r} must be a finite number >= 0, got {weight!r}")
    scores: dict[str, float] = {}
    best_rank: dict[str, int] = {}
    for name in sorted(ranked_lists):  # fixed summation order
        weight = 1.0 if weights is None else float(weights[name])
        if weight == 0:
            continue
        seen: set[str] = set()
        for rank, doc in enumerate(ranked_lists[name], start=1):
            if doc in seen:
                continue
            seen.add(doc)
            scores[doc] = scores.get(doc, 0.0) + weight / (k + rank)
            best_rank[doc] = min(best_rank.get(doc, rank), rank)
    ordered = sorted(scores, key=lambda doc: (-round(scores[doc], _SCORE_DECIMALS), best_rank[doc], doc))
    return [(doc, scores[doc]) for doc in ordered]

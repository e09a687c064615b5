"""Local (plain-Cypher) Personalized PageRank against exact GDS PPR on the loaded graph.

    export KAG_EMBEDDER=e5
    python benchmarks/ppr_agreement.py musique --limit 50 --data-dir ../shared/benchmarks
    python benchmarks/ppr_agreement.py 2wiki --hops 2,3,4 --frontier 100,200 --last-frontier 0,200

Read-only (it never writes). For each question it seeds with the mentions' keys as ``KAG.search`` does, then
asks both backends for the PPR list alone (weights dense 0, fulltext 0, ppr 1; the same seeds,
damping and dense seed chunks) and reports the top-``k`` agreement (|top-k ∩ top-k| / k; mean
and the share of questions at 1.0) and the p50 / p95 of each statement. Needs GDS for the reference.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from kag_neo4j.config import load_settings
from kag_neo4j.eval import metrics
from kag_neo4j.eval.datasets import load_questions, resolve_dataset
from kag_neo4j.models import build_embedder
from kag_neo4j.models.base import Embedder
from kag_neo4j.solver.mentions import question_mentions
from kag_neo4j.solver.retrieval import (
    RECIPES, RetrievalConfig, RetrievalWeights, hybrid_retrieval, hybrid_retrieve, seed_keys,
)
from kag_neo4j.store.database import Database


def variants_for(
    k: int, hops: list[int], frontiers: list[int], orders: tuple[bool, ...] | None = None,
    last_frontiers: list[int] | None = None,
) -> dict[str, RetrievalConfig]:
    """GDS (the reference), dense (for scale) and the local PageRank per hop count, frontier size, frontier
    before the last push (``last_frontiers``, the recipe's when None; 0: the frontier's size) and frontier
    order (``orders``: ``ppr_frontier_per_degree`` values, the recipe's when None; named ``/deg`` and ``/mass``)."""
    base = RECIPES["hybrid"].model_copy(update={"k": k, "k_ppr": k, "weights": RetrievalWeights(dense=0, fulltext=0, ppr=1)})
    variants = {"gds": base.model_copy(update={"ppr_backend": "gds"}),
                "dense (for scale)": RECIPES["dense"].model_copy(update={"k": k})}
    for h in hops or [base.ppr_hops]:
        for f in frontiers or [base.ppr_frontier]:
            for last in [width or f for width in last_frontiers or [base.ppr_last_frontier]]:
                for per_degree in orders or (base.ppr_frontier_per_degree,):
                    variants[f"cypher h{h} f{f} l{last} " + ("/deg" if per_degree else "/mass")] = base.model_copy(update={
                        "ppr_backend": "cypher", "ppr_hops": h, "ppr_frontier": f, "ppr_last_frontier": last,
                        "ppr_frontier_per_degree": per_degree})
    return variants


def agreement(db: Database, embedder: Embedder, questions: list[str], variants: dict[str, RetrievalConfig]) -> dict[str, dict[str, float]]:
    """Per variant: p50 / p95 ms of the statement and, for the Cypher ones, the mean top-k
    agreement with GDS and the share of questions at full agreement."""
    times: dict[str, list[float]] = {name: [] for name in variants}
    agree: dict[str, list[float]] = {name: [] for name in variants if name.startswith("cypher")}
    for config in variants.values():  # warm-up (projection, plans)
        hybrid_retrieve(db, embedder, questions[0], seed_entity_ids=[], config=config)
    for number, question in enumerate(questions, 1):
        keys = seed_keys(question_mentions(question, ner=RECIPES["hybrid"].question_ner))
        vector = embedder.embed_query(question)
        lists: dict[str, list[str]] = {}
        for name, config in variants.items():
            began = time.perf_counter()
            chunks = hybrid_retrieval(db, embedder, question, seed_keys=keys, config=config, query_vector=vector).chunks
            times[name].append((time.perf_counter() - began) * 1000)
            lists[name] = [c.chunk_id for c in chunks]
        reference = set(lists["gds"])
        for name in agree:
            agree[name].append(len(reference & set(lists[name])) / len(reference) if reference else 1.0)
        if number % 10 == 0:
            print(f"  {number}/{len(questions)}", file=sys.stderr, flush=True)
    rows: dict[str, dict[str, float]] = {}
    for name, values in times.items():
        row = {"p50_ms": round(metrics.percentile(values, 50) or 0, 1), "p95_ms": round(metrics.percentile(values, 95) or 0, 1)}
        if name in agree:
            row["agreement"] = round(statistics.mean(agree[name]), 3)
            row["all_agree"] = round(sum(x == 1.0 for x in agree[name]) / len(agree[name]), 3)
        rows[name] = row
    return rows


def markdown(rows: dict[str, dict[str, float]], k: int) -> str:
    lines = [f"| PPR list alone | p50 ms | p95 ms | top-{k} agreement with GDS (mean) | questions at full agreement |",
             "|---|---:|---:|---:|---:|"]
    for name, row in rows.items():
        extra = (f"{row['agreement']:.3f} | {row['all_agree']:.0%}" if "agreement" in row
                 else ("(reference) | " if name == "gds" else " | "))
        lines.append(f"| {name} | {row['p50_ms']} | {row['p95_ms']} | {extra} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset")
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--hops", default="", help="comma-separated hop counts to compare (default: the recipe's)")
    parser.add_argument("--frontier", default="", help="comma-separated frontier sizes (default: the recipe's)")
    parser.add_argument("--last-frontier", default="", help=(
        "comma-separated sizes of the frontier before the last push (default: the recipe's; 0: the frontier's)"))
    parser.add_argument("--per-degree", choices=("recipe", "off", "on", "both"), default="recipe", help=(
        "keep each hop's frontier as the recipe does, by mass (off), by mass per relationship (on), or compare both"))
    parser.add_argument("--data-dir", type=Path, default=None)
    args = parser.parse_args(argv)
    settings = load_settings()
    embedder = build_embedder(settings)
    files = resolve_dataset(args.dataset, data_dir=args.data_dir)
    questions = [q.question for q in load_questions(files.questions, limit=args.limit).questions]
    variants = variants_for(args.k, [int(h) for h in args.hops.split(",") if h],
                            [int(f) for f in args.frontier.split(",") if f],
                            {"recipe": None, "off": (False,), "on": (True,), "both": (False, True)}[args.per_degree],
                            [int(f) for f in args.last_frontier.split(",") if f])
    with Database.connect(settings) as db:
        rows = agreement(db, embedder, questions, variants)
    print(f"\n{args.dataset}, {len(questions)} questions\n")
    print(markdown(rows, args.k))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

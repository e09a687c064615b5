"""Where one single-shot hybrid query spends its time, stage by stage, on the loaded graph.

    export KAG_EMBEDDER=e5
    python benchmarks/retrieval_profile.py musique --limit 30 --data-dir ../shared/benchmarks

Read-only. For each question it times, one after the other (interleaved per question, one warm-up):
a server round trip (``RETURN 1``), the query embedding, the mention extraction (NER), the exact
seed linking, the projection lookup (GDS backend), the retrieval statement of each backend with the
query vector and seeds given, and ``KAG.search``'s whole path per recipe (``search``) — what
``kag-neo4j eval`` times. Prints a Markdown table of p50 / p95 / mean ms per stage, and the
database hits of the statements (``PROFILE``, first question).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kag_neo4j.config import load_settings
from kag_neo4j.eval import metrics
from kag_neo4j.eval.datasets import load_questions, resolve_dataset
from kag_neo4j.models import build_embedder
from kag_neo4j.solver.linking import link_exact
from kag_neo4j.solver.mentions import question_mentions
from kag_neo4j.solver.projection import current_projection
from kag_neo4j.solver.question_search import recipe, search
from kag_neo4j.solver.retrieval import retrieval_params
from kag_neo4j.store import cypher
from kag_neo4j.store.database import Database


def db_hits(db: Database, text: str, params: dict[str, Any]) -> int:
    with db.session() as session:
        summary = session.run("PROFILE " + text, params).consume()

    def total(plan: Any) -> int:
        return int(plan.get("dbHits", 0)) + sum(total(child) for child in plan.get("children", []))

    return total(summary.profile) if summary.profile else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset")
    parser.add_argument("--limit", type=int, default=30)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--recipes", default="dense,hybrid-gds,hybrid-cypher")
    args = parser.parse_args(argv)
    settings = load_settings()
    embedder = build_embedder(settings)
    questions = [q.question for q in load_questions(resolve_dataset(args.dataset, data_dir=args.data_dir).questions,
                                                    limit=args.limit).questions]
    recipes = [name.strip() for name in args.recipes.split(",") if name.strip()]
    gds, local = recipe("hybrid-gds", args.k), recipe("hybrid-cypher", args.k)
    times: dict[str, list[float]] = {}
    hits: dict[str, int] = {}

    def timed(name: str, work: Callable[[], Any]) -> Any:
        began = time.perf_counter()
        result = work()
        times.setdefault(name, []).append((time.perf_counter() - began) * 1000)
        return result

    with Database.connect(settings) as db:
        for number, question in enumerate([questions[0], *questions]):
            if number == 1:
                times.clear()
            timed("round trip (RETURN 1)", lambda: db.read("RETURN 1 AS one"))
            vector = timed("embed query", lambda: embedder.embed_query(question))
            mentions = timed("mentions (NER)", lambda: question_mentions(question))
            linked = timed("link_exact (1 query)", lambda: link_exact(db, mentions, max_chunks=gds.max_seed_chunks))
            seeds = list(dict.fromkeys(e for m in mentions for e in linked[m]))
            graph = timed("projection lookup (2 queries)", lambda: current_projection(db))
            params = {**retrieval_params(question, seeds, gds), "query_vector": vector}
            timed("statement: hybrid_retrieval (GDS PPR)",
                  lambda: db.query("hybrid_retrieval", "procedures", graph_name=graph, **params))
            local_params = {**retrieval_params(question, seeds, local), "query_vector": vector, "graph_name": ""}
            timed("statement: hybrid_retrieval_local (Cypher PPR)",
                  lambda: db.query("hybrid_retrieval_local", "procedures", **local_params))
            dense_params = {**retrieval_params(question, [], recipe("dense", args.k)), "query_vector": vector,
                            "graph_name": ""}
            timed("statement: dense only", lambda: db.query("hybrid_retrieval_local", "procedures", **dense_params))
            for name in recipes:
                timed(f"search (end to end): {name}", lambda: search(db, embedder, question, k=args.k, recipe_name=name))
            if number == 1:
                hits["hybrid_retrieval (GDS)"] = db_hits(db, cypher.query("hybrid_retrieval", "procedures"),
                                                         {**params, "graph_name": graph})
                hits["hybrid_retrieval_local"] = db_hits(db, cypher.query("hybrid_retrieval_local", "procedures"),
                                                         local_params)
                hits["dense only"] = db_hits(db, cypher.query("hybrid_retrieval_local", "procedures"), dense_params)
    print(f"{args.dataset}, {len(questions)} questions, k={args.k}\n")
    print("| stage | p50 ms | p95 ms | mean ms |\n|---|---:|---:|---:|")
    for name, values in times.items():
        print(f"| {name} | {metrics.percentile(values, 50):.1f} | {metrics.percentile(values, 95):.1f} | "
              f"{statistics.mean(values):.1f} |")
    print("\n| statement (first question) | db hits |\n|---|---:|")
    for name, count in hits.items():
        print(f"| {name} | {count:,} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

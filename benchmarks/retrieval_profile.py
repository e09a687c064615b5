"""Where one single-shot hybrid query spends its time, stage by stage, before and after (one run).

    export KAG_EMBEDDER=e5
    python benchmarks/retrieval_profile.py musique --limit 30 --data-dir ../shared/benchmarks \
        --baseline-procedures /path/to/old/checkout/procedures

Read-only. For each question (one warm-up, then every stage interleaved per question) it times a
server round trip (``RETURN 1``), the query embedding, the mention extraction (capitalised spans,
and the NER of ``RetrievalConfig.question_ner``), the reads the retrieval makes, each retrieval
statement with the query vector and seeds given, and ``KAG.search``'s whole path per recipe (and
the default with ``question_ner``) — what ``kag-neo4j eval`` times (LLM excluded, query embedding
included). With ``--baseline-procedures`` (the ``procedures/`` folder of an older checkout) it
also replays the older path: exact linking in its own read (``entities_by_key``), the graph
version and the projection list in two reads, then the older statement. Prints p50 / p95 / mean
ms per stage, each end-to-end path's p50 against dense's, and the database hits of the
statements (``PROFILE``, summed over the questions).
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
from kag_neo4j.solver.projection import current_projection, projection_prefix
from kag_neo4j.solver.question_search import recipe, search
from kag_neo4j.solver.retrieval import RECIPES, retrieval_params, seed_keys
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
    parser.add_argument("--baseline-procedures", type=Path, default=None,
                        help="procedures/ of an older checkout, whose path is replayed for comparison")
    args = parser.parse_args(argv)
    settings = load_settings()
    embedder = build_embedder(settings)
    questions = [q.question for q in load_questions(resolve_dataset(args.dataset, data_dir=args.data_dir).questions,
                                                    limit=args.limit).questions]
    ours, gds, dense = recipe("hybrid", args.k), recipe("hybrid-gds", args.k), recipe("dense", args.k)
    # the default with the question read by the builder's NER, as a recipe of this run
    RECIPES["hybrid, question_ner"] = RECIPES["hybrid"].model_copy(update={"question_ner": True})
    old = {name: (args.baseline_procedures / f"{name}.cypher").read_text(encoding="utf-8")
           for name in ("hybrid_retrieval", "hybrid_retrieval_local")} if args.baseline_procedures else {}
    times: dict[str, list[float]] = {}
    hits: dict[str, int] = {}

    def timed(name: str, work: Callable[[], Any]) -> Any:
        began = time.perf_counter()
        result = work()
        times.setdefault(name, []).append((time.perf_counter() - began) * 1000)
        return result

    with Database.connect(settings) as db:
        prefix = projection_prefix(db)
        for number, question in enumerate([questions[0], *questions]):
            if number == 1:
                times.clear()
            timed("round trip (RETURN 1)", lambda: db.read("RETURN 1 AS one"))
            vector = timed("embed query", lambda: embedder.embed_query(question))
            mentions = timed("mentions (capitalised spans, the default)", lambda: question_mentions(question, ner=False))
            timed("mentions (NER, question_ner)", lambda: question_mentions(question, ner=True))
            keys = seed_keys(mentions)
            timed("read: projection state (version + catalog)", lambda: db.query("solver/projection_state", prefix=prefix))
            graph = current_projection(db)
            statements: dict[str, tuple[str, dict[str, Any]]] = {
                "statement: ours (local PPR, links inside)": (cypher.query("hybrid_retrieval_local", "procedures"), {
                    **retrieval_params(question, [], ours, seed_keys=keys), "query_vector": vector, "graph_name": ""}),
                "statement: ours-gds (GDS PPR, links inside)": (cypher.query("hybrid_retrieval", "procedures"), {
                    **retrieval_params(question, [], gds, seed_keys=keys), "query_vector": vector, "graph_name": graph}),
                "statement: dense only": (cypher.query("hybrid_retrieval_local", "procedures"), {
                    **retrieval_params(question, [], dense), "query_vector": vector, "graph_name": ""}),
            }
            if old:
                linked = timed("before: read entities_by_key", lambda: link_exact(db, mentions, max_chunks=gds.max_seed_chunks))
                seeds = list(dict.fromkeys(entity for mention in mentions for entity in linked[mention]))
                before = retrieval_params(question, seeds, gds)
                statements["before: statement, GDS PPR"] = (old["hybrid_retrieval"], {
                    **before, "query_vector": vector, "graph_name": graph})
                statements["before: statement, local PPR (3 hops)"] = (old["hybrid_retrieval_local"], {
                    **before, "ppr_hops": 3, "query_vector": vector, "graph_name": ""})
            for name, (text, params) in statements.items():
                timed(name, lambda: db.read(text, **params))
                if number >= 1:
                    hits[name] = hits.get(name, 0) + db_hits(db, text, params)
            for name in ("dense", "hybrid", "hybrid, question_ner", "hybrid-gds"):
                timed(f"end to end: search {name}", lambda: search(db, embedder, question, k=args.k, recipe_name=name))
            if old:
                def before_path() -> None:  # the older path: embedding, NER, linking read, 2 projection reads, statement
                    vector = embedder.embed_query(question)
                    found = question_mentions(question, ner=True)
                    linked = link_exact(db, found, max_chunks=gds.max_seed_chunks)
                    seeds = list(dict.fromkeys(entity for mention in found for entity in linked[mention]))
                    db.query("solver/graph_version")
                    db.query("solver/list_projections", prefix=prefix)
                    db.read(old["hybrid_retrieval"], **retrieval_params(question, seeds, gds), query_vector=vector,
                            graph_name=graph)

                timed("end to end: before, ours (GDS)", before_path)
    dense_p50 = metrics.percentile(times["end to end: search dense"], 50) or 1.0
    print(f"{args.dataset}, {len(questions)} questions, k={args.k}\n")
    print("| stage | p50 ms | p95 ms | mean ms | p50 / dense end to end |\n|---|---:|---:|---:|---:|")
    for name, values in times.items():
        p50 = metrics.percentile(values, 50) or 0.0
        ratio = f"{p50 / dense_p50:.2f}" if name.startswith("end to end") else ""
        print(f"| {name} | {p50:.1f} | {metrics.percentile(values, 95):.1f} | {statistics.mean(values):.1f} | {ratio} |")
    print("\n| statement | db hits per question (mean) |\n|---|---:|")
    for name, count in hits.items():
        print(f"| {name} | {count // len(questions):,} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

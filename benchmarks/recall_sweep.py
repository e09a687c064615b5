"""Recall sweep: single-shot retrieval variants on one dev set, scored like ``kag-neo4j eval``.

Each variant is a retrieval recipe (``RetrievalConfig`` overrides), a query-time linking choice
and a projection, run on the corpus already loaded by ``kag-neo4j eval <dataset>`` (question
vectors, and the mentions of each mention finder, are computed once and shared by every variant).
Prints a Markdown table of R@2 / R@5 (first distinct passages, as ``eval``) and each variant's
paired difference to dense with its bootstrap 95 % interval (``metrics.paired_bootstrap``, 10,000
resamples, seed 0).

    python benchmarks/recall_sweep.py musique --limit 50 --variants dense,default,v1

Projections other than the product's (``procedures/project_graph.cypher``) are the ablation
files ``cypher/eval/bench_projection_*.cypher``, projected once as ``sweep_<name>`` (dropped at
the end); the product's is the solver's own (``kag_neo4j.solver.projection``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from kag_neo4j.config import Settings
from kag_neo4j.eval import metrics
from kag_neo4j.eval.datasets import load_corpus, load_questions, resolve_dataset
from kag_neo4j.models.base import Embedder
from kag_neo4j.models.factory import build_embedder
from kag_neo4j.solver import retrieval
from kag_neo4j.solver.linking import link_entity, link_exact
from kag_neo4j.solver.mentions import question_mentions
from kag_neo4j.solver.question_search import recipe
from kag_neo4j.solver.retrieval import RetrievalWeights, hybrid_retrieval, seed_keys
from kag_neo4j.store import cypher
from kag_neo4j.store.database import Database

Linker = Callable[[Database, Embedder, list[str]], list[str]]


def _fuzzy(k: int) -> Linker:
    def link(db: Database, embedder: Embedder, mentions: list[str]) -> list[str]:
        return list(dict.fromkeys(e.id for m in mentions for e in link_entity(db, embedder, m, k=k)))
    return link


def _exact(max_chunks: int | None) -> Linker:
    def link(db: Database, _embedder: Embedder, mentions: list[str]) -> list[str]:
        linked = link_exact(db, mentions, max_chunks=max_chunks)
        return list(dict.fromkeys(i for m in mentions for i in linked[m]))
    return link


def _no_values(link: Linker) -> Linker:
    """Seeds without literal entities (family 'value'), for a projection that leaves them out."""
    def without(db: Database, embedder: Embedder, mentions: list[str]) -> list[str]:
        return [seed for seed in link(db, embedder, mentions) if not seed.startswith("value:")]
    return without


#: query-time linking of the question's mentions to PPR seeds
LINKERS: dict[str, Linker] = {
    "none": lambda *_: [], "fuzzy1": _fuzzy(1), "fuzzy2": _fuzzy(2), "exact": _exact(None),
    "exact_df2": _exact(2), "exact_df3": _exact(3), "exact_df5": _exact(5), "exact_df10": _exact(10),
    "fuzzy1_no_values": _no_values(_fuzzy(1)), "keys": lambda *_: [],
}

_OLD = {"dense_seeds": 3, "max_iterations": 20}  # the recipe before the sweep (with fuzzy1 and v1)
_FT03 = {"dense": 1.0, "fulltext": 0.3, "ppr": 1.0}

#: name -> (base recipe, RetrievalConfig overrides, linker, projection: None = the product's, else a
#: cypher/eval/bench_projection_<name>.cypher)
VARIANTS: dict[str, tuple[str, dict[str, Any], str, str | None]] = {
    "dense": ("dense", {}, "none", None),
    "default": ("hybrid", {}, "keys", None),
    # the question's mentions from the builder's NER (filled by capitalised spans) instead of capitalised spans alone
    "default+question_ner": ("hybrid", {"question_ner": True}, "keys", None),
    "gds+question_ner": ("hybrid-gds", {"question_ner": True}, "keys", None),
    "default-titles": ("hybrid", {"seed_titles": False}, "keys", None),
    # before: the old recipes (hybrid = dense + fulltext 0.3 + PPR), fuzzy links, the v1 projection
    "old_hybrid": ("hybrid", {**_OLD, "weights": _FT03}, "fuzzy1", "v1"),
    "old_dense+ppr": ("dense+ppr", _OLD, "fuzzy1", "v1"),
    # one change at a time from old dense+ppr
    "old+d10": ("dense+ppr", {**_OLD, "dense_seeds": 10}, "fuzzy1", "v1"),
    "old+exact": ("dense+ppr", _OLD, "exact", "v1"),
    "old+no_entities": ("dense+ppr", _OLD, "none", "v1"),
    "old+no_values": ("dense+ppr", _OLD, "fuzzy1_no_values", "no_values"),
    "old+mentions_only": ("dense+ppr", _OLD, "fuzzy1", "mentions"),
    # one change at a time from the default
    "default-anchors": ("hybrid", {}, "keys", "mentions"),
    "default+facts": ("hybrid", {}, "keys", "v1"),
    "default+it20": ("hybrid", {"max_iterations": 20}, "keys", None),
    "default+d0": ("hybrid", {"dense_seeds": 0}, "keys", None),
    "default+d3": ("hybrid", {"dense_seeds": 3}, "keys", None),
    "default+df2": ("hybrid", {}, "exact_df2", None),
    "default+df10": ("hybrid", {}, "exact_df10", None),
    "default+no_cap": ("hybrid", {}, "exact", None),
    "default+fuzzy": ("hybrid", {}, "fuzzy1", None),
    "default+ft01": ("hybrid", {"weights": {"dense": 1.0, "fulltext": 0.1, "ppr": 1.0}}, "keys", None),
    "default+ft03": ("hybrid", {"weights": _FT03}, "keys", None),
    "default+ppr07": ("hybrid", {"weights": {"dense": 1.0, "fulltext": 0.0, "ppr": 0.7}}, "keys", None),
    # fusion: how much the first ranks of each list count (rrf_k), and how deep the PPR list goes (R@2, issue 12)
    **{f"default+rrf{r}": ("hybrid", {"rrf_k": r}, "keys", None) for r in (5, 10, 20, 30, 120)},
    **{f"default+kppr{n}": ("hybrid", {"k_ppr": n}, "keys", None) for n in (3, 5, 8, 10, 15, 20)},
    "gds": ("hybrid-gds", {}, "keys", None),
    "gds+kppr20": ("hybrid-gds", {"k_ppr": 20}, "keys", None),
    # synonym edges between similar entity names (benchmarks/synonym_edges.py writes them first)
    "gds+synonyms": ("hybrid-gds", {}, "keys", "synonyms"),
    "default+kppr20-titles": ("hybrid", {"k_ppr": 20, "seed_titles": False}, "keys", None),
    **{f"default+rrf{r}_kppr{n}": ("hybrid", {"rrf_k": r, "k_ppr": n}, "keys", None)
       for r in (5, 10, 20) for n in (5, 8, 10)},
    **{f"default+dense{w}": ("hybrid", {"weights": {"dense": w / 10, "fulltext": 0.0, "ppr": 1.0}}, "keys", None)
       for w in (12, 15, 20)},
    # the default with the plain-Cypher local PPR: hops and frontier (latency, issue 12)
    "cypher": ("hybrid-cypher", {}, "keys", None),
    **{f"cypher_h{h}_f{f}": ("hybrid-cypher", {"ppr_hops": h, "ppr_frontier": f}, "keys", None)
       for h in (2, 3, 4, 5, 6) for f in (50, 100, 200, 400)},
    # the frontier kept by mass (before) instead of mass per relationship (push-style local PageRank's order)
    **{f"cypher_h4_f{f}_mass": ("hybrid-cypher", {"ppr_frontier": f, "ppr_frontier_per_degree": False}, "keys", None)
       for f in (100, 200)},
}

_product_projection = retrieval.current_projection


def _use_projection(db: Database, name: str | None, made: list[str]) -> None:
    if name is None:
        retrieval.current_projection = _product_projection  # type: ignore[assignment]
        return
    graph = f"sweep_{name}"
    if graph not in {row["name"] for row in db.query("solver/list_projections", prefix="sweep_")}:
        db.read(cypher.query(f"eval/bench_projection_{name}"), graph_name=graph)
        made.append(graph)
    retrieval.current_projection = lambda _runner, **_kw: graph  # type: ignore[assignment]


def chosen_variants(parser: argparse.ArgumentParser, text: str, known: Iterable[str]) -> list[str]:
    """The comma-separated variant names of ``text``; an unknown one is the parser's error."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in set(known)]
    if unknown:
        parser.error(f"unknown variant(s) {', '.join(unknown)}")
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset", help="musique, hotpotqa or 2wiki (loaded by `kag-neo4j eval` first)")
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--variants", default=",".join(VARIANTS), help=f"comma-separated, of: {', '.join(VARIANTS)}")
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args(argv)
    names = chosen_variants(parser, args.variants, VARIANTS)
    files = resolve_dataset(args.dataset, data_dir=args.data_dir)
    questions = load_questions(files.questions, limit=args.limit)
    units = load_corpus(files.corpus).units(questions.recall_unit)
    settings = Settings()
    embedder = build_embedder(settings)
    db = Database.connect(settings)
    vectors = [embedder.embed_query(q.question) for q in questions.questions]
    mentions: dict[bool, list[list[str]]] = {}  # question_ner -> each question's mentions
    links: dict[tuple[str, bool], list[list[str]]] = {}
    scores: dict[str, list[tuple[float, float]]] = {}
    made: list[str] = []
    try:
        for name in names:
            base, overrides, linker, projection_name = VARIANTS[name]
            config = recipe(base, args.k).model_copy(update={
                key: RetrievalWeights(**value) if key == "weights" else value for key, value in overrides.items()})
            _use_projection(db, projection_name, made)
            if config.question_ner not in mentions:
                mentions[config.question_ner] = [question_mentions(q.question, ner=config.question_ner)
                                                 for q in questions.questions]
            found = mentions[config.question_ner]
            if (linker, config.question_ner) not in links:
                links[linker, config.question_ner] = [LINKERS[linker](db, embedder, names) for names in found]
            rows = []
            for index, question in enumerate(questions.questions):
                seeds = links[linker, config.question_ner][index] if config.weights.ppr > 0 else []
                # the product's own linking: the mentions' keys, linked inside the statement (entities and titles)
                keys = seed_keys(found[index]) if linker == "keys" and config.weights.ppr > 0 else []
                chunks = hybrid_retrieval(db, embedder, question.question, seed_entity_ids=seeds, seed_keys=keys,
                                          config=config, query_vector=vectors[index]).chunks
                ranked = [units.get(c.document_id or "", f"document:{c.document_id}") for c in chunks]
                gold = questions.gold_units(question)
                rows.append((metrics.recall_at_k(ranked, gold, 2) or 0.0, metrics.recall_at_k(ranked, gold, 5) or 0.0))
            scores[name] = rows
            print(f"{name}: R@2 {100 * sum(r[0] for r in rows) / len(rows):.1f} "
                  f"R@5 {100 * sum(r[1] for r in rows) / len(rows):.1f}", file=sys.stderr, flush=True)
    finally:
        retrieval.current_projection = _product_projection  # type: ignore[assignment]
        for graph in made:
            db.query("solver/drop_projection", graph_name=graph)
    baseline = scores.get("dense")
    print(f"\n{questions.name}, first {len(questions.questions)} dev questions, k={args.k}\n")
    print("| variant | R@2 | R@5 | ΔR@2 vs dense [95% CI] | ΔR@5 vs dense [95% CI] |")
    print("|---|---|---|---|---|")
    for name, rows in scores.items():
        cells = [f"{100 * sum(r[i] for r in rows) / len(rows):.1f}" for i in (0, 1)]
        deltas = []
        for i in (0, 1):
            difference = None if baseline is None or name == "dense" else \
                metrics.paired_bootstrap([r[i] for r in rows], [b[i] for b in baseline])
            deltas.append("" if difference is None else
                          f"{100 * difference.mean:+.1f} [{100 * difference.low:+.1f}, {100 * difference.high:+.1f}]")
        print(f"| {name} | {cells[0]} | {cells[1]} | {deltas[0]} | {deltas[1]} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

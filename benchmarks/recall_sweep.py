"""Recall sweep: single-shot retrieval variants on one dev set, scored like ``kag-neo4j eval``.

Each variant is a retrieval recipe (``RetrievalConfig`` overrides) and a query-time linking
choice, run on the corpus already loaded by ``kag-neo4j eval <dataset>`` (the question vectors
and links are computed once and shared by every variant). Prints a Markdown table of R@2 / R@5
and the paired difference to dense with a bootstrap 95 % interval.

    python benchmarks/recall_sweep.py musique --limit 50 --variants dense,hybrid,ppr_d05
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from kag_neo4j.builder.names import name_key
from kag_neo4j.config import Settings
from kag_neo4j.eval import metrics
from kag_neo4j.eval.datasets import load_corpus, load_questions, resolve_dataset
from kag_neo4j.models.factory import build_embedder
from kag_neo4j.solver.linking import link_entity
from kag_neo4j.solver.mentions import question_mentions
from kag_neo4j.solver.question_search import recipe
from kag_neo4j.solver import retrieval
from kag_neo4j.solver.retrieval import RetrievalWeights, hybrid_retrieve
from kag_neo4j.store.database import Database

#: name -> (base recipe, RetrievalConfig overrides, linker (see LINKERS), projection file or None for the product's)
VARIANTS: dict[str, tuple[str, dict[str, Any], str, str | None]] = {
    "dense": ("dense", {}, "top1", None),
    "hybrid": ("hybrid", {}, "top1", None),
    "dense+ppr": ("dense+ppr", {}, "top1", None),
    # cost: fewer iterations
    "ppr_it10": ("dense+ppr", {"max_iterations": 10}, "top1", None),
    "ppr_it5": ("dense+ppr", {"max_iterations": 5}, "top1", None),
    "ppr_d085": ("dense+ppr", {"damping": 0.85}, "top1", None),
    # seeds: dense chunks only / entities only / more dense chunks
    "ppr_seed_dense_only": ("dense+ppr", {}, "none", None),
    "ppr_seed_ent_only": ("dense+ppr", {"dense_seeds": 0}, "top1", None),
    "ppr_seed_d1": ("dense+ppr", {"dense_seeds": 1}, "top1", None),
    "ppr_seed_d5": ("dense+ppr", {"dense_seeds": 5}, "top1", None),
    "ppr_seed_d10": ("dense+ppr", {"dense_seeds": 10}, "top1", None),
    "ppr_link2": ("dense+ppr", {}, "top2", None),
    "ppr_link3": ("dense+ppr", {}, "top3", None),
    # fusion balance
    "ppr_w05": ("dense+ppr", {"weights": {"dense": 1.0, "fulltext": 0.0, "ppr": 0.5}}, "top1", None),
    "ppr_w07": ("dense+ppr", {"weights": {"dense": 1.0, "fulltext": 0.0, "ppr": 0.7}}, "top1", None),
    "ppr_w15": ("dense+ppr", {"weights": {"dense": 1.0, "fulltext": 0.0, "ppr": 1.5}}, "top1", None),
    "ppr_ft01": ("dense+ppr", {"weights": {"dense": 1.0, "fulltext": 0.1, "ppr": 1.0}}, "top1", None),
    "ppr_rrf20": ("dense+ppr", {"rrf_k": 20}, "top1", None),
    # projection contents
    "ppr_p0": ("dense+ppr", {}, "top1", "/tmp/recall/proj/p0.cypher"),
    "ppr_mi_only": ("dense+ppr", {}, "top1", "/tmp/recall/proj/mi_only.cypher"),
    "ppr_idf": ("dense+ppr", {"specificity": True}, "top1", "/tmp/recall/proj/w_idf.cypher"),
    "ppr_idf_mi": ("dense+ppr", {"specificity": True}, "top1", "/tmp/recall/proj/w_idf_mi.cypher"),
    "ppr_key": ("dense+ppr", {}, "key", None),
    "ppr_key_top1": ("dense+ppr", {}, "key+top1", None),
    "ppr_novalue": ("dense+ppr", {}, "key_nv", "/tmp/recall/proj/novalue.cypher"),
    "ppr_idf_novalue": ("dense+ppr", {"specificity": True}, "key_nv", "/tmp/recall/proj/idf_novalue.cypher"),
    "ppr_key_nv": ("dense+ppr", {}, "key_nv", None),
    "k_ent_only": ("dense+ppr", {"dense_seeds": 0}, "key", None),
    "k_d1": ("dense+ppr", {"dense_seeds": 1}, "key", None),
    "k_d5": ("dense+ppr", {"dense_seeds": 5}, "key", None),
    "k_it10": ("dense+ppr", {"max_iterations": 10}, "key", None),
    "k_w07": ("dense+ppr", {"weights": {"dense": 1.0, "fulltext": 0.0, "ppr": 0.7}}, "key", None),
    "k_w15": ("dense+ppr", {"weights": {"dense": 1.0, "fulltext": 0.0, "ppr": 1.5}}, "key", None),
    "n_d1": ("dense+ppr", {"dense_seeds": 1}, "none", None),
    "n_d2": ("dense+ppr", {"dense_seeds": 2}, "none", None),
    "n_d5": ("dense+ppr", {"dense_seeds": 5}, "none", None),
    "n_w07": ("dense+ppr", {"weights": {"dense": 1.0, "fulltext": 0.0, "ppr": 0.7}}, "none", None),
    "n_w15": ("dense+ppr", {"weights": {"dense": 1.0, "fulltext": 0.0, "ppr": 1.5}}, "none", None),
    "n_it10": ("dense+ppr", {"max_iterations": 10}, "none", None),
    "n_hybrid": ("hybrid", {}, "none", None),
    "n_mi_only": ("dense+ppr", {}, "none", "/tmp/recall/proj/mi_only.cypher"),
    "n_novalue": ("dense+ppr", {}, "none", "/tmp/recall/proj/novalue.cypher"),
    "n_idf": ("dense+ppr", {"specificity": True}, "none", "/tmp/recall/proj/w_idf.cypher"),
    "kdf2": ("dense+ppr", {}, "key_df2", None),
    "kdf5": ("dense+ppr", {}, "key_df5", None),
    "kdf10": ("dense+ppr", {}, "key_df10", None),
    "c_d1_kdf2": ("dense+ppr", {"dense_seeds": 1}, "key_df2", None),
    "c_d1_kdf5": ("dense+ppr", {"dense_seeds": 1}, "key_df5", None),
    "c_d1_key": ("dense+ppr", {"dense_seeds": 1}, "key", None),
    "c_d1_mi": ("dense+ppr", {"dense_seeds": 1}, "none", "/tmp/recall/proj/mi_only.cypher"),
    "c_d1_kdf2_mi": ("dense+ppr", {"dense_seeds": 1}, "key_df2", "/tmp/recall/proj/mi_only.cypher"),
    "c_d1_it10": ("dense+ppr", {"dense_seeds": 1, "max_iterations": 10}, "none", None),
    "c_d2_kdf2": ("dense+ppr", {"dense_seeds": 2}, "key_df2", None),
    "c_d1_hybrid": ("hybrid", {"dense_seeds": 1}, "none", None),
    "c_d1_kdf2_hybrid": ("hybrid", {"dense_seeds": 1}, "key_df2", None),
    "c_d1_kdf3_mi": ("dense+ppr", {"dense_seeds": 1}, "key_df3", "/tmp/recall/proj/mi_only.cypher"),
    "c_d1_kdf5_mi": ("dense+ppr", {"dense_seeds": 1}, "key_df5", "/tmp/recall/proj/mi_only.cypher"),
    "c_d1_kdf10_mi": ("dense+ppr", {"dense_seeds": 1}, "key_df10", "/tmp/recall/proj/mi_only.cypher"),
    "c_d1_kdf5_mi_it10": ("dense+ppr", {"dense_seeds": 1, "max_iterations": 10}, "key_df5",
                          "/tmp/recall/proj/mi_only.cypher"),
    "c_d1_kdf5_mi_ft01": ("hybrid", {"dense_seeds": 1, "weights": {"dense": 1.0, "fulltext": 0.1, "ppr": 1.0}},
                          "key_df5", "/tmp/recall/proj/mi_only.cypher"),
    "c_d1_kdf5_mita": ("dense+ppr", {"dense_seeds": 1}, "key_df5", "/tmp/recall/proj/mi_ta.cypher"),
    "c_d0_kdf5_mi": ("dense+ppr", {"dense_seeds": 0}, "key_df5", "/tmp/recall/proj/mi_only.cypher"),
    "k_mi_only": ("dense+ppr", {}, "key", "/tmp/recall/proj/mi_only.cypher"),
    "k_hybrid": ("hybrid", {}, "key", None),
    "k_kppr10": ("dense+ppr", {"k_ppr": 10}, "key", None),
    "k_kdense20": ("dense+ppr", {"k_dense": 20}, "key", None),
    "ppr_title": ("dense+ppr", {}, "top1", "/tmp/recall/proj/ta.cypher"),
}


product_projection = retrieval.current_projection


def _top(k: int) -> Any:
    def link(db: Database, embedder: Any, mentions: list[str]) -> list[str]:
        return list(dict.fromkeys(e.id for m in mentions for e in link_entity(db, embedder, m, k=k)))
    return link


def _key(fallback: bool) -> Any:
    def link(db: Database, embedder: Any, mentions: list[str]) -> list[str]:
        seeds: list[str] = []
        for mention in mentions:
            found = [row["id"] for row in db.read(
                "MATCH (e:Entity {name_key: $key}) RETURN e.id AS id ORDER BY id", key=name_key(mention))]
            if not found and fallback:
                found = [e.id for e in link_entity(db, embedder, mention, k=1)]
            seeds.extend(found)
        return list(dict.fromkeys(seeds))
    return link


def _no_values(link: Any) -> Any:
    def without(db: Database, embedder: Any, mentions: list[str]) -> list[str]:
        return [seed for seed in link(db, embedder, mentions) if not seed.startswith("value:")]
    return without


def _rare(link: Any, max_df: int) -> Any:
    def rare(db: Database, embedder: Any, mentions: list[str]) -> list[str]:
        seeds = link(db, embedder, mentions)
        keep = {row["id"] for row in db.read(
            "MATCH (e:Entity) WHERE e.id IN $ids AND COUNT { (e)-[:MENTIONED_IN]->() } <= $max RETURN e.id AS id",
            ids=seeds, max=max_df)}
        return [seed for seed in seeds if seed in keep]
    return rare


LINKERS = {"none": lambda *_: [], "top1": _top(1), "top2": _top(2), "top3": _top(3), "key": _key(False),
           "key+top1": _key(True), "key_nv": _no_values(_key(False)), "top1_nv": _no_values(_top(1)),
           "key_df2": _rare(_key(False), 2), "key_df5": _rare(_key(False), 5), "key_df10": _rare(_key(False), 10),
           "key_df3": _rare(_key(False), 3)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("dataset")
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--data-dir", type=Path, default=Path("/work/shared/benchmarks"))
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args(argv)
    files = resolve_dataset(args.dataset, data_dir=args.data_dir)
    questions = load_questions(files.questions, limit=args.limit)
    units = load_corpus(files.corpus).units(questions.recall_unit)
    settings = Settings()
    embedder = build_embedder(settings)
    db = Database.connect(settings)
    names = [name.strip() for name in args.variants.split(",") if name.strip()]
    vectors = [embedder.embed_query(q.question) for q in questions.questions]
    mentions = [question_mentions(q.question) for q in questions.questions]
    links: dict[str, list[list[str]]] = {}
    scores: dict[str, list[tuple[float, float]]] = {}
    for name in names:
        base, overrides, linker, projection_file = VARIANTS[name]
        if projection_file is not None:
            graph = f"sweep_{Path(projection_file).stem}"
            if graph not in db.read("CALL gds.graph.list() YIELD graphName RETURN collect(graphName) AS names")[0]["names"]:
                db.read(Path(projection_file).read_text(), graph_name=graph)
            retrieval.current_projection = lambda _runner, graph=graph, **_kw: graph  # type: ignore[assignment]
        else:
            retrieval.current_projection = product_projection  # type: ignore[assignment]
        config = recipe(base, args.k).model_copy(update={
            key: RetrievalWeights(**value) if key == "weights" else value for key, value in overrides.items()})
        if config.weights.ppr > 0 and linker not in links:
            links[linker] = [LINKERS[linker](db, embedder, found) for found in mentions]
        rows = []
        for index, question in enumerate(questions.questions):
            seeds = links[linker][index] if config.weights.ppr > 0 else []
            chunks = hybrid_retrieve(db, embedder, question.question, seed_entity_ids=seeds, config=config,
                                     query_vector=vectors[index])
            ranked = [units.get(c.document_id or "", f"document:{c.document_id}") for c in chunks]
            gold = questions.gold_units(question)
            rows.append((metrics.recall_at_k(ranked, gold, 2) or 0.0, metrics.recall_at_k(ranked, gold, 5) or 0.0))
        scores[name] = rows
        print(f"{name}: R@2 {100 * sum(r[0] for r in rows) / len(rows):.1f} R@5 "
              f"{100 * sum(r[1] for r in rows) / len(rows):.1f}", file=sys.stderr, flush=True)
    baseline = scores.get("dense")
    print(f"\n{questions.name}, first {len(questions.questions)} dev questions, k={args.k}\n")
    print("| variant | R@2 | R@5 | ΔR@2 vs dense [95% CI] | ΔR@5 vs dense [95% CI] |")
    print("|---|---|---|---|---|")
    for name, rows in scores.items():
        cells = [f"{100 * sum(r[i] for r in rows) / len(rows):.1f}" for i in (0, 1)]
        deltas = []
        for i in (0, 1):
            if baseline is None or name == "dense":
                deltas.append("")
                continue
            d = metrics.paired_bootstrap([r[i] for r in rows], [b[i] for b in baseline])
            deltas.append(f"{100 * d.mean:+.1f} [{100 * d.low:+.1f}, {100 * d.high:+.1f}]")
        print(f"| {name} | {cells[0]} | {cells[1]} | {deltas[0]} | {deltas[1]} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Performance benchmark: load throughput, retrieval latency at growing graph sizes, peak memory,
each against neo4j-graphrag doing the same job in the same run, on the same Neo4j and embedder.

    export NEO4J_URI=bolt://127.0.0.1:7687 KAG_EMBEDDER=e5
    python benchmarks/retrieval_latency.py --yes                       # the defaults below
    python benchmarks/retrieval_latency.py --yes --level 1k=hotpotqa --level 24k=2wiki*4 \
        --throughput musique --throughput-limit 300 --full-limit 5 --out latency.json

**It empties the configured database** (``--yes`` says you mean it). What it measures:

1. *Load throughput* (``--throughput DATASET``, the first ``--throughput-limit`` passages, every
   cache off so each text is really embedded): our light build (read, split, spaCy NER,
   align, embed, write) against neo4j-graphrag's lexical graph (``TextChunkEmbedder`` +
   ``LexicalGraphBuilder`` + ``Neo4jWriter``: chunks and vectors, no entities); with
   ``--full-limit N`` also our full build (one LLM call per chunk) against neo4j-graphrag's
   ``SimpleKGPipeline`` with the same LLM, on the first N passages.
2. *Retrieval latency* at each ``--level NAME=DATASET[*N]``: the dataset's corpus loaded light
   (the vector cache makes reloads cheap), replicated N times for a synthetic scale-up (chunks,
   entities, mentions and facts copied with new ids; chunk vectors jittered), then every method
   of ``kag-neo4j eval`` answers the same ``--n-queries`` questions, after an untimed pass over the
   first ``--warm-up`` of them (the server plans a statement afresh for parameters of a new shape,
   1-2 s for the retrieval statements: BENCHMARKS.md, "The 27k tail");
   p50 / p95 / mean per method, and the ratio of each to neo4j-graphrag's retrievers.
3. *Memory*: this process's peak RSS, Neo4j's heap (JMX) and the GDS projection size per level.

Prints Markdown tables and writes everything to ``--out`` (JSON).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import resource
import sys
import time
from pathlib import Path
from typing import Any, Literal

from kag_neo4j.config import Settings, load_settings
from kag_neo4j.eval import metrics
from kag_neo4j.eval.datasets import load_corpus, load_questions, resolve_dataset
from kag_neo4j.eval.loading import clear_knowledge_base, ensure_corpus_loaded
from kag_neo4j.eval.methods import DEFAULT_METHODS, MethodContext, build_methods
from kag_neo4j.models import build_embedder
from kag_neo4j.models.base import Embedder
from kag_neo4j.solver.retrieval import RECIPES
from kag_neo4j.store import cypher, migrations
from kag_neo4j.store.database import Database

DEFAULT_LEVELS = ("1k=hotpotqa", "6k=2wiki", "24k=2wiki*4")
#: the PageRank chunks the default recipe fuses: the agreement with exact PPR is taken at that depth
_FUSED_PPR = RECIPES["hybrid"].k_ppr
#: the slowest questions of each method listed per level (their positions in the run)
_SLOWEST = 5
BASELINE_LABELS = {"document_node_label": "BaselineDocument", "chunk_node_label": "BaselineChunk"}


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def memory(db: Database) -> dict[str, float]:
    row = db.read(cypher.query("eval/bench_memory"))[0]
    mb = 1024 * 1024
    return {"python_peak_rss_mb": round(peak_rss_mb(), 1), "neo4j_heap_used_mb": round(row["heap_used"] / mb, 1),
            "neo4j_heap_pool_peaks_mb": round(row["heap_peak"] / mb, 1),
            "gds_projections_mb": round((row["projections"] or 0) / mb, 1)}


# --- load throughput ------------------------------------------------------------------------------


def _documents(dataset: str, data_dir: Path | None, limit: int) -> list[Any]:
    from kag_neo4j.builder.pipeline import read_documents

    files = resolve_dataset(dataset, data_dir=data_dir)
    documents = read_documents([files.corpus])
    return documents[:limit] if limit else documents


def our_load(db: Database, settings: Settings, embedder: Embedder, documents: list[Any],
             mode: Literal["light", "full"], llm: Any = None) -> dict[str, Any]:
    from kag_neo4j.builder.pipeline import LoadOptions, load

    clear_knowledge_base(db)
    started = time.perf_counter()
    summary = load([], db, settings, LoadOptions(mode=mode), documents=documents, embedder=embedder, llm=llm)
    seconds = time.perf_counter() - started
    return {"system": f"kag-neo4j {mode}", "passages": len(documents), "chunks": summary.chunks,
            "entities": summary.entities_new, "relations": summary.relations, "llm_calls": summary.llm_calls,
            "tokens": summary.tokens, "seconds": round(seconds, 2),
            "passages_per_s": round(len(documents) / seconds, 2), "peak_rss_mb": round(summary.peak_rss_mb, 1)}


def clear_baseline(db: Database) -> None:
    """Remove what a neo4j-graphrag load wrote, including the index its writer creates."""
    clear_knowledge_base(db)
    db.auto_commit(cypher.query("eval/bench_drop_graphrag_index"))


def graphrag_lexical_load(db: Database, embedder: Embedder, documents: list[Any]) -> dict[str, Any]:
    """neo4j-graphrag's own way to put passages and their vectors in Neo4j (no extraction)."""
    from neo4j_graphrag.components.embedder import TextChunkEmbedder
    from neo4j_graphrag.components.kg_writer import Neo4jWriter
    from neo4j_graphrag.components.lexical_graph import LexicalGraphBuilder
    from neo4j_graphrag.components.types import (
        DocumentInfo,
        LexicalGraphConfig,
        TextChunk,
        TextChunks,
    )

    from kag_neo4j.models.graphrag import as_graphrag_embedder

    clear_knowledge_base(db)
    config = LexicalGraphConfig(**BASELINE_LABELS)
    chunk_embedder = TextChunkEmbedder(as_graphrag_embedder(embedder))
    builder = LexicalGraphBuilder(config)
    writer = Neo4jWriter(db.driver, neo4j_database=db.database)

    async def run() -> None:
        for document in documents:
            chunks = await chunk_embedder.run(TextChunks(chunks=[TextChunk(text=document.text, index=0)]))
            graph = await builder.run(chunks, DocumentInfo(path=document.source, metadata={"title": document.title}))
            await writer.run(graph.graph, config)

    started = time.perf_counter()
    asyncio.run(run())
    seconds = time.perf_counter() - started
    clear_baseline(db)
    return {"system": "neo4j-graphrag lexical graph", "passages": len(documents), "chunks": len(documents),
            "seconds": round(seconds, 2), "passages_per_s": round(len(documents) / seconds, 2)}


def graphrag_kg_load(db: Database, embedder: Embedder, llm: Any, documents: list[Any]) -> dict[str, Any]:
    """neo4j-graphrag's ``SimpleKGPipeline`` with the same LLM (LLM extraction, entity resolution)."""
    from neo4j_graphrag.components.types import LexicalGraphConfig
    from neo4j_graphrag.experimental.pipeline.kg_builder import SimpleKGPipeline

    from kag_neo4j.models.graphrag import as_graphrag_embedder, as_graphrag_llm

    clear_knowledge_base(db)
    before = llm.usage.total()
    pipeline = SimpleKGPipeline(
        llm=as_graphrag_llm(llm, stage="graphrag-extract"), driver=db.driver,
        embedder=as_graphrag_embedder(embedder), from_file=False, neo4j_database=db.database,
        lexical_graph_config=LexicalGraphConfig(**BASELINE_LABELS),
    )

    async def run() -> None:
        for document in documents:
            await pipeline.run_async(text=document.text)

    started = time.perf_counter()
    asyncio.run(run())
    seconds = time.perf_counter() - started
    after = llm.usage.total()
    clear_baseline(db)
    return {"system": "neo4j-graphrag SimpleKGPipeline", "passages": len(documents), "seconds": round(seconds, 2),
            "passages_per_s": round(len(documents) / seconds, 3), "llm_calls": after.calls - before.calls,
            "tokens": after.total_tokens - before.total_tokens}


# --- retrieval latency ----------------------------------------------------------------------------


def parse_level(text: str) -> tuple[str, str, int]:
    name, _, spec = text.partition("=")
    dataset, _, times = spec.partition("*")
    if not name or not dataset:
        raise SystemExit(f"--level {text!r}: use NAME=DATASET or NAME=DATASET*N, e.g. 24k=2wiki*4")
    return name, dataset, int(times or 1)


def replicate(db: Database, present: int, copies: int, noise: float) -> None:
    """Grow the graph from ``present`` to ``copies`` copies of the corpus (only adds: deleting
    vectors would change the approximate nearest-neighbour index the next level measures)."""
    from kag_neo4j.builder.write import anchor_titles, bump_graph_version

    for replica in range(present, copies):
        for part in ("documents", "entities", "mentions", "facts"):
            db.auto_commit(cypher.query(f"eval/bench_replicate_{part}"), replica=replica, noise=noise)
    if copies > present:  # the replicas' title anchors, as the builder writes them
        anchor_titles(db, [row["id"] for row in db.read("MATCH (c:Chunk) WHERE c.replica_of IS NOT NULL RETURN c.id AS id")])
        bump_graph_version(db, "benchmark replicas")


def drop_replicas(db: Database) -> None:
    """Remove earlier replicas; the graph version moves so PPR never reads a stale projection."""
    from kag_neo4j.builder.write import bump_graph_version

    db.auto_commit(cypher.query("eval/bench_drop_replicas"))
    bump_graph_version(db, "benchmark replicas dropped")


def measure_level(db: Database, embedder: Embedder, questions: list[str], method_names: list[str],
                  k: int, warm_up: int) -> dict[str, Any]:
    ctx = MethodContext(db=db, embedder=embedder, k=k)
    methods = build_methods(method_names, ctx, qa=False)
    timings: dict[str, list[float]] = {m.name: [] for m in methods}
    for question in questions[: max(warm_up, 1)]:  # untimed: projection, page cache, the server's query plans
        for method in methods:
            assert method.retrieve is not None
            method.retrieve(question)
    for question in questions:  # interleaved, so no method gets a quieter machine
        for method in methods:
            assert method.retrieve is not None
            started = time.perf_counter()
            method.retrieve(question)
            timings[method.name].append((time.perf_counter() - started) * 1000)
    rows = {}
    for name, values in timings.items():
        slowest = sorted(range(len(values)), key=lambda i: values[i], reverse=True)[:_SLOWEST]
        rows[name] = {"p50_ms": round(metrics.percentile(values, 50) or 0, 1),
                      "p95_ms": round(metrics.percentile(values, 95) or 0, 1),
                      "mean_ms": round(sum(values) / len(values), 1),
                      # each question's time in the order asked, and the positions of the slowest
                      "ms": [round(value, 1) for value in values], "slowest": slowest}
    for name, row in rows.items():
        if "dense" in rows and rows["dense"]["p50_ms"] and rows["dense"]["p95_ms"]:
            row["p50_vs_dense"] = round(row["p50_ms"] / rows["dense"]["p50_ms"], 2)
            row["p95_vs_dense"] = round(row["p95_ms"] / rows["dense"]["p95_ms"], 2)
        for peer in ("graphrag-vector", "graphrag-hybrid"):
            if peer in rows and rows[peer]["p50_ms"]:
                row[f"p50_vs_{peer}"] = round(row["p50_ms"] / rows[peer]["p50_ms"], 2)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--yes", action="store_true", help="confirm: the configured database is emptied")
    parser.add_argument("--level", action="append", help=f"NAME=DATASET[*N] (default: {' '.join(DEFAULT_LEVELS)})")
    parser.add_argument("--no-latency", action="store_true", help="only the load throughput")
    parser.add_argument("--queries", default="hotpotqa", help="dataset or question file whose questions are timed")
    parser.add_argument("--n-queries", type=int, default=50)
    parser.add_argument("--warm-up", type=int, default=50, help=(
        "the first N timed questions are asked untimed first by every method (1: the first one only)"))
    parser.add_argument("--methods", default=",".join(DEFAULT_METHODS))
    parser.add_argument("--k", type=int, default=10, help="chunks per query")
    parser.add_argument("--noise", type=float, default=0.02, help="jitter width of replicated chunk vectors")
    parser.add_argument("--throughput", default="musique", help="dataset whose passages time the loads ('' skips)")
    parser.add_argument("--throughput-limit", type=int, default=300, help="passages loaded for throughput")
    parser.add_argument("--full-limit", type=int, default=0, help="passages for the full (LLM) loads; 0 skips them")
    parser.add_argument("--data-dir", type=Path, default=None, help="benchmarks folder (KAG_BENCHMARKS_DIR)")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/retrieval_latency.json"))
    parser.add_argument("--agreement", action="store_true", help=(
        "at each level also compare the plain-Cypher PPR list with exact GDS PPR (benchmarks/ppr_agreement.py)"))
    args = parser.parse_args(argv)
    if not args.yes:
        parser.error("this benchmark empties the configured database; pass --yes to run it")

    settings = load_settings()
    uncached = settings.model_copy(update={"no_cache": True})
    embedder = build_embedder(settings)
    method_names = [m.strip() for m in args.methods.split(",") if m.strip()]
    report: dict[str, Any] = {
        "machine": {"python": platform.python_version(), "cpus": __import__("os").cpu_count(),
                    "platform": platform.platform()},
        "embedder": embedder.model_id, "throughput": [], "latency": [],
    }
    with Database.connect(settings) as db:
        migrations.migrate(db, embedding_dimension=embedder.dimension)
        info = db.read(cypher.query("eval/server_info"))[0]
        report["neo4j"], report["gds"] = info["version"], info["gds"]

        if args.throughput:
            documents = _documents(args.throughput, args.data_dir, args.throughput_limit)
            print(f"load throughput on {len(documents)} passages of {args.throughput} (caches off)", file=sys.stderr)
            report["throughput"].append(our_load(db, uncached, build_embedder(uncached), documents, "light"))
            report["throughput"].append(graphrag_lexical_load(db, build_embedder(uncached), documents))
            if args.full_limit:
                from kag_neo4j.models import build_llm

                llm = build_llm(uncached)
                few = documents[: args.full_limit]
                report["throughput"].append(our_load(db, uncached, embedder, few, "full", llm=llm))
                report["throughput"].append(graphrag_kg_load(db, embedder, llm, few))
            clear_knowledge_base(db)

        levels = [] if args.no_latency else (args.level or list(DEFAULT_LEVELS))
        questions = []
        if levels:
            query_files = resolve_dataset(args.queries, data_dir=args.data_dir)
            questions = [q.question for q in load_questions(query_files.questions, limit=args.n_queries).questions]
        loaded: str | None = None
        present = 1
        for level in levels:
            name, dataset, copies = parse_level(level)
            corpus = load_corpus(resolve_dataset(dataset, data_dir=args.data_dir).corpus)
            if loaded != dataset or copies < present:
                drop_replicas(db)
                present = 1
            if loaded != dataset:
                print(f"[{name}] {dataset}: {len(corpus.passages)} passages (loaded light unless already there)",
                      file=sys.stderr)
                ensure_corpus_loaded(db, corpus, settings=settings, embedder=embedder, replace=True,
                                     log=lambda m: print(m, file=sys.stderr))
                loaded = dataset
            started = time.perf_counter()
            replicate(db, present, copies, args.noise)
            present = max(present, copies)
            size = db.read(cypher.query("eval/bench_graph_size"))[0]
            print(f"[{name}] {size['chunks']} chunks, {size['entities']} entities "
                  f"(replicas: {time.perf_counter() - started:.0f} s); timing {len(questions)} queries", file=sys.stderr)
            rows = measure_level(db, embedder, questions, method_names, args.k, args.warm_up)
            report["latency"].append({"level": name, "dataset": dataset, "copies": copies, **size,
                                      "methods": rows, "memory": memory(db)})
            if args.agreement:
                from ppr_agreement import agreement, variants_for

                report["latency"][-1]["ppr_agreement"] = agreement(db, embedder, questions,
                                                                   variants_for(_FUSED_PPR, [], []))
            args.out.parent.mkdir(parents=True, exist_ok=True)  # each level as soon as it is measured
            args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
        # The replicas (and their removal) change the HNSW vector index, and with it approximate
        # nearest-neighbour results: leave no half-measured graph behind for an evaluation.
        clear_knowledge_base(db)
        print("the database was emptied; `kag-neo4j eval` loads its corpus afresh", file=sys.stderr)
    report["python_peak_rss_mb"] = round(peak_rss_mb(), 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(markdown(report))
    print(f"\nwritten: {args.out}", file=sys.stderr)
    return 0


def markdown(report: dict[str, Any]) -> str:
    setup = (f"Neo4j {report.get('neo4j')}, GDS {report.get('gds')}, embedder `{report['embedder']}`, "
             f"{report['machine']['cpus']} CPUs")
    lines = [setup, ""]
    if report["throughput"]:
        lines += ["| load | passages | chunks | seconds | passages/s | LLM calls | peak RSS MB |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
        for row in report["throughput"]:
            lines.append(f"| {row['system']} | {row['passages']} | {row.get('chunks', '–')} | {row['seconds']} | "
                         f"{row['passages_per_s']} | {row.get('llm_calls', 0)} | {row.get('peak_rss_mb', '–')} |")
        lines.append("")
    if report["latency"]:
        lines += ["| level | chunks | method | p50 ms | p95 ms | p50 / dense | p95 / dense | p50 / graphrag-vector "
                  "| p50 / graphrag-hybrid |", "|---|---:|---|---:|---:|---:|---:|---:|---:|"]
        for level in report["latency"]:
            for method, row in level["methods"].items():
                lines.append(f"| {level['level']} | {level['chunks']} | {method} | {row['p50_ms']} | {row['p95_ms']} | "
                             f"{row.get('p50_vs_dense', '–')} | {row.get('p95_vs_dense', '–')} | "
                             f"{row.get('p50_vs_graphrag-vector', '–')} | {row.get('p50_vs_graphrag-hybrid', '–')} |")
        if len(report["latency"]) > 1:
            by_size = sorted(report["latency"], key=lambda level: level["chunks"])  # whatever order --level gave
            first, last = by_size[-2], by_size[-1]
            lines += ["", f"growth {first['level']} -> {last['level']} ({last['chunks'] / first['chunks']:.1f}x the chunks), "
                      "p50: " + ", ".join(
                          f"{method} {last['methods'][method]['p50_ms'] / first['methods'][method]['p50_ms']:.2f}x"
                          for method in last["methods"] if method in first["methods"] and first["methods"][method]["p50_ms"])]
        lines += ["", f"The {_SLOWEST} slowest questions of each method (position in the run: ms):", ""]
        for level in report["latency"]:
            for method, row in level["methods"].items():
                if "slowest" in row:  # (reports written before the per-question times have none)
                    lines.append(f"- {level['level']} {method}: " + ", ".join(
                        f"#{index + 1}: {row['ms'][index]}" for index in row["slowest"]))
        for level in report["latency"]:
            if "ppr_agreement" in level:
                from ppr_agreement import markdown as agreement_table

                lines += ["", f"{level['level']} ({level['chunks']} chunks):", "", agreement_table(level["ppr_agreement"], _FUSED_PPR)]
        lines += ["", "| level | chunks | entities | Neo4j heap used MB | heap pool peaks MB | GDS projection MB |",
                  "|---|---:|---:|---:|---:|---:|"]
        for level in report["latency"]:
            mem = level["memory"]
            lines.append(f"| {level['level']} | {level['chunks']} | {level['entities']} | {mem['neo4j_heap_used_mb']} | "
                         f"{mem['neo4j_heap_pool_peaks_mb']} | {mem['gds_projections_mb']} |")
    lines.append(f"\npython peak RSS: {report['python_peak_rss_mb']} MB")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())

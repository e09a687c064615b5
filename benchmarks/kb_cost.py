"""What a knowledge base costs: search latency and memory with 1, 5 and 20 KBs in one Neo4j.

    export KAG_EMBEDDER=e5 KAG_SERVER_NAME=bench      # a local server of its own (its store size is reported)
    python benchmarks/kb_cost.py --yes --data-dir ../shared/benchmarks              # hotpotqa, 1,5,20 KBs
    python benchmarks/kb_cost.py --yes --dataset 2wiki --kbs 1,5,20 --n-queries 50

**It drops every knowledge base of the configured database but the default one** (``--yes`` says you
mean it). The dataset's corpus is loaded
light into the knowledge bases ``kb01``, ``kb02`` … ``kbNN`` (``kag-neo4j kb create`` and ``load``, as
a user would: each has its own graph, constraints and indexes; the vector cache embeds each passage
once), added level by level. At each level the same questions are
searched in ``kb01`` by ``dense``, ``ours`` (the default hybrid, local PageRank) and ``ours-gds``
(GDS PageRank over ``kb01``'s projection), one untimed warm-up each, interleaved: p50 / p95 ms and
the ratio to dense in the same run; then Neo4j's heap in use, the GDS projections' size, the number
of indexes and (for the local server) the store's size on disk.

Prints a Markdown table and writes everything to ``--out`` (JSON).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from retrieval_latency import measure_level, memory  # noqa: E402 - the sibling benchmark's timing

from kag_neo4j.config import Settings, load_settings  # noqa: E402
from kag_neo4j.eval.datasets import Corpus, load_corpus, load_questions, resolve_dataset  # noqa: E402
from kag_neo4j.eval.loading import ensure_corpus_loaded  # noqa: E402
from kag_neo4j.models import build_embedder  # noqa: E402
from kag_neo4j.models.base import Embedder  # noqa: E402
from kag_neo4j.store import cypher, migrations, server  # noqa: E402
from kag_neo4j.store.database import Database  # noqa: E402
from kag_neo4j.store.kb_admin import drop_kb, kb_names  # noqa: E402

METHODS = ["dense", "ours", "ours-gds"]


def kb_name(number: int) -> str:
    return f"kb{number:02d}"


def store_mb(settings: Settings) -> float | None:
    """The local server's store on disk (None for a server kag-neo4j does not manage)."""
    if settings.neo4j_uri:
        return None
    data = server.instance_dir(settings) / "data"
    return round(sum(p.stat().st_size for p in data.rglob("*") if p.is_file()) / 1024 / 1024, 1)


def load_kb(db: Database, number: int, corpus: Corpus, settings: Settings, embedder: Embedder) -> int:
    """Create the KB ``number`` and load ``corpus`` into it (light); its number of chunks."""
    kb = db.in_kb(kb_name(number))
    migrations.migrate(kb, embedding_dimension=embedder.dimension)
    ensure_corpus_loaded(kb, corpus, settings=settings, embedder=embedder, replace=True,
                         log=lambda m: print(f"  {kb_name(number)}: {m}", file=sys.stderr))
    return int(kb.read(cypher.query("store/kb_counts"))[0]["chunks"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--yes", action="store_true", help="confirm: every KB but the default one is dropped")
    parser.add_argument("--dataset", default="hotpotqa", help="corpus of every KB, and the questions timed")
    parser.add_argument("--kbs", default="1,5,20", help="numbers of knowledge bases, ascending")
    parser.add_argument("--n-queries", type=int, default=50)
    parser.add_argument("--k", type=int, default=10, help="chunks per query")
    parser.add_argument("--data-dir", type=Path, default=None, help="benchmarks folder (KAG_BENCHMARKS_DIR)")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/kb_cost.json"))
    args = parser.parse_args(argv)
    if not args.yes:
        parser.error("this benchmark drops every knowledge base but the default one; pass --yes to run it")
    levels = sorted({int(x) for x in args.kbs.split(",") if x.strip()})

    settings = load_settings()
    embedder = build_embedder(settings)
    files = resolve_dataset(args.dataset, data_dir=args.data_dir)
    questions = [q.question for q in load_questions(files.questions, limit=args.n_queries).questions]
    report: dict[str, Any] = {"dataset": args.dataset, "embedder": embedder.model_id, "levels": []}
    with Database.connect(settings) as db:
        for name in kb_names(db)[1:]:
            drop_kb(db, name)
        corpus = load_corpus(files.corpus)
        first = db.in_kb(kb_name(1))
        present = 0
        for level in levels:
            began = time.perf_counter()
            while present < level:
                present += 1
                chunks = load_kb(db, present, corpus, settings, embedder)
                print(f"  {kb_name(present)}: {chunks} chunks", file=sys.stderr)
            print(f"[{level} KB] ready in {time.perf_counter() - began:.0f} s; timing {len(questions)} queries "
                  f"in {kb_name(1)}", file=sys.stderr)
            rows = measure_level(first, embedder, questions, METHODS, args.k)
            indexes = len(db.read(cypher.query("store/stored_index_names"))[0]["names"])
            report["levels"].append({"kbs": level, "methods": rows, "memory": memory(db), "indexes": indexes,
                                     "store_mb": store_mb(settings)})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2), encoding="utf-8")
    print(f"\n{args.dataset}, searched in {kb_name(1)} ({len(questions)} questions); raw figures: {args.out}\n")
    print("| KBs | dense p50 / p95 ms | ours p50 / p95 ms | ours / dense p50 | ours-gds p50 / p95 ms | "
          "Neo4j heap MB | GDS projections MB | indexes | store MB |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in report["levels"]:
        m, mem = row["methods"], row["memory"]
        print(f"| {row['kbs']} | {m['dense']['p50_ms']} / {m['dense']['p95_ms']} | {m['ours']['p50_ms']} / "
              f"{m['ours']['p95_ms']} | {m['ours'].get('p50_vs_dense', '')} | {m['ours-gds']['p50_ms']} / "
              f"{m['ours-gds']['p95_ms']} | {mem['neo4j_heap_used_mb']} | {mem['gds_projections_mb']} | "
              f"{row['indexes']} | {row['store_mb'] if row['store_mb'] is not None else 'n/a'} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

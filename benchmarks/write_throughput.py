"""Writer throughput with precomputed extractions: chunks/s, facts/s and peak memory.

    python benchmarks/write_throughput.py ../shared/benchmarks/2wiki/corpus.json --yes
    python benchmarks/write_throughput.py CORPUS --yes --extractions light --batch-sizes 500,1000
    python benchmarks/write_throughput.py CORPUS --yes --fractions 0.25,0.5,1 --no-vectors

**It empties the configured database** (``NEO4J_URI``) before every run, hence ``--yes``.

Everything before the writer is done once, untimed: read + split the corpus, extract every
chunk (``synthetic``: capitalised phrases as entities and consecutive ones in a sentence as open
facts, deterministic and fast; ``light``: the real spaCy light extractor, cached in
``--cache`` when given), align and resolve (against an empty graph), and give every chunk and new entity a
random unit vector (``--dimension``, seeded) unless ``--no-vectors``. Then, for every batch size
and corpus fraction, the database is emptied and migrated and :class:`GraphWriter` writes the
aligned documents; the table shows seconds, chunks/s, facts/s (facts = ``MENTIONED_IN`` edges +
relations), rows per transaction and the process's peak RSS. A fraction shows how throughput
holds up as the graph grows: the last rows of a full run MERGE into a graph of all earlier ones.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from itertools import pairwise
from pathlib import Path

import numpy as np

from kag_neo4j.builder.aligned_document import AlignedDocument
from kag_neo4j.builder.alignment import Aligner
from kag_neo4j.builder.pipeline import peak_rss_mb
from kag_neo4j.builder.readers import read_path
from kag_neo4j.builder.records import (
    ChunkExtraction,
    ChunkRecord,
    ExtractedEntity,
    ExtractedRelation,
)
from kag_neo4j.builder.resolution import Resolver
from kag_neo4j.builder.split import split_document
from kag_neo4j.builder.write import GraphWriter, graph_counts
from kag_neo4j.config import load_settings
from kag_neo4j.store import migrations
from kag_neo4j.store.database import Database
from kag_neo4j.store.reset import claim_database, reset_database

_PHRASE = re.compile(r"\b[A-Z][\w'-]*(?: (?:of |de |the )?[A-Z][\w'-]*)*")
_SENTENCE = re.compile(r"[^.!?]+[.!?]?")


def synthetic_extraction(chunk: ChunkRecord) -> ChunkExtraction:
    """Capitalised phrases are entities; consecutive ones in a sentence are related."""
    entities: dict[str, ExtractedEntity] = {}
    relations = []
    for sentence in _SENTENCE.findall(chunk.text):
        names = list(dict.fromkeys(m.group(0) for m in _PHRASE.finditer(sentence) if len(m.group(0)) > 2))
        for name in names:
            entities.setdefault(name, ExtractedEntity(name=name, type="Entity"))
        relations.extend(ExtractedRelation(subject=a, predicate="co-occurs with", object=b)
                         for a, b in pairwise(names))
    return ChunkExtraction(chunk_id=chunk.id, entities=list(entities.values()), relations=relations, mode="light")


def light_extractions(chunks: list[ChunkRecord], cache: Path | None) -> dict[str, ChunkExtraction]:
    if cache is not None and cache.is_file():
        found = [ChunkExtraction.model_validate_json(line) for line in cache.read_text().splitlines() if line]
        by_id = {e.chunk_id: e for e in found}
        if all(c.id in by_id for c in chunks):
            return by_id
    from kag_neo4j.builder.extract import Extraction

    began = time.perf_counter()
    batch = Extraction(mode="light").extract_chunks(chunks)
    print(f"light extraction of {len(chunks)} chunks: {time.perf_counter() - began:.1f} s", file=sys.stderr)
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text("\n".join(e.model_dump_json() for e in batch.extractions) + "\n")
    return {e.chunk_id: e for e in batch.extractions}


def prepare(corpus: Path, kind: str, cache: Path | None, vectors: bool, dimension: int) -> tuple[list[AlignedDocument], float]:
    began = time.perf_counter()
    documents = list(read_path(corpus))
    split = [(doc, split_document(doc)) for doc in documents]
    chunks = [c for _, cs in split for c in cs]
    if kind == "light":
        by_id = light_extractions(chunks, cache)
    else:
        by_id = {c.id: synthetic_extraction(c) for c in chunks}
    aligner = Aligner()
    aligned = [aligner.align_document(doc, cs, [by_id[c.id] for c in cs if c.id in by_id]) for doc, cs in split]
    Resolver().resolve(aligned)
    if vectors:
        rng = np.random.default_rng(7)

        def unit() -> list[float]:
            v = rng.standard_normal(dimension).astype(np.float32)
            return (v / np.linalg.norm(v)).tolist()

        for doc in aligned:
            for chunk in doc.chunks:
                doc.chunk_vectors[chunk.id] = unit()
            for node in doc.entities.values():
                if node.embedding is None:
                    node.embedding = unit()
    return aligned, time.perf_counter() - began


def run(db: Database, docs: list[AlignedDocument], batch_size: int, dimension: int) -> dict[str, float]:
    reset_database(db)
    migrations.migrate(db, embedding_dimension=dimension)
    writer = GraphWriter(db, batch_size=batch_size)
    began = time.perf_counter()
    stats = writer.write(docs)
    seconds = time.perf_counter() - began
    counts = graph_counts(db)
    return {
        "documents": len(docs), "chunks": stats.chunks, "entities": counts["entities"], "mentions": stats.mentions,
        "relations": stats.relations, "facts": stats.facts, "transactions": stats.transactions, "seconds": seconds,
        "chunks_per_s": stats.chunks / seconds, "facts_per_s": stats.facts / seconds,
        "rows_per_tx": (stats.chunks + stats.entities + stats.mentions + stats.relations) / max(1, stats.transactions),
        "peak_rss_mb": peak_rss_mb(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path, help="the corpus to load, e.g. ../shared/benchmarks/2wiki/corpus.json")
    parser.add_argument("--yes", action="store_true", help="confirm that the configured database may be emptied")
    parser.add_argument("--extractions", choices=("synthetic", "light"), default="synthetic")
    parser.add_argument("--cache", type=Path, default=None,
                        help="a JSONL file to cache light extractions in (spaCy over 2Wiki takes minutes)")
    parser.add_argument("--batch-sizes", default="500", help="chunks per transaction, comma-separated")
    parser.add_argument("--fractions", default="1", help="parts of the corpus to load, comma-separated")
    parser.add_argument("--vectors", action=argparse.BooleanOptionalAction, default=True,
                        help="write chunk and entity vectors (default: yes)")
    parser.add_argument("--dimension", type=int, default=384)
    parser.add_argument("--out", type=Path, default=None, help="also write the rows as JSON here")
    args = parser.parse_args(argv)
    if not args.yes:
        parser.error("this benchmark empties the configured database; pass --yes to confirm")
    random.seed(7)
    docs, prep_seconds = prepare(args.corpus, args.extractions, args.cache, args.vectors, args.dimension)
    chunks = sum(len(d.chunks) for d in docs)
    print(f"prepared {len(docs)} documents, {chunks} chunks ({args.extractions} extractions, "
          f"vectors {'on' if args.vectors else 'off'}) in {prep_seconds:.1f} s; peak RSS {peak_rss_mb():.0f} MB")
    rows = []
    with Database.connect(load_settings()) as db:
        claim_database(db, reason="benchmarks/write_throughput.py --yes", allow_data=True)
        for fraction in [float(f) for f in args.fractions.split(",") if f]:
            part = docs[: max(1, int(len(docs) * fraction))]
            for batch_size in [int(b) for b in args.batch_sizes.split(",") if b]:
                row = run(db, part, batch_size, args.dimension)
                row.update(fraction=fraction, batch_size=batch_size)
                rows.append(row)
                print(f"  fraction {fraction:g}, batch {batch_size}: {row['chunks_per_s']:.0f} chunks/s", file=sys.stderr)
    header = ("fraction", "batch", "docs", "chunks", "entities", "mentions", "relations", "tx", "seconds",
              "chunks/s", "facts/s", "peak RSS MB")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in rows:
        print(f"| {r['fraction']:g} | {r['batch_size']} | {r['documents']} | {r['chunks']} | {r['entities']} | "
              f"{r['mentions']} | {r['relations']} | {r['transactions']} | {r['seconds']:.1f} | "
              f"{r['chunks_per_s']:.0f} | {r['facts_per_s']:.0f} | {r['peak_rss_mb']:.0f} |")
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

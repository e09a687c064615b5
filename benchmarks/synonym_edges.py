"""Synonym edges between entities of similar names, for the recall ablation ``gds+synonyms``.

Writes ``(:Entity)-[:SYNONYM {cosine}]->(:Entity)`` between each entity and its ``--k`` nearest
entities by name vector (the ``entity_embedding`` index) with cosine ≥ ``--min-cosine``
(``cypher/eval/bench_synonym_edges.cypher``), on the corpus ``kag-neo4j eval`` loaded; the builder
already merges names of one family at 0.92, so the edges join the band below that and across
families. ``--remove`` deletes them (the entity-to-entity ``SYNONYM`` edges that carry a cosine). Then:

    python benchmarks/synonym_edges.py --min-cosine 0.85
    python benchmarks/recall_sweep.py 2wiki --limit 100 --data-dir ../shared/benchmarks --variants dense,gds,gds+synonyms
    python benchmarks/synonym_edges.py --remove

Prints the edge count, the cosine distribution and a sample of pairs to read.
"""

from __future__ import annotations

import argparse
import random
import sys

from kag_neo4j.config import Settings
from kag_neo4j.store import cypher
from kag_neo4j.store.database import Database

BATCH = 500


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--min-cosine", type=float, default=0.85)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--remove", action="store_true", help="delete the edges and stop")
    parser.add_argument("--sample", type=int, default=20, help="pairs printed to read")
    args = parser.parse_args(argv)
    with Database.connect(Settings()) as db:
        delete = ("MATCH (:Entity)-[edge:SYNONYM]->(:Entity) WHERE edge.cosine IS NOT NULL "
                  "WITH edge LIMIT 10000 DELETE edge RETURN count(*) AS n")
        while db.write(delete)[0]["n"]:
            pass
        if args.remove:
            print("synonym edges removed")
            return 0
        ids = [row["id"] for row in
               db.read("MATCH (e:Entity) WHERE e.embedding IS NOT NULL RETURN e.id AS id ORDER BY id")]
        edges = 0
        for start in range(0, len(ids), BATCH):
            rows = db.write(cypher.query("eval/bench_synonym_edges"), ids=ids[start:start + BATCH], k=args.k,
                            min_cosine=args.min_cosine)
            edges += rows[0]["edges"] if rows else 0
            print(f"  {min(start + BATCH, len(ids))}/{len(ids)} entities, {edges} edges", file=sys.stderr, flush=True)
        pairs = db.read("MATCH (a:Entity)-[edge:SYNONYM]->(b:Entity) WHERE edge.cosine IS NOT NULL "
                        "RETURN a.name AS a, b.name AS b, a.family AS fa, b.family AS fb, edge.cosine AS cosine")
    cosines = sorted(pair["cosine"] for pair in pairs)
    print(f"{len(pairs)} synonym edges over {len(ids)} entities (cosine >= {args.min_cosine}, k = {args.k})")
    if cosines:
        quartiles = [cosines[int(q * (len(cosines) - 1))] for q in (0, .25, .5, .75, 1)]
        print("cosine quartiles: " + ", ".join(f"{value:.3f}" for value in quartiles))
    for pair in random.Random(0).sample(pairs, min(args.sample, len(pairs))):
        print(f"  {pair['cosine']:.3f}  {pair['a']} ({pair['fa']})  ~  {pair['b']} ({pair['fb']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

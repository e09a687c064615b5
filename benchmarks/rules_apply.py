"""Time `kag-neo4j rules apply` on generated riskmining-style graphs (bounded; local Neo4j only).

    python benchmarks/rules_apply.py --yes [--sizes 1000,5000]

For each size N: N people, N/2 apps (a tenth marked gambling), 3N devices (each person owns
three to eight, each device installs one to three apps), companies, certificates and money
transfers from a fixed seed. It empties the configured database (it must carry the test marker
or be claimed with --yes), loads the graph, applies KAG's riskmining rules (RiskMining.schema +
concept.rule, in tests/fixtures) twice and prints a Markdown table: seconds of the first apply,
of the re-apply (retract + derive), and the facts derived.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

from kag_neo4j.config import load_settings
from kag_neo4j.rules.apply import apply_rules
from kag_neo4j.rules.load import load_rules
from kag_neo4j.store import migrations
from kag_neo4j.store.database import Database
from kag_neo4j.store.reset import claim_database, reset_database

ROOT = Path(__file__).resolve().parents[1]
FILES = [ROOT / "tests" / "fixtures" / "schemas" / "RiskMining.schema",
         ROOT / "tests" / "fixtures" / "rules" / "kag" / "riskmining_concept.rule"]

# Neo4j 5.26 dynamic labels and types: the generated names are a fixed set in this file
_NODES = "UNWIND $rows AS row CREATE (n:Entity {id: row.id}) SET n += row.props, n:$(row.label) RETURN count(n) AS n"
_EDGES = ("UNWIND $rows AS row MATCH (s:Entity {id: row.s}), (o:Entity {id: row.o}) "
          "CREATE (s)-[r:$(row.t)]->(o) SET r = row.props RETURN count(r) AS n")


def generate(size: int, rng: random.Random) -> tuple[list[dict], list[dict]]:
    people = [f"p{i}" for i in range(size)]
    apps = [f"a{i}" for i in range(max(1, size // 2))]
    companies = [f"c{i}" for i in range(max(1, size // 10))]
    certs = [f"k{i}" for i in range(len(companies))]
    nodes = [{"id": p, "label": "Person", "props": {}} for p in people]
    nodes += [{"id": a, "label": "App", "props": {"riskMark": "赌博" if rng.random() < 0.1 else "UNKNOWN"}} for a in apps]
    nodes += [{"id": c, "label": "Company", "props": {}} for c in companies]
    nodes += [{"id": k, "label": "Cert", "props": {}} for k in certs]
    edges: list[dict] = []
    device = 0
    for person in people:
        favourite = rng.sample(apps, k=min(len(apps), rng.randint(1, 3)))
        for _ in range(rng.randint(3, 8)):
            nodes.append({"id": f"d{device}", "label": "Device", "props": {}})
            edges.append({"s": person, "t": "hasDevice", "o": f"d{device}", "props": {}})
            for app in favourite:
                edges.append({"s": f"d{device}", "t": "install", "o": app, "props": {}})
            device += 1
        if rng.random() < 0.2:
            edges.append({"s": person, "t": "holdShare", "o": rng.choice(companies), "props": {}})
        for _ in range(rng.randint(0, 2)):
            edges.append({"s": person, "t": "fundTrans", "o": rng.choice(people), "props": {"transAmt": rng.randint(1, 9999)}})
    for company, cert in zip(companies, certs):
        edges.append({"s": company, "t": "hasCert", "o": cert, "props": {}})
    for app in apps:
        edges.append({"s": app, "t": "useCert", "o": rng.choice(certs), "props": {}})
    return nodes, edges


def load(db: Database, nodes: list[dict], edges: list[dict]) -> None:
    for start in range(0, len(nodes), 5000):
        db.write(_NODES, rows=nodes[start : start + 5000])
    for start in range(0, len(edges), 5000):
        db.write(_EDGES, rows=edges[start : start + 5000])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--yes", action="store_true", help="confirm that the configured database may be emptied")
    parser.add_argument("--sizes", default="1000,5000", help="numbers of people, comma separated")
    args = parser.parse_args(argv)
    if not args.yes:
        parser.error("this benchmark empties the configured database; pass --yes to confirm")
    rules = load_rules(FILES)
    rows = []
    with Database.connect(load_settings()) as db:
        claim_database(db, reason="benchmarks/rules_apply.py --yes", allow_data=True)
        for size in [int(s) for s in args.sizes.split(",") if s]:
            reset_database(db)
            migrations.migrate(db, embedding_dimension=384)
            nodes, edges = generate(size, random.Random(7))
            load(db, nodes, edges)
            started = time.perf_counter()
            first = apply_rules(db, rules, as_of="2024-01-01")
            first_s = time.perf_counter() - started
            started = time.perf_counter()
            again = apply_rules(db, rules, as_of="2024-01-01")
            again_s = time.perf_counter() - started
            derived = sum(r.derived for r in first.rules)
            if [r.derived for r in again.rules] != [r.derived for r in first.rules]:
                print("re-apply derived different counts", file=sys.stderr)
                return 1
            rows.append((size, len(nodes), len(edges), derived, first_s, again_s))
            print(f"  {size} people: {derived} facts in {first_s:.2f} s", file=sys.stderr)
        reset_database(db)
    print("| people | nodes | edges | derived facts | first apply (s) | re-apply (s) |")
    print("|---:|---:|---:|---:|---:|---:|")
    for size, n, e, d, a, b in rows:
        print(f"| {size} | {n} | {e} | {d} | {a:.2f} | {b:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Rules on KAG's supplychain data: a full apply, and the refresh after a one-row update
(bounded; local Neo4j only).

    python benchmarks/rules_refresh.py --yes [--data DIR] [--schema FILE] [--copies 1,20]

The supplychain CSVs (``--data``, default ``demos/supplychain`` of KAG_BENCHMARKS_DIR or
../shared/benchmarks) are
written straight into Neo4j by this script (Company, Person, Product, Industry,
ProductChainEvent; ``product``, ``legalRepresentative``, ``belongToIndustry``,
``hasSupplyChain``, ``fundTrans``, ``subject``), not through ``kag-neo4j load``, so the figure
is the rules' cost alone. ``--copies K`` writes K disjoint copies (ids suffixed) for a larger
graph. The rules are SupplyChain.schema's and the demo's concept.rule (18 rules), registered
with ``apply_and_register`` (what ``kag-neo4j rules apply`` runs), as of 2023-09-30.

Then two one-row updates, each followed by ``refresh_rules`` with the footprint the load
pipeline would compute for it: one ``Company_fundTrans_Company`` row's amount changes, and the
demo's ``CompanyUpdate.csv`` row (a company's products) is applied. After each refresh the
derived facts are compared with a full re-apply of all rules (they must be equal).

Second table (``--via-load``, default on): the same through ``kag-neo4j load``
(``kag_neo4j.builder.pipeline.load``, light mode, hashing embedder) on a copy of the demo's
CSVs: the demo is loaded, the rules applied and registered, then one row of a file is changed
and the folder loaded again - the changed file's document is replaced and the load re-applies
the registered rules its footprint touches (what a user's edit costs end to end): one transfer's
amount in ``Company_fundTrans_Company.csv``, then one company's product list in ``Company.csv``
(a 103-row file replaced whole). Each refresh is checked equal to a full re-apply.

The script empties the configured database (it must carry the test marker, or pass --yes) and
prints Markdown tables.
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from kag_neo4j.builder.pipeline import LoadOptions, LoadSummary, load, with_schema_types
from kag_neo4j.builder.readers.common import ReadOptions
from kag_neo4j.config import Settings, load_settings
from kag_neo4j.eval.datasets import default_data_dir
from kag_neo4j.rules.footprint import Footprint
from kag_neo4j.rules.load import RuleSet, load_rules
from kag_neo4j.rules.refresh import graph_version, refresh_rules
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.rules.registry import apply_and_register
from kag_neo4j.schema.validate import load_schema
from kag_neo4j.store import migrations
from kag_neo4j.store.database import Database
from kag_neo4j.store.reset import claim_database, reset_database

BENCHMARKS = default_data_dir() or Path("../shared/benchmarks")
DATA = BENCHMARKS / "demos" / "supplychain"
SCHEMA = BENCHMARKS / "schemas" / "SupplyChain.schema"
AS_OF = "2023-09-30"

# Neo4j 5.26 dynamic labels and types; the names are this file's fixed set
_NODES = "UNWIND $rows AS row MERGE (n:Entity {id: row.id}) SET n += row.props, n:$(row.label)"
_EDGES = ("UNWIND $rows AS row MATCH (s:Entity {id: row.s}), (o:Entity {id: row.o}) "
          "CREATE (s)-[r:$(row.t)]->(o) SET r = row.props")
_BY_NAME = ("UNWIND $rows AS row MATCH (s:Entity {id: row.s}), (o:Company {name: row.name}) "
            "WHERE o.id ENDS WITH row.suffix CREATE (s)-[:legalRepresentative]->(o)")
_DERIVED = ("MATCH (s)-[r]->(o) WHERE r.derived_by IS NOT NULL RETURN s.id AS s, type(r) AS t, o.id AS o, r.derived_by AS by "
            "UNION ALL MATCH (n) WHERE any(k IN keys(n) WHERE k ENDS WITH '_derived_by') "
            "RETURN n.id AS s, 'props' AS t, [k IN keys(n) WHERE n[k + '_derived_by'] IS NOT NULL | [k, n[k]]] AS o, '' AS by")


def _rows(name: str, data: Path) -> list[dict[str, str]]:
    with (data / name).open(encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


def _split(value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]


def graph(data: Path, copy: int) -> tuple[list[dict], list[dict], list[dict]]:
    sfx = f"#{copy}"
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    by_name: list[dict[str, Any]] = []
    products = _rows("Product.csv", data)
    known = {row["id"] for row in products}
    for row in products:
        nodes.append({"id": row["id"] + sfx, "label": "Product", "props": {"name": row["id"]}})
        if row["belongToIndustry"]:
            nodes.append({"id": row["belongToIndustry"] + sfx, "label": "Industry", "props": {"name": row["belongToIndustry"]}})
            edges.append({"s": row["id"] + sfx, "t": "belongToIndustry", "o": row["belongToIndustry"] + sfx, "props": {}})
        for down in _split(row["hasSupplyChain"]):
            if down not in known:
                known.add(down)
                nodes.append({"id": down + sfx, "label": "Product", "props": {"name": down}})
            edges.append({"s": row["id"] + sfx, "t": "hasSupplyChain", "o": down + sfx, "props": {}})
    for row in _rows("Company.csv", data):
        nodes.append({"id": row["id"] + sfx, "label": "Company", "props": {"name": row["name"]}})
        edges += [{"s": row["id"] + sfx, "t": "product", "o": p + sfx, "props": {}} for p in _split(row["product"]) if p in known]
    for row in _rows("Person.csv", data):
        nodes.append({"id": "person:" + row["id"] + sfx, "label": "Person", "props": {"name": row["name"], "age": int(row["age"])}})
        by_name += [{"s": "person:" + row["id"] + sfx, "name": name, "suffix": sfx} for name in dict.fromkeys(_split(row["legalRepresentative"]))]
    for row in _rows("Company_fundTrans_Company.csv", data):
        edges.append({"s": row["srcId"] + sfx, "t": "fundTrans", "o": row["dstId"] + sfx,
                      "props": {"transDate": row["transDate"], "transAmt": int(row["transAmt"])}})
    for row in _rows("ProductChainEvent.csv", data):
        nodes.append({"id": "event:" + row["id"] + sfx, "label": "ProductChainEvent",
                      "props": {"name": row["name"], "index": row["index"], "trend": row["trend"]}})
        edges.append({"s": "event:" + row["id"] + sfx, "t": "subject", "o": row["subject"] + sfx, "props": {}})
    return nodes, edges, by_name


def write(db: Database, data: Path, copies: int) -> tuple[int, int]:
    counts = [0, 0]
    for copy in range(copies):
        nodes, edges, by_name = graph(data, copy)
        for rows, cypher in ((nodes, _NODES), (edges, _EDGES), (by_name, _BY_NAME)):
            for start in range(0, len(rows), 5000):
                db.write(cypher, rows=rows[start : start + 5000])
        counts[0] += len(nodes)
        counts[1] += len(edges) + len(by_name)
    return counts[0], counts[1]


def derived(db: Database) -> list[str]:
    rows = db.read(_DERIVED)
    return sorted(repr((row["s"], row["t"], sorted(map(tuple, row["o"])) if row["t"] == "props" else row["o"], row["by"]))
                  for row in rows)


def timed_refresh(db: Database, rules: RuleSet, change: Footprint) -> tuple[float, int, bool]:
    """Refresh after ``change``; seconds, rules re-applied, and whether a full re-apply agrees."""
    started = time.perf_counter()
    report = refresh_rules(db, change, since=graph_version(db))
    seconds = time.perf_counter() - started
    assert report is not None and not report.full
    after = derived(db)
    apply_and_register(db, rules, as_of=AS_OF)
    full = derived(db)
    if full != after:
        print("refresh only:", sorted(set(after) - set(full))[:5], "\nfull only:", sorted(set(full) - set(after))[:5],
              "\nre-applied:", [r.id for r in report.rules], file=sys.stderr)
    return seconds, len(report.rules), full == after


def _edit(path: Path, change: Any) -> None:
    """Rewrite one row of a CSV file: ``change(rows)`` edits the list of row dicts in place."""
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        fields, rows = list(reader.fieldnames or []), list(reader)
    change(rows)
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)


def _triple_first_amount(rows: list[dict[str, str]]) -> None:
    rows[0]["transAmt"] = str(int(rows[0]["transAmt"]) * 3)


def _drop_a_product(rows: list[dict[str, str]]) -> None:
    row = next(r for r in rows if len(_split(r["product"])) > 1)
    row["product"] = ",".join(_split(row["product"])[:-1])


def via_load(db: Database, settings: Settings, data: Path, schema_file: Path, rules: RuleSet) -> tuple[Any, ...]:
    """The demo through ``load``; a one-row edit of a file, loaded again (see the module docs)."""
    schema = load_schema(str(schema_file))
    options = LoadOptions(mode="light", spg_schema=schema, similarity=None)
    read = with_schema_types(ReadOptions(), schema)
    embedder = HashingEmbedder(384)
    with tempfile.TemporaryDirectory(prefix="kag-rules-refresh-") as tmp:
        folder = Path(tmp) / "supplychain"
        folder.mkdir()
        for csv_file in sorted(data.glob("*.csv")):
            (folder / csv_file.name).write_bytes(csv_file.read_bytes())

        def reload() -> tuple[float, LoadSummary]:
            started = time.perf_counter()
            summary = load([folder], db, settings, options, embedder=embedder, read_options=read)
            return time.perf_counter() - started, summary

        load_s, _ = reload()
        started = time.perf_counter()
        first = apply_and_register(db, rules, as_of=AS_OF)
        first_s = time.perf_counter() - started
        started = time.perf_counter()
        apply_and_register(db, rules, as_of=AS_OF)
        again_s = time.perf_counter() - started
        edits = []
        for name, change in (("Company_fundTrans_Company.csv", _triple_first_amount), ("Company.csv", _drop_a_product)):
            _edit(folder / name, change)
            seconds, summary = reload()
            report = summary.rules
            assert report is not None and report.error is None and summary.documents_replaced == 1, summary
            after = derived(db)
            apply_and_register(db, rules, as_of=AS_OF)
            equal = derived(db) == after
            edits.append((name, seconds, report.seconds, len(report.rules), len(rules.rules), bool(report.full), equal))
    return load_s, sum(r.derived for r in first.rules), first_s, again_s, edits


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--yes", action="store_true", help="confirm that the configured database may be emptied")
    parser.add_argument("--data", type=Path, default=DATA, help="the supplychain demo folder (CSVs + concept.rule)")
    parser.add_argument("--schema", type=Path, default=SCHEMA, help="SupplyChain.schema")
    parser.add_argument("--copies", default="1,20", help="copies of the demo graph, comma separated")
    parser.add_argument("--no-via-load", dest="via_load", action="store_false",
                        help="leave out the second table (the demo through kag-neo4j load, one-row edits re-loaded)")
    args = parser.parse_args(argv)
    if not args.yes:
        parser.error("this benchmark empties the configured database; pass --yes to confirm")
    rules = load_rules([args.schema, args.data / "concept.rule"])
    update = _rows("CompanyUpdate.csv", args.data)[0]
    table = []
    settings = load_settings(no_cache=True)
    loaded: tuple[Any, ...] | None = None
    with Database.connect(settings) as db:
        claim_database(db, reason="benchmarks/rules_refresh.py --yes", allow_data=True)
        for copies in [int(c) for c in args.copies.split(",") if c]:
            reset_database(db)
            migrations.migrate(db, embedding_dimension=384)
            nodes, edges = write(db, args.data, copies)
            started = time.perf_counter()
            first = apply_and_register(db, rules, as_of=AS_OF)
            full_s = time.perf_counter() - started
            facts = sum(r.derived for r in first.rules)
            started = time.perf_counter()
            apply_and_register(db, rules, as_of=AS_OF)
            again_s = time.perf_counter() - started
            # one fundTrans row's amount changes
            db.write("MATCH (:Company)-[f:fundTrans]->(:Company) WITH f ORDER BY f.transDate, f.transAmt LIMIT 1 "
                     "SET f.transAmt = f.transAmt * 3")
            fund = timed_refresh(db, rules, Footprint(labels=frozenset({"Company"}), types=frozenset({"fundTrans"}),
                                               keys=frozenset({"transAmt", "transDate"})))
            # CompanyUpdate.csv: the company's products become the update's
            company = update["id"] + "#0"
            db.write("MATCH (c:Company {id: $id})-[r:product]->() DELETE r", id=company)
            db.write(_EDGES, rows=[{"s": company, "t": "product", "o": p + "#0", "props": {}} for p in _split(update["products"])])
            product = timed_refresh(db, rules, Footprint(labels=frozenset({"Company", "Product"}), types=frozenset({"product"}),
                                                  keys=frozenset({"name"})))
            if not (fund[2] and product[2]):
                print("a refresh differs from a full re-apply", file=sys.stderr)
                return 1
            table.append((copies, nodes, edges, len(rules.rules), facts, full_s, again_s, fund, product))
            print(f"  {copies} copies: {facts} facts, full {full_s:.2f} s, refresh {fund[0]:.3f} / {product[0]:.3f} s",
                  file=sys.stderr)
        if args.via_load:
            reset_database(db)
            migrations.migrate(db, embedding_dimension=384)
            loaded = via_load(db, settings, args.data, args.schema, rules)
            if not all(edit[-1] for edit in loaded[-1]):
                print("a refresh after a load differs from a full re-apply", file=sys.stderr)
                return 1
        reset_database(db)
    print("| copies | nodes | edges | rules | facts derived | first apply, cold (s) | full re-apply (s) | rules/s "
          "| fundTrans row: refresh (s), rules re-applied | CompanyUpdate row: refresh (s), rules re-applied "
          "| refresh = full re-apply |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---:|")
    for copies, n, e, count, facts, full_s, again_s, fund, product in table:
        print(f"| {copies} | {n} | {e} | {count} | {facts} | {full_s:.2f} | {again_s:.2f} | {count / again_s:.1f} "
              f"| {fund[0]:.2f} ({fund[0] / again_s:.0%}), {fund[1]} | {product[0]:.2f} ({product[0] / again_s:.0%}), "
              f"{product[1]} | yes |")
    if loaded is not None:
        load_s, facts, first_s, again_s, edits = loaded
        print()
        print(f"Through `kag-neo4j load` (the demo, 1 copy): load {load_s:.1f} s, {facts} facts derived, first apply "
              f"{first_s:.2f} s, full re-apply {again_s:.2f} s ({len(rules.rules) / again_s:.1f} rules/s)")
        print()
        print("| one row edited, folder loaded again | load incl. refresh (s) | refresh (s) | refresh / full re-apply "
              "| rules re-applied | refresh = full re-apply |")
        print("|---|---:|---:|---:|---:|:---:|")
        for name, seconds, refresh_s, applied, total, full, equal in edits:
            scope = f"{applied} of {total}" + (" (all: version caught up)" if full else "")
            print(f"| {name} | {seconds:.2f} | {refresh_s:.2f} | {refresh_s / again_s:.0%} | {scope} "
                  f"| {'yes' if equal else 'NO'} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

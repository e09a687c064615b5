"""Load KAG's three structured demos and check the graph against counts computed from the CSVs.

    python benchmarks/demos_load.py --yes [--demos DIR] [--schemas DIR] [--only riskmining,supplychain,medicine]

For riskmining, supplychain and medicine: empties the configured database (it must carry the
test marker or be claimed with --yes), loads the demo folder with its schema through
``kag_neo4j.builder.pipeline.load`` (no LLM: the tables are structured; a hashing embedder),
loads it a second time (must change nothing), and prints a Markdown table per demo: for every
node type, concept type and relation, the count the CSVs imply (computed here with the csv
module, from what each column refers to - not from the loader) next to the count in the graph,
and the dangling references the loader reported next to the ones computed here.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kag_neo4j.builder.pipeline import LoadOptions, load, with_schema_types  # noqa: E402
from kag_neo4j.builder.readers.common import ReadOptions  # noqa: E402
from kag_neo4j.config import Settings, load_settings  # noqa: E402
from kag_neo4j.eval.datasets import default_data_dir  # noqa: E402
from kag_neo4j.models.hashing import HashingEmbedder  # noqa: E402
from kag_neo4j.rules.load import RuleSet, load_rules  # noqa: E402
from kag_neo4j.schema.models import ResolvedSchema  # noqa: E402
from kag_neo4j.schema.validate import load_schema  # noqa: E402
from kag_neo4j.store.database import Database  # noqa: E402
from kag_neo4j.store.reset import claim_database, reset_database  # noqa: E402
from tests.integration.kag_demo_tables import spo_expected  # noqa: E402

SPLIT = (",", "，")  # the demos' multi-value separator (``、`` occurs inside ids)


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return [{k.strip(): (v or "").strip() for k, v in row.items()} for row in csv.DictReader(handle)]


def values(cell: str) -> list[str]:
    for sep in SPLIT[1:]:
        cell = cell.replace(sep, ",")
    return [part.strip() for part in cell.split(",") if part.strip()]


def prefixes(concept: str) -> list[str]:
    parts = concept.split("-")
    return ["-".join(parts[:i]) for i in range(1, len(parts) + 1)]


@dataclass
class Expected:
    """What a demo's CSVs imply: nodes per type, concepts per concept type, relations per type."""

    nodes: dict[str, int] = field(default_factory=dict)
    concepts: dict[str, int] = field(default_factory=dict)
    relations: dict[tuple[str, str, str], int] = field(default_factory=dict)
    dangling: int = 0
    #: S,P,O rows the schema cannot fully type (the load reports them)
    open_fact_rows: int = 0


@dataclass
class Demo:
    folder: str
    schema: str
    nodes: dict[str, str]  # type -> id column
    concepts: list[str]
    #: (type, column) -> (target type, target key column or "concept")
    columns: dict[tuple[str, str], tuple[str, str]]
    #: edge file stem -> (source key column, target key column), or "events" when rows are distinct events
    edges: dict[str, tuple[str, str, bool]]
    events: set[str] = field(default_factory=set)
    updates: dict[str, tuple[str, dict[str, str]]] = field(default_factory=dict)  # file -> (type, column map)
    open_facts: str | None = None  # an S,P,O file, typed where the schema says (the rest open facts)


DEMOS = {
    "riskmining": Demo(
        "riskmining", "RiskMining.schema",
        nodes={"Person": "id", "Company": "id", "Cert": "id", "App": "id", "Device": "id"},
        concepts=["TaxOfRiskApp", "TaxOfRiskUser"],
        columns={("App", "useCert"): ("Cert", "certNum"), ("Device", "install"): ("App", "id")},
        edges={"Company_hasCert_Cert": ("id", "certNum", False), "Person_hasCert_Cert": ("id", "certNum", False),
               "Person_hasDevice_Device": ("id", "id", False), "Person_holdShare_Company": ("id", "id", False),
               "Person_fundTrans_Person": ("id", "id", True)},
    ),
    "supplychain": Demo(
        "supplychain", "SupplyChain.schema",
        nodes={"Company": "id", "Person": "id", "Product": "id", "ProductChainEvent": "id"},
        concepts=["Industry", "Index", "Trend", "TaxOfCompanyEvent", "TaxOfProdEvent"],
        columns={("Company", "product"): ("Product", "id"), ("Product", "hasSupplyChain"): ("Product", "id"),
                 ("Product", "belongToIndustry"): ("Industry", "concept"),
                 ("Person", "legalRepresentative"): ("Company", "name"),
                 ("ProductChainEvent", "subject"): ("Product", "id"),
                 ("ProductChainEvent", "index"): ("Index", "concept"),
                 ("ProductChainEvent", "trend"): ("Trend", "concept")},
        edges={"Company_fundTrans_Company": ("id", "id", True)},
        events={"ProductChainEvent"},
        updates={"CompanyUpdate": ("Company", {"products": "product"})},
    ),
    "medicine": Demo(
        "medicine", "Medicine.schema",
        nodes={"Disease": "idx"},
        concepts=["HospitalDepartment", "HumanBodyPart"],
        columns={},
        edges={},
        open_facts="SPO",
    ),
}


def expected(demo: Demo, folder: Path, schema: ResolvedSchema) -> Expected:
    """The counts the CSVs imply, computed here (see the module docs)."""
    out = Expected()
    tables = {name: rows(folder / f"{name}.csv") for name in demo.nodes}
    ids = {name: {r[column] for r in tables[name] if r[column]} for name, column in demo.nodes.items()}
    for name in demo.nodes:
        out.nodes[name] = len(ids[name])
    concepts = {}
    for name in demo.concepts:
        concepts[name] = {p for r in rows(folder / f"{name}.csv") if r.get("id") for p in prefixes(r["id"])}
        out.concepts[name] = len(concepts[name])

    def key_index(target: str, key: str) -> dict[str, str]:
        column = demo.nodes[target]
        return {r[key]: r[column] for r in tables[target] if r.get(key)}

    pairs: dict[tuple[str, str, str], set[tuple[str, str]]] = {}
    for (source, column), (target, key) in demo.columns.items():
        found = pairs.setdefault((source, column, target), set())
        index = None if key == "concept" else key_index(target, key)
        for r in tables[source]:
            for reference in values(r.get(column, "")):
                hit = (reference if reference in concepts[target] else None) if index is None else index.get(reference)
                if hit is None:
                    out.dangling += 1
                else:
                    found.add((r[demo.nodes[source]], hit))
    for stem, (source_key, target_key, events) in demo.edges.items():
        source, predicate, target = stem.split("_")
        src_index, dst_index = key_index(source, source_key), key_index(target, target_key)
        found_rows: list[tuple[str, ...]] = []
        for r in rows(folder / f"{stem}.csv"):
            columns = list(r)
            s, o = src_index.get(r[columns[0]]), dst_index.get(r[columns[1]])
            if s is None or o is None:
                out.dangling += (s is None) + (o is None)
                continue
            found_rows.append((s, o, *(r[c] for c in columns[2:])) if events else (s, o))
        out.relations[(source, predicate, target)] = len(found_rows) if events else len(set(found_rows))
    for update, (type_name, renames) in demo.updates.items():
        for r in rows(folder / f"{update}.csv"):
            record = r[demo.nodes[type_name]]
            for column, relation in renames.items():
                target = demo.columns[(type_name, relation)][0]
                kept = {(s, o) for s, o in pairs[(type_name, relation, target)] if s != record}
                kept |= {(record, v) for v in values(r[column]) if v in ids[target]}
                pairs[(type_name, relation, target)] = kept
    for key, found in pairs.items():
        out.relations[key] = len(found)
    if demo.open_facts:
        spo = spo_expected(folder, schema, demo.open_facts)
        for key, count in sorted(spo.typed.items()):
            out.relations[key] = out.relations.get(key, 0) + count
        out.relations[("*", "open facts (S,P,O)", "*")] = spo.open_facts
        out.nodes["(untyped, from S,P,O)"] = len(spo.untyped)
        out.open_fact_rows = spo.reported
    return out


def loaded(db: Database, demo: Demo, exp: Expected) -> Expected:
    """The same counts, read from the graph."""
    out = Expected()
    for name in exp.nodes:
        if name.startswith("("):
            out.nodes[name] = int(db.read("MATCH (e:Entity) WHERE size(labels(e)) = 1 RETURN count(e) AS n")[0]["n"])
            continue
        kind = "Event" if name in demo.events else "Entity"
        out.nodes[name] = int(db.read("MATCH (n:$($kind)&$($label)) RETURN count(n) AS n", kind=kind, label=name)[0]["n"])
    for name in exp.concepts:
        out.concepts[name] = int(db.read("MATCH (c:Concept&$($label)) RETURN count(c) AS n", label=name)[0]["n"])
    for (source, predicate, target) in exp.relations:
        if source == "*":
            out.relations[(source, predicate, target)] = int(db.read(
                "MATCH (:Entity)-[r:RELATED]->(:Entity) RETURN count(r) AS n")[0]["n"])
            continue
        out.relations[(source, predicate, target)] = int(db.read(
            "MATCH (:$($source))-[r:$($predicate)]->(:$($target)) RETURN count(r) AS n",
            source=source, predicate=predicate, target=target)[0]["n"])
    return out


def table(name: str, exp: Expected, got: Expected, dangling: dict[str, int], open_facts: dict[str, int],
          seconds: float, again: bool) -> list[str]:
    lines = [f"### {name}", "", f"load {seconds:.1f} s; second load changed nothing: {'yes' if again else 'NO'}", "",
             "| what | expected (from the CSVs) | loaded | |", "|---|---:|---:|---|"]
    for kind, mine, theirs in (("nodes", exp.nodes, got.nodes), ("concepts", exp.concepts, got.concepts)):
        for key in mine:
            ok = "ok" if mine[key] == theirs[key] else "DIFFERS"
            lines.append(f"| {kind}: {key} | {mine[key]} | {theirs[key]} | {ok} |")
    for key in exp.relations:
        ok = "ok" if exp.relations[key] == got.relations[key] else "DIFFERS"
        lines.append(f"| relation: {key[0]} -[{key[1]}]-> {key[2]} | {exp.relations[key]} | {got.relations[key]} | {ok} |")
    reported = sum(dangling.values())
    ok = "ok" if reported == exp.dangling else "DIFFERS"
    lines.append(f"| dangling references | {exp.dangling} | {reported} | {ok} |")
    lines.extend(f"| &nbsp;&nbsp;{where} | | {count} | |" for where, count in sorted(dangling.items()))
    if exp.open_fact_rows or open_facts:
        reported = sum(open_facts.values())
        ok = "ok" if reported == exp.open_fact_rows else "DIFFERS"
        lines.append(f"| S,P,O rows reported as not typed by the schema | {exp.open_fact_rows} | {reported} | {ok} |")
    return lines


def demo_arguments(description: str | None) -> argparse.ArgumentParser:
    """The options of a script that loads KAG's demos into the (emptied) configured database."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--yes", action="store_true", help="confirm that the configured database may be emptied")
    data = default_data_dir() or Path("../shared/benchmarks")
    parser.add_argument("--demos", type=Path, default=data / "demos", help="KAG's demo folders (default: "
                        "KAG_BENCHMARKS_DIR or ../shared/benchmarks, then demos/)")
    parser.add_argument("--schemas", type=Path, default=data / "schemas", help="their .schema files")
    return parser


def parse_demo_arguments(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """``parser``'s arguments (made by :func:`demo_arguments`), refused without ``--yes``: every
    demo script empties the configured database."""
    args = parser.parse_args(argv)
    if not args.yes:
        parser.error("this benchmark empties the configured database; pass --yes to confirm")
    return args


def load_demo_tables(db: Database, settings: Settings, folder: Path, schema_file: Path, *,
                     dangling: Literal["skip", "create"] = "skip") -> float:
    """Load a demo's folder light with its schema (hashing vectors: the tables need none), as
    `kag-neo4j load FOLDER --schema FILE` does; the seconds it took."""
    schema = load_schema(str(schema_file))
    started = time.perf_counter()
    load([folder], db, settings, LoadOptions(mode="light", spg_schema=schema, similarity=None, dangling=dangling),
         embedder=HashingEmbedder(384), read_options=with_schema_types(ReadOptions(), schema))
    return time.perf_counter() - started


def demo_rules(folder: Path, schema_file: Path) -> RuleSet:
    """The schema's rules and the demo's ``concept.rule``, as `kag-neo4j rules apply` reads them."""
    return load_rules([schema_file, folder / "concept.rule"])


def main(argv: list[str] | None = None) -> int:
    parser = demo_arguments(__doc__)
    parser.add_argument("--only", default=",".join(DEMOS), help="demos to load, comma separated")
    args = parse_demo_arguments(parser, argv)
    settings = load_settings(no_cache=True)
    embedder = HashingEmbedder(384)
    lines: list[str] = []
    failed = False
    with Database.connect(settings) as db:
        claim_database(db, reason="benchmarks/demos_load.py --yes", allow_data=True)
        for name in [n for n in args.only.split(",") if n]:
            demo = DEMOS[name]
            folder = args.demos / demo.folder
            reset_database(db)
            schema = load_schema(str(args.schemas / demo.schema))
            options = LoadOptions(mode="light", spg_schema=schema, similarity=None)
            read = with_schema_types(ReadOptions(), schema)
            started = time.perf_counter()
            summary = load([folder], db, settings, options, embedder=embedder, read_options=read)
            seconds = time.perf_counter() - started
            exp = expected(demo, folder, schema)
            got = loaded(db, demo, exp)
            second = load([folder], db, settings, options, embedder=embedder, read_options=read)
            again = loaded(db, demo, exp)
            unchanged = again == got and second.documents_loaded == 0 and second.taxonomy_concepts == 0
            lines += table(name, exp, got, summary.dangling_references, summary.open_facts, seconds, unchanged) + [""]
            same = (got.nodes, got.concepts, got.relations) == (exp.nodes, exp.concepts, exp.relations)
            failed = failed or not same or not unchanged or sum(summary.dangling_references.values()) != exp.dangling \
                or sum(summary.open_facts.values()) != exp.open_fact_rows
            print(f"  {name}: {summary.documents_loaded} documents, {summary.chunks} chunks in {seconds:.1f} s",
                  file=sys.stderr)
        reset_database(db)
    print("\n".join(lines))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

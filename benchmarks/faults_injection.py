"""Injection benchmark: hostile names and questions through ``load`` and ``ask`` into a real Neo4j.

    python benchmarks/faults_injection.py --yes

**It empties the configured database** (``--yes`` says you mean it; it is claimed with the test
marker first). Then, on an empty, migrated database with a small SPG schema applied and a
``(:Canary)`` node planted:

1. *full-mode load*: one document per hostile name; a scripted LLM answers each chunk with that
   name as entity type, event type, predicate, event role and property key;
2. *structured load*: CSV and JSON record files whose column names, ``label`` values,
   ``fromType``/``toType`` and file stems are the hostile names;
3. *hostile questions*: questions of punctuation, Lucene syntax and Cypher payloads;
4. *hostile plans*: a scripted planner whose Retrieval carries a hostile mention, or a hostile
   type and predicate, for every name.

After each phase it counts executed payloads (the canary deleted or modified, a ``:Pwned`` node,
a ``pwned`` index, the ``entity_id`` constraint dropped) and what the data model does not allow:
new labels or relationship types that are neither kag-neo4j's own nor the schema's, property
keys that are not identifiers, any change of indexes, constraints, procedures or functions; and
the calls that failed (a ``load`` or ``ask`` that raised, a Retrieval step with an error). Every
count must be 0. The names, questions and checks are ``tests/integration/hostile_names.py``
(the integration test runs a subset of them). Bounded: about a hundred loads' and questions'
worth of work, a few minutes on 2 cores; models are the scripted LLM and the hashing embedder.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.integration.hostile_names

from kag_neo4j.api import KAG  # noqa: E402
from kag_neo4j.builder.pipeline import LoadOptions, load  # noqa: E402
from kag_neo4j.config import load_settings  # noqa: E402
from kag_neo4j.models.hashing import HashingEmbedder  # noqa: E402
from kag_neo4j.schema import parse_schema, validate_schema  # noqa: E402
from kag_neo4j.schema.apply import apply_schema  # noqa: E402
from kag_neo4j.store import migrations  # noqa: E402
from kag_neo4j.store.database import Database  # noqa: E402
from kag_neo4j.store.reset import claim_database, reset_database  # noqa: E402
from tests.integration.hostile_names import (  # noqa: E402
    HOSTILE_MENTIONS,
    HOSTILE_NAMES,
    HOSTILE_QUESTIONS,
    HOSTILE_SCHEMA,
    Audit,
    executed_payloads,
    extraction_llm,
    hostile_documents,
    hostile_plan,
    hostile_tables,
    planner_llm,
    plant_canary,
)

DIMENSION = 384
COLUMNS = ("executed payloads", "labels", "relationship types", "property keys", "indexes", "constraints",
           "procedures")


def _phase(db: Database, schema: Any, name: str, inputs: int, work: Callable[[], tuple[int, int | None]]
           ) -> dict[str, Any]:
    """Run one phase; ``work`` returns (failed calls, issues the load reported or ``None``)."""
    audit = Audit(db, [schema]).start()
    began = time.perf_counter()
    failures, issues = work()
    findings = audit.findings()
    row: dict[str, Any] = {"phase": name, "inputs": inputs, "reported issues": issues, "failed calls": failures,
                           "executed payloads": len(executed_payloads(db)),
                           "seconds": round(time.perf_counter() - began, 1)}
    row.update({key: len(values) for key, values in findings.items()})
    row["details"] = {key: values for key, values in findings.items() if values} | (
        {"payloads": executed_payloads(db)} if executed_payloads(db) else {})
    return row


def _asks(db: Database, embedder: HashingEmbedder, cases: list[tuple[str, dict[str, str]]]) -> tuple[int, None]:
    """(failed asks and Retrieval steps with an error, None)."""
    failures = 0
    for question, plan in cases:
        try:
            answer = KAG(db, planner_llm(plan), embedder).ask(question)
        except Exception as exc:  # noqa: BLE001 - a raising ask is what this counts
            print(f"ask({question!r}) failed: {exc}", file=sys.stderr)
            failures += 1
            continue
        failures += sum(1 for step in answer.steps if step.op == "Retrieval" and step.error)
    return failures, None


def run(db: Database) -> list[dict[str, Any]]:
    embedder = HashingEmbedder(dimension=DIMENSION)
    settings = load_settings().model_copy(update={"no_cache": True})
    migrations.migrate(db, embedding_dimension=DIMENSION)
    schema = validate_schema(parse_schema(HOSTILE_SCHEMA, source="hostile.schema"))
    apply_schema(db, schema)
    plant_canary(db)
    names = list(HOSTILE_NAMES)
    rows = []

    def full_load() -> int:
        summary = load([], db, settings, LoadOptions(mode="full", spg_schema=schema),
                       documents=hostile_documents(names), llm=extraction_llm(names), embedder=embedder)
        failed = summary.extraction_failures + len(summary.read_failures) + (summary.documents_loaded != len(names))
        return failed, summary.issues

    rows.append(_phase(db, schema, "load: full-mode extraction (types, predicates, roles, keys)", len(names), full_load))

    with tempfile.TemporaryDirectory(prefix="kag-injection-") as folder:
        paths = hostile_tables(Path(folder), names)

        def structured_load() -> int:
            summary = load([str(path) for path in paths], db, settings, LoadOptions(mode="full", spg_schema=schema),
                           llm=extraction_llm([]), embedder=embedder)
            return summary.extraction_failures + len(summary.read_failures), summary.issues

        rows.append(_phase(db, schema, "load: CSV/JSON records (columns, labels, stems)", len(names), structured_load))

    questions = [(question, hostile_plan(question)) for question in HOSTILE_QUESTIONS]
    rows.append(_phase(db, schema, "ask: hostile questions", len(questions), lambda: _asks(db, embedder, questions)))
    mentions = [("Who is it?", hostile_plan(mention)) for mention in HOSTILE_MENTIONS]
    rows.append(_phase(db, schema, "ask: plans with hostile mentions", len(mentions),
                       lambda: _asks(db, embedder, mentions)))
    typed = [("Who founded Harrow Rail?", hostile_plan("Ada Pembroke", name, name)) for name in names]
    rows.append(_phase(db, schema, "ask: plans with hostile types and predicates", len(typed),
                       lambda: _asks(db, embedder, typed)))
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    head = ["phase", "inputs", "reported issues", "failed calls", *COLUMNS, "seconds"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        lines.append("| " + " | ".join("–" if row[key] is None else str(row[key]) for key in head) + " |")
    summed = ["inputs", "reported issues", "failed calls", *COLUMNS]
    total = {key: sum(row[key] or 0 for row in rows) for key in summed}
    lines.append("| **total** | " + " | ".join(str(total[key]) for key in summed)
                 + f" | {round(sum(row['seconds'] for row in rows), 1)} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--yes", action="store_true", help="confirm: the configured database is emptied")
    args = parser.parse_args(argv)
    if not args.yes:
        parser.error("this benchmark empties the configured database; pass --yes to run it")
    settings = load_settings()
    with Database.connect(settings) as db:
        claim_database(db, reason="benchmarks/faults_injection.py", allow_data=True)
        reset_database(db)
        rows = run(db)
        reset_database(db)
    print(f"Injection benchmark, {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, "
          f"{len(HOSTILE_NAMES)} names, {len(HOSTILE_MENTIONS)} mentions, {len(HOSTILE_QUESTIONS)} questions\n")
    print(table(rows))
    for row in rows:
        if row["details"]:
            print(f"\n{row['phase']}: {row['details']}")
    bad = sum(row[key] for row in rows for key in ("failed calls", *COLUMNS))
    print(f"\nnonzero counts: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())

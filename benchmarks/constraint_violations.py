"""Count the schema-constraint violations a load of KAG's demos would report (no database, no model).

    python benchmarks/constraint_violations.py /work/shared/benchmarks/demos /work/shared/benchmarks/schemas

For each demo (riskmining, supplychain, medicine) it reads the demo's CSV files as `kag-neo4j load`
does, runs the structured records through the same extraction, normalisation and alignment a load
runs before writing (the step where `kag_neo4j.schema.constraints` is applied), with the demo's
schema, and prints a Markdown table: records, violations by constraint kind, and the properties
they concern. Documents that are text (rows read as passages) need a model and are counted, not
extracted. Bounded: the demos are a few thousand rows.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path

from kag_neo4j.builder.alignment import Aligner
from kag_neo4j.builder.extract import Extraction
from kag_neo4j.builder.pipeline import read_documents
from kag_neo4j.builder.split import split_document
from kag_neo4j.schema.constraints import ConstraintViolation
from kag_neo4j.schema.validate import load_schema

DEMOS = {"riskmining": "RiskMining.schema", "supplychain": "SupplyChain.schema", "medicine": "Medicine.schema"}


def violations_of(demo: Path, schema_path: Path) -> tuple[int, int, list[ConstraintViolation]]:
    schema = load_schema(schema_path)
    documents = read_documents(sorted(demo.glob("*.csv")))
    extraction = Extraction(mode="light", schema=schema)
    extraction.register(documents)
    aligner = Aligner(schema, concept_links_from_types=False)
    records = 0
    text = 0
    found: list[ConstraintViolation] = []
    for document in documents:
        if not document.records or document.text.strip():
            text += 1
            continue
        chunks = split_document(document)
        records += len(document.records)
        result = extraction.extract_document(document, chunks)
        found.extend(aligner.align_document(document, chunks, result.extractions).violations)
    return records, text, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("demos", type=Path)
    parser.add_argument("schemas", type=Path)
    args = parser.parse_args()
    print("| demo | structured records | text documents | violations | by constraint | by property | seconds |")
    print("|---|---|---|---|---|---|---|")
    for name, schema in DEMOS.items():
        began = time.perf_counter()
        records, text, found = violations_of(args.demos / name, args.schemas / schema)
        kinds = Counter(v.constraint for v in found)
        props = Counter(f"{v.type_name}.{v.property}" for v in found)
        print(f"| {name} | {records} | {text} | {len(found)} | "
              f"{', '.join(f'{k} {n}' for k, n in kinds.most_common()) or '-'} | "
              f"{', '.join(f'{k} {n}' for k, n in props.most_common(6)) or '-'} | {time.perf_counter() - began:.1f} |")
        for violation in found[:3]:
            print(f"|  | e.g. | | | {violation.message} | | |")


if __name__ == "__main__":
    main()

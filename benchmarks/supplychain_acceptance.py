"""KAG's supplychain demo, end to end at the Cypher level: load, apply the rules, read the features.

    python benchmarks/supplychain_acceptance.py --yes [--demos DIR] [--schemas DIR] [--as-of YYYY-MM-DD]

Empties the configured database (it must carry the test marker or be claimed with --yes), loads
the full demo (``demos/supplychain``) with ``SupplyChain.schema`` through
``kag_neo4j.builder.pipeline.load`` (no LLM; a hashing embedder), applies the schema's rules and
the demo's ``concept.rule`` with ``kag_neo4j.rules`` (what ``kag-neo4j rules apply`` runs) as of
``--as-of`` (default 2023-09-01: the date KAG's demo builder maps to "today" when it shifts the
transfer dates), and reads in Cypher what the demo's reasoner README asks for: the ten derived
Company properties, ``mainSupply``, ``belongToIndustry``, ``sameLegalRepresentative`` and the
event chain. Each is compared with the rules' meaning computed independently over the CSV files
(``expected_facts`` of tests/integration/test_supplychain_acceptance.py, csv module only).
Prints a Markdown table (what, expected, derived, ok); exits 1 when anything differs.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kag_neo4j.config import load_settings  # noqa: E402
from kag_neo4j.rules.apply import apply_rules  # noqa: E402
from kag_neo4j.store.database import Database  # noqa: E402
from kag_neo4j.store.reset import claim_database, reset_database  # noqa: E402
from tests.integration.test_supplychain_acceptance import WHAT, derived_facts, expected_facts  # noqa: E402

from demos_load import demo_arguments, demo_rules, load_demo_tables, parse_demo_arguments  # noqa: E402 - the sibling script (benchmarks/ is on sys.path when run)


def _size(value: object) -> int:
    return sum(value.values()) if isinstance(value, Counter) else len(value)  # type: ignore[arg-type]


def _differences(want: object, got: object, limit: int = 4) -> str:
    if isinstance(want, dict) and not isinstance(want, Counter):
        assert isinstance(got, dict)
        keys = sorted(k for k in set(want) | set(got) if want.get(k) != got.get(k))
        shown = [f"{k}: {want.get(k)} / {got.get(k)}" for k in keys[:limit]]
    else:
        missing, extra = Counter(want) - Counter(got), Counter(got) - Counter(want)  # type: ignore[call-overload]
        shown = [f"missing {k}" for k in sorted(missing, key=str)[:limit]]
        shown += [f"extra {k}" for k in sorted(extra, key=str)[:limit]]
        keys = [*missing, *extra]
    return "; ".join(shown) + (f"; … (+{len(keys) - limit})" if len(keys) > limit else "")


def main(argv: list[str] | None = None) -> int:
    parser = demo_arguments(__doc__)
    parser.add_argument("--as-of", type=date.fromisoformat, default=date(2023, 9, 1),
                        help="the date now() means (default 2023-09-01)")
    parser.add_argument("--dangling", default="skip,create",
                        help="loads to check, comma separated: --dangling skip (references to products "
                             "Product.csv lacks are dropped, the default of kag-neo4j load) and/or create")
    args = parse_demo_arguments(parser, argv)
    folder = args.demos / "supplychain"
    schema_file = args.schemas / "SupplyChain.schema"
    rules = demo_rules(folder, schema_file)
    settings = load_settings(no_cache=True)
    lines: list[str] = []
    failed = False
    with Database.connect(settings) as db:
        claim_database(db, reason="benchmarks/supplychain_acceptance.py --yes", allow_data=True)
        for dangling in [d for d in args.dangling.split(",") if d]:
            reset_database(db)
            loaded = load_demo_tables(db, settings, folder, schema_file,
                                      dangling="create" if dangling == "create" else "skip")
            started = time.perf_counter()
            result = apply_rules(db, rules, as_of=args.as_of.isoformat())
            applied = time.perf_counter() - started
            got = derived_facts(db)
            want = expected_facts(folder, args.as_of, dangling)
            lines += [f"### supplychain (full demo), `--dangling {dangling}`, as of {args.as_of}", "",
                      f"load {loaded:.1f} s, {len(result.rules)} rules applied in {applied:.1f} s, "
                      f"{len(result.violations)} constraint violations", "",
                      "| what | expected (CSV) | derived (Cypher) | ok |", "|---|---:|---:|---|"]
            failed = failed or bool(result.violations)
            for key, what in WHAT.items():
                equal = got[key] == want[key]
                failed = failed or not equal
                lines.append(f"| {what} | {_size(want[key])} | {_size(got[key])} | {'yes' if equal else 'NO'} |")
                if not equal:
                    lines.append(f"| &nbsp;&nbsp;expected / derived | | | {_differences(want[key], got[key])} |")
            lines.append("")
        reset_database(db)
    print("\n".join(lines))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

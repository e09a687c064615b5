"""KAG's riskmining demo, end to end at the Cypher level: load, apply the rules, ask the README's queries.

    python benchmarks/riskmining_acceptance.py --yes [--demos DIR] [--schemas DIR] [--as-of YYYY-MM-DD]

Empties the configured database (it must carry the test marker or be claimed with --yes), loads
the full demo (``demos/riskmining``) with ``RiskMining.schema`` through
``kag_neo4j.builder.pipeline.load`` (no LLM; a hashing embedder), applies the schema's rules and
the demo's ``concept.rule`` with ``kag_neo4j.rules`` (what ``kag-neo4j rules apply`` runs), and
asks the README's questions in Cypher: every gambling app, the gambling-app developers and their
owners (plus the derived ``developed`` / ``release`` pairs). Each set is compared with the rules'
meaning computed independently over the CSV files (``expected_sets`` of
tests/integration/test_riskmining_acceptance.py, csv module only). Prints a Markdown table; exits
1 when a set differs.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kag_neo4j.config import load_settings  # noqa: E402
from kag_neo4j.rules.apply import apply_rules  # noqa: E402
from kag_neo4j.store.database import Database  # noqa: E402
from kag_neo4j.store.reset import claim_database, reset_database  # noqa: E402
from tests.integration.test_riskmining_acceptance import QUERIES, derived_sets, expected_sets  # noqa: E402

from demos_load import demo_arguments, demo_rules, load_demo_tables, parse_demo_arguments  # noqa: E402 - the sibling script (benchmarks/ is on sys.path when run)


def _show(items: set[object], limit: int = 6) -> str:
    shown = sorted(("/".join(i) if isinstance(i, tuple) else str(i)) for i in items)
    text = ", ".join(shown[:limit])
    return text + (f", … (+{len(shown) - limit})" if len(shown) > limit else "")


def main(argv: list[str] | None = None) -> int:
    parser = demo_arguments(__doc__)
    parser.add_argument("--as-of", default="2024-02-01", help="the date now() means (the rules use none)")
    args = parse_demo_arguments(parser, argv)
    folder = args.demos / "riskmining"
    schema_file = args.schemas / "RiskMining.schema"
    rules = demo_rules(folder, schema_file)
    settings = load_settings(no_cache=True)
    with Database.connect(settings) as db:
        claim_database(db, reason="benchmarks/riskmining_acceptance.py --yes", allow_data=True)
        reset_database(db)
        loaded = load_demo_tables(db, settings, folder, schema_file)
        started = time.perf_counter()
        result = apply_rules(db, rules, as_of=args.as_of)
        applied = time.perf_counter() - started
        got = derived_sets(db)
        reset_database(db)
    want = expected_sets(folder)
    lines = [f"riskmining (full demo): load {loaded:.1f} s, {len(result.rules)} rules applied in {applied:.1f} s", "",
             "| set | expected (CSV) | derived (Cypher) | equal | members |", "|---|---:|---:|---|---|"]
    failed = False
    for name in QUERIES:
        equal = got[name] == want[name]
        failed = failed or not equal
        mark = "yes" if equal else "NO"
        lines.append(f"| {name} | {len(want[name])} | {len(got[name])} | {mark} | {_show(got[name])} |")
        if not equal:
            lines.append(f"| &nbsp;&nbsp;missing / extra | | | | {_show(want[name] - got[name])} / "
                         f"{_show(got[name] - want[name])} |")
    print("\n".join(lines))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

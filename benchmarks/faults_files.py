"""Bad files: a folder of corrupt, encrypted, binary, empty, mis-encoded and malformed files next to
a few good ones, loaded with the real CLI (`kag-neo4j load FOLDER --mode light --json`).

    python benchmarks/faults_files.py --yes                   # 50 MB one-line file, hashing embedder
    python benchmarks/faults_files.py --yes --embedder e5 --huge-mb 5

**It empties the configured database** (NEO4J_URI, else the local server of KAG_SERVER_NAME) after
claiming it with the test marker (hence `--yes`). The bad files come from `tests/badfiles.py`
(the same generators the tests use). Prints a Markdown table: each file, what was expected, what the
load did and the reason it gave; then the good files and whether they are in the graph, and the
exit code. Bounded: the load runs in a subprocess with `--timeout` (600 s).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kag_neo4j.config import load_settings  # noqa: E402
from kag_neo4j.store.database import Database  # noqa: E402
from kag_neo4j.store.reset import claim_database, reset_database  # noqa: E402
from tests.badfiles import write_bad_files, write_good_files  # noqa: E402


def _size(path: Path) -> str:
    size = path.stat().st_size
    return f"{size / 1024 / 1024:.0f} MB" if size >= 1024 * 1024 else f"{size:,} B"


def _cell(text: str, limit: int = 150) -> str:
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--yes", action="store_true", help="agree that the configured database is emptied")
    parser.add_argument("--embedder", default="hashing", choices=["hashing", "e5"])
    parser.add_argument("--huge-mb", type=int, default=50, help="size of the one-line file")
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args()
    if not args.yes:
        parser.error("this empties the configured database; pass --yes")

    settings = load_settings()
    with Database.connect(settings) as db:
        claim_database(db, reason="benchmarks/faults_files.py", allow_data=True)
        reset_database(db)
        uri = db.connection.uri

    with tempfile.TemporaryDirectory(prefix="kag-bad-files-") as tmp:
        folder = Path(tmp) / "input"
        expected = write_bad_files(folder, huge_line_mb=args.huge_mb)
        good = write_good_files(folder)
        env = {**os.environ, "KAG_EMBEDDER": args.embedder, "NEO4J_URI": uri, "PYTHONPATH": str(ROOT)}
        command = [shutil.which("kag-neo4j") or "kag-neo4j", "load", str(folder), "--mode", "light", "--json", "--no-cache"]
        began = time.perf_counter()
        proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=args.timeout, check=False)
        seconds = time.perf_counter() - began
        try:
            summary = json.loads(proc.stdout)
        except json.JSONDecodeError:
            print(proc.stdout[-2000:], proc.stderr[-4000:], sep="\n", file=sys.stderr)
            return 1

        def by_name(lines: list[str]) -> dict[str, str]:
            return {Path(line.split(": ", 1)[0]).name: line.split(": ", 1)[1] for line in lines}

        refused, left_out = by_name(summary["read_failures"]), by_name(summary["read_skipped"])
        warned = by_name(summary["read_warnings"])
        with Database.connect(settings) as db:
            stored = {Path(row["source"].split("#")[0]).name for row in db.read("MATCH (d:Document) RETURN d.source AS source")}

        print(f"Bad files: `kag-neo4j load FOLDER --mode light --json --no-cache` ({args.embedder} embedder), "
              f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC\n")
        print("| # | file | size | expected | outcome | reason given (stderr / `--json`) |")
        print("|---|---|---|---|---|---|")
        matched = 0
        for number, name in enumerate(sorted(expected), start=1):
            bad = expected[name]
            if name in refused:
                outcome, reason = "refused", refused[name]
            elif name in left_out:
                outcome, reason = "left out", left_out[name]
            elif name in warned:
                outcome, reason = "loaded with a warning", warned[name]
            else:
                outcome, reason = ("loaded" if name in stored else "missing"), ""
            want = {"refused": "refused", "skipped": "left out", "warned": "loaded with a warning"}[bad.outcome]
            ok = outcome == want and bad.reason in reason and (outcome != "loaded with a warning" or name in stored)
            matched += ok
            print(f"| {number} | `{name}` | {_size(folder / name)} | {want} | {outcome}{'' if ok else ' **(unexpected)**'} "
                  f"| {_cell(reason)} |")
        good_ok = sum(name in stored for name in good)
        for name in sorted(good):
            print(f"| - | `{name}` | {_size(folder / name)} | loaded | {'loaded' if name in stored else '**missing**'} | |")
        print()
        print("| what | value |")
        print("|---|---|")
        print(f"| bad files | {len(expected)} ({sum(b.outcome == 'refused' for b in expected.values())} refused, "
              f"{sum(b.outcome == 'warned' for b in expected.values())} loaded with a warning, "
              f"{sum(b.outcome == 'skipped' for b in expected.values())} left out) |")
        print(f"| bad files handled as expected | {matched} / {len(expected)} |")
        print(f"| good files in the graph | {good_ok} / {len(good)} |")
        print(f"| documents loaded | {summary['documents_loaded']} ({summary['chunks']} chunks) |")
        print(f"| exit code | {proc.returncode} (4: partly done, the refused files are named on stderr) |")
        print(f"| traceback on stderr | {'yes' if 'Traceback' in proc.stderr else 'no'} |")
        print(f"| seconds (whole CLI run, model loading included) | {seconds:.1f} |")
        print(f"| peak RSS of the CLI | {summary['peak_rss_mb']:.0f} MB |")
    with Database.connect(settings) as db:
        reset_database(db)
    return 0 if matched == len(expected) and good_ok == len(good) and proc.returncode == 4 else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""Concurrency benchmark of the read side: loaders and askers on one database at once.

    python benchmarks/faults_concurrency.py --yes
    python benchmarks/faults_concurrency.py --yes --seconds 300 --loaders 2 --askers 4 \
        --corpus ../shared/benchmarks/musique/corpus.json --questions ../shared/benchmarks/musique/questions.dev.json

**It empties the configured database** (``NEO4J_URI``, else the local server of
``KAG_SERVER_NAME``) before every run, hence ``--yes``; the database is claimed with the test
marker first (:mod:`kag_neo4j.store.reset`).

1. **Concurrent.** The corpus (every passage with a stable id) is split into ``--loaders`` parts,
   loaded by real ``kag-neo4j load --mode light`` processes (spaCy NER, no LLM; the ``hashing``
   embedder, so the run measures the database, not e5). The database is emptied and migrated;
   ``--askers`` processes then ask the
   dev questions in a loop for ``--seconds`` while ``--loaders`` ``kag-neo4j load`` processes load
   their parts at the same time and then, while time remains, load them again with ``--force``
   (every document replaced: deleted and rewritten), so that the graph changes during the whole
   run. An ask is the solver's chunk retrieval without an LLM:
   ``kag_neo4j.solver.retrieval.hybrid_retrieve`` (dense + fulltext + Personalized PageRank on
   the projection of the current graph version, fused by RRF; the ``hybrid`` recipe) followed by
   the citation lookup of the chunks it returned (``cypher/solver/chunks_by_id.cypher``). The
   builder lease lets one load write at a time: the other loader waits for it
   (``KAG_LOAD_LOCK_WAIT``).
2. **Serial reference.** The database is emptied and the same loads (the same parts, with and
   without ``--force``) are run again one after the other in the order they completed, with
   nobody asking. (Loads are order-sensitive: a part re-loaded after another merges aliases and
   lists in another order than a plain load, so the reference repeats the order.)
3. **Checks.** Every ask and load must succeed; the final graph must have no duplicated
   relationship (same endpoints, type and predicate) and equal the serial reference (counts and
   the whole dump, :mod:`graph_compare`). (That retrieval never returns chunks of documents still loading is checked
   exactly by ``tests/integration/test_solver_trust.py``; here documents change status between
   an ask and any later check.)

Prints a Markdown table: asks, asks/s, latency p50/p95, errors, loads, duplicated
relationships, final counts and whether the graph equals the serial load.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from graph_compare import BOOKKEEPING, VOLATILE, diff, digest, dump  # noqa: E402

from kag_neo4j.config import load_settings  # noqa: E402
from kag_neo4j.store import migrations  # noqa: E402
from kag_neo4j.store.database import Connection, Database  # noqa: E402
from kag_neo4j.store.reset import claim_database, reset_database  # noqa: E402

IGNORE = VOLATILE | {"load_seq"}
SKIP = (*BOOKKEEPING, "KagMeta")
LOADER = [sys.executable, "-c", "from kag_neo4j.cli import main; main()"]
DIMENSION = 256

_COUNTS = """
CALL () { MATCH (d:Document) RETURN count(d) AS documents }
CALL () { MATCH (c:Chunk) RETURN count(c) AS chunks }
CALL () { MATCH (e:Entity) RETURN count(e) AS entities }
CALL () { MATCH (a)-[r]->(b) WHERE NOT a:KagRun AND NOT a:KagStep RETURN count(r) AS relationships }
RETURN documents, chunks, entities, relationships
"""
_DUPLICATES = """
MATCH (a)-[r]->(b) WHERE NOT a:KagRun AND NOT a:KagStep
WITH a, b, type(r) AS type, r.predicate AS predicate, count(*) AS n WHERE n > 1
RETURN coalesce(sum(n - 1), 0) AS duplicates
"""


def _env(uri: str, home: Path, wait: int) -> dict[str, str]:
    env = dict(os.environ)
    env.update(NEO4J_URI=uri, KAG_HOME=str(home), KAG_EMBEDDER="hashing", KAG_EMBEDDING_DIMENSIONS=str(DIMENSION),
               KAG_LOAD_LOCK_WAIT=str(wait), COLUMNS="200")
    return env


def _load_cmd(corpus: Path, batch: int, force: bool) -> list[str]:
    cmd = [*LOADER, "load", str(corpus), "--mode", "light", "--batch-size", str(batch), "--json", "--no-progress"]
    return [*cmd, "--force"] if force else cmd


def write_parts(source: Path, passages: int, parts: int, folder: Path) -> list[Path]:
    items = json.loads(source.read_text(encoding="utf-8"))
    items = items[:passages] if passages else items
    docs = [{"id": f"p{i:04d}", "title": item["title"], "text": item["text"]} for i, item in enumerate(items)]
    size = -(-len(docs) // parts)
    paths = []
    for number in range(parts):
        path = folder / f"part{number + 1}" / "corpus.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(docs[number * size:(number + 1) * size], ensure_ascii=False), encoding="utf-8")
        paths.append(path)
    return paths


def graph_state(db: Database) -> dict[str, Any]:
    counts = db.read(_COUNTS)[0]
    return {**{k: int(v) for k, v in counts.items()}, "duplicates": int(db.read(_DUPLICATES)[0]["duplicates"])}


def fresh(db: Database) -> None:
    reset_database(db)
    migrations.migrate(db, embedding_dimension=DIMENSION)


# ---- askers (separate processes) ----------------------------------------------------------------


def asker(connection: Connection, questions: list[str], offset: int, deadline: float, out: Any) -> None:
    from kag_neo4j.models.hashing import HashingEmbedder
    from kag_neo4j.solver.retrieval import RECIPES, hybrid_retrieve
    from kag_neo4j.store import cypher

    embedder = HashingEmbedder(dimension=DIMENSION)
    config = RECIPES["hybrid"]
    latencies: list[float] = []
    errors: list[str] = []
    with_ppr = 0
    with Database(connection) as db:
        number = offset
        while time.time() < deadline:
            question = questions[number % len(questions)]
            number += 1
            began = time.perf_counter()
            try:
                hits = hybrid_retrieve(db, embedder, question, config=config)
                db.read(cypher.query("solver/chunks_by_id"), chunk_ids=[hit.chunk_id for hit in hits])
                with_ppr += any("ppr" in hit.ranks for hit in hits)
            except Exception as exc:  # noqa: BLE001 - every failure is the benchmark's finding
                errors.append(f"{type(exc).__name__}: {str(exc)[:300]}")
                continue
            latencies.append((time.perf_counter() - began) * 1000)
        projections = int(db.read("CALL gds.graph.list() YIELD graphName RETURN count(*) AS n")[0]["n"])
    out.put({"latencies": latencies, "errors": errors, "with_ppr": with_ppr, "projections": projections})


# ---- the run --------------------------------------------------------------------------------


def serial_reference(db: Database, loads: list[tuple[Path, bool]], env: dict[str, str],
                     batch: int) -> tuple[dict[str, list[str]], float]:
    """The same loads (part, --force) in the same order, one after the other, nobody asking."""
    fresh(db)
    began = time.monotonic()
    for part, force in loads:
        done = subprocess.run(_load_cmd(part, batch, force), env=env, capture_output=True, text=True,
                              timeout=3600, check=False)
        if done.returncode != 0:
            raise SystemExit(f"the serial load of {part} failed:\n{done.stderr[-2000:]}")
    return dump(db, ignore=IGNORE, skip_labels=SKIP), time.monotonic() - began


def loader(part: Path, env: dict[str, str], batch: int, deadline: float, log: list[dict[str, Any]]) -> None:
    force = False
    while True:
        began = time.monotonic()
        done = subprocess.run(_load_cmd(part, batch, force), env=env, capture_output=True, text=True,
                              timeout=3600, check=False)
        entry: dict[str, Any] = {"part": part.parent.name, "path": part, "force": force, "rc": done.returncode,
                                 "seconds": round(time.monotonic() - began, 1)}
        if done.returncode != 0:
            entry["stderr"] = done.stderr[-1500:]
        log.append(entry)
        force = True
        # another round only while it would mostly overlap the ask phase (keeps the run bounded)
        if done.returncode != 0 or deadline - time.time() < entry["seconds"] / 2:
            return


def concurrent_run(db: Database, args: argparse.Namespace, parts: list[Path], env: dict[str, str],
                   questions: list[str]) -> dict[str, Any]:
    import threading

    fresh(db)
    context = multiprocessing.get_context("spawn")
    out = context.Queue()
    began = time.time()
    deadline = began + args.seconds
    askers = [context.Process(target=asker, args=(db.connection, questions, i * 7, deadline, out))
              for i in range(args.askers)]
    for process in askers:
        process.start()
    log: list[dict[str, Any]] = []
    loaders = [threading.Thread(target=loader, args=(part, env, args.batch_size, deadline, log)) for part in parts]
    for thread in loaders:
        thread.start()
        time.sleep(1.0)
    results = [out.get(timeout=args.seconds + 600) for _ in askers]
    for process in askers:
        process.join(timeout=60)
    for thread in loaders:
        thread.join(timeout=3600)
    elapsed = time.time() - began
    latencies = sorted(x for r in results for x in r["latencies"])
    errors = [e for r in results for e in r["errors"]]
    return {
        "seconds": round(elapsed, 1), "asks": len(latencies), "errors": errors,
        "p50": statistics.median(latencies) if latencies else 0.0,
        "p95": latencies[int(0.95 * (len(latencies) - 1))] if latencies else 0.0,
        "loads": log, "ask_seconds": args.seconds, "with_ppr": sum(r["with_ppr"] for r in results),
        "projections": max(r["projections"] for r in results),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--yes", action="store_true", help="empty the configured database (required)")
    parser.add_argument("--corpus", type=Path, default=Path("../shared/benchmarks/musique/corpus.json"))
    parser.add_argument("--questions", type=Path, default=Path("../shared/benchmarks/musique/questions.dev.json"))
    parser.add_argument("--passages", type=int, default=0, help="first N passages (0: all)")
    parser.add_argument("--loaders", type=int, default=2)
    parser.add_argument("--askers", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=300.0, help="how long the askers ask")
    parser.add_argument("--batch-size", type=int, default=100)
    args = parser.parse_args(argv)
    if not args.yes:
        parser.error("this benchmark empties the configured database; pass --yes")
    questions = [q["question"] for q in json.loads(args.questions.read_text(encoding="utf-8"))]
    with Database.connect(load_settings()) as db, tempfile.TemporaryDirectory(prefix="kag-concurrency-") as tmp:
        claim_database(db, reason="benchmarks/faults_concurrency.py --yes", allow_data=True)
        work = Path(tmp)
        if db.connection.auth:  # loaders and askers connect with this script's credentials
            os.environ["NEO4J_USERNAME"], os.environ["NEO4J_PASSWORD"] = db.connection.auth
        parts = write_parts(args.corpus, args.passages, args.loaders, work / "corpus")
        env = _env(db.connection.uri, work / "home", wait=int(args.seconds) + 3600)
        run = concurrent_run(db, args, parts, env, questions)
        final = dump(db, ignore=IGNORE, skip_labels=SKIP)
        state = graph_state(db)
        projections = db.read("CALL gds.graph.list() YIELD graphName RETURN count(*) AS n")[0]["n"]
        # the same loads in the order they completed (the lease let one write at a time), serially
        sequence = [(entry["path"], entry["force"]) for entry in run["loads"] if entry["rc"] == 0]
        reference, serial_seconds = serial_reference(db, sequence, env, args.batch_size)
        reference_state = graph_state(db)
        differences = diff(reference, final)
        reset_database(db)
    failed_loads = [entry for entry in run["loads"] if entry["rc"] != 0]
    for entry in failed_loads:
        print(f"load failed: {entry}", file=sys.stderr)
    for error in run["errors"][:10]:
        print(f"ask failed: {error}", file=sys.stderr)
    for line in differences[:20]:
        print(f"graph differs: {line}", file=sys.stderr)
    rounds = ", ".join(f"{e['part']}{' --force' if e['force'] else ''} {e['seconds']} s" for e in run["loads"])
    equal = "yes" if not differences else f"no ({len(differences)} differences)"
    counts = f"{state['documents']} docs, {state['chunks']} chunks, {state['entities']} entities, {state['relationships']} rels"
    ref_counts = (f"{reference_state['documents']} docs, {reference_state['chunks']} chunks, "
                  f"{reference_state['entities']} entities, {reference_state['relationships']} rels")
    print(f"### {args.loaders} loaders + {args.askers} askers, {len(questions)} MuSiQue dev questions, "
          f"{len(parts)} parts of {args.corpus.name} (light mode, hashing embedder)\n")
    print("| measure | value |")
    print("|---|---|")
    print(f"| ask phase | {run['ask_seconds']:.0f} s (whole run {run['seconds']:.0f} s) |")
    print(f"| asks (hybrid retrieval + citation lookup, no LLM) | {run['asks']} |")
    print(f"| asks/s | {run['asks'] / run['ask_seconds']:.1f} |")
    print(f"| ask latency p50 / p95 | {run['p50']:.0f} / {run['p95']:.0f} ms |")
    print(f"| asks whose top chunks include PPR hits | {run['with_ppr']} |")
    print(f"| failed asks | {len(run['errors'])} |")
    print(f"| loads (in order of completion) | {rounds} |")
    print(f"| failed loads | {len(failed_loads)} |")
    print(f"| duplicated relationships (serial load: {reference_state['duplicates']}) | {state['duplicates']} |")
    print(f"| final counts | {counts} |")
    print(f"| the same loads serially, no askers ({serial_seconds:.0f} s) | {ref_counts} |")
    print(f"| whole graph equals the serial load (graph_compare) | {equal}; digests {digest(reference)} / {digest(final)} |")
    print(f"| GDS projections alive when the askers stopped / at the end | {run['projections']} / {projections} |")
    ok = not run["errors"] and not failed_loads and not differences and not state["duplicates"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""Fault benchmark of the builder's write path: killed loads and faulty model endpoints.

    python benchmarks/faults_builder.py --yes
    python benchmarks/faults_builder.py --yes --kills 12 --passages 300 --corpus ../shared/benchmarks/musique/corpus.json

**It empties the configured database** (``NEO4J_URI``, else the local server of
``KAG_SERVER_NAME``) before every run, hence ``--yes``; the database is claimed with the test
marker first (:mod:`kag_neo4j.store.reset`). Every load is a real ``kag-neo4j load`` process.

1. **Crash.** A slice of the corpus (``--passages``, each with a stable id) is loaded in light
   mode (spaCy NER, no LLM) with the ``hashing`` embedder and small write batches. Each run
   SIGKILLs the loader once: at a random moment, or the moment a chosen write transaction is
   open (seen in ``SHOW TRANSACTIONS``). Every other run first loads the corpus completely and
   then kills the load of a changed version (``--changed`` passages rewritten), so the kill hits
   a replacement. The same command is then run again, and the graph (every node, relationship,
   property and text; :mod:`graph_compare`) must equal the graph of the same loads without a
   kill. A killed loader's lease (``KAG_LOAD_LEASE_SECONDS=3`` here) makes the resumed load wait.
2. **Model endpoint faults.** A small corpus is loaded in full mode (one LLM call per chunk)
   against a local fake OpenAI-compatible server (``kag_neo4j.models.fake_endpoint``), then a
   changed version of it against the same server answering one fault. The table shows the exit
   code, what the load did (fatal / per-chunk failures / retried), whether the graph is unchanged
   (the old version intact), whether any document was left ``loading``, and whether a re-run
   against a healthy endpoint gives the graph of a clean load.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from graph_compare import BOOKKEEPING, VOLATILE, digest, diff, dump  # noqa: E402

from kag_neo4j.config import load_settings  # noqa: E402
from kag_neo4j.models.fake_endpoint import FakeEndpoint  # noqa: E402
from kag_neo4j.store.database import Database  # noqa: E402
from kag_neo4j.store.reset import claim_database, reset_database  # noqa: E402

#: when-properties, plus the load order stamp (a clock value) and the graph version's bookkeeping
IGNORE = VOLATILE | {"load_seq"}
SKIP = (*BOOKKEEPING, "KagMeta")
LOADER = [sys.executable, "-c", "from kag_neo4j.cli import main; main()"]
WRITE_WORDS = ("MERGE", "DELETE", "SET ")


def _env(uri: str, home: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(NEO4J_URI=uri, KAG_HOME=str(home), KAG_EMBEDDER="hashing", KAG_EMBEDDING_DIMENSIONS="256",
               KAG_LOAD_LEASE_SECONDS="3", KAG_LOAD_LOCK_WAIT="60", COLUMNS="200")
    env.update(extra)
    return env


def _load_cmd(corpus: Path, mode: str, batch: int) -> list[str]:
    return [*LOADER, "load", str(corpus), "--mode", mode, "--batch-size", str(batch), "--json", "--no-progress"]


def _run(cmd: list[str], env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, check=False)


def _graph(db: Database) -> dict[str, list[str]]:
    return dump(db, ignore=IGNORE, skip_labels=SKIP)


def _version(db: Database) -> int:
    rows = db.read("OPTIONAL MATCH (m:KagMeta {key: 'graph'}) RETURN m.version AS v")
    return int(rows[0]["v"] or 0)


def _statuses(db: Database) -> dict[str, int]:
    rows = db.read("MATCH (d:Document) RETURN d.status AS status, count(*) AS n")
    return {row["status"]: int(row["n"]) for row in rows}


def _fresh(db: Database) -> None:
    reset_database(db)


def write_corpus(source: Path, passages: int, changed: int, folder: Path, seed: int) -> tuple[Path, Path, list[str]]:
    """v1 (a slice of ``source`` with stable ids) and v2 (``changed`` passages rewritten)."""
    items = json.loads(source.read_text(encoding="utf-8"))[:passages]
    v1 = [{"id": f"p{i:04d}", "title": item["title"], "text": item["text"]} for i, item in enumerate(items)]
    rng = random.Random(seed)
    picked = sorted(rng.sample(range(len(v1)), min(changed, len(v1))))
    v2 = [dict(item) for item in v1]
    for i in picked:  # a changed passage: its second half replaced by another passage's first sentences
        other = v1[(i + len(v1) // 2) % len(v1)]["text"]
        half = v2[i]["text"][: len(v2[i]["text"]) // 2]
        v2[i]["text"] = f"{half} {other[: len(other) // 2]}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "v1").mkdir(exist_ok=True)
    (folder / "v2").mkdir(exist_ok=True)
    p1, p2 = folder / "v1" / "corpus.json", folder / "v2" / "corpus.json"
    p1.write_text(json.dumps(v1, ensure_ascii=False), encoding="utf-8")
    p2.write_text(json.dumps(v2, ensure_ascii=False), encoding="utf-8")
    return p1, p2, [v1[i]["id"] for i in picked]


class TxWatcher(threading.Thread):
    """Polls ``SHOW TRANSACTIONS`` and records the ids of open write transactions of other clients."""

    def __init__(self, db: Database) -> None:
        super().__init__(daemon=True)
        self.db = db
        self.seen: list[str] = []
        self.open_now = False
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                rows = self.db.auto_commit("SHOW TRANSACTIONS YIELD transactionId, currentQuery, status")
            except Exception:  # noqa: BLE001 - the server is busy; poll again
                rows = []
            writing = [r for r in rows if not str(r["currentQuery"]).lstrip().upper().startswith("SHOW")
                       and any(word in str(r["currentQuery"]) for word in WRITE_WORDS)]
            self.open_now = bool(writing)
            for row in writing:
                if row["transactionId"] not in self.seen:
                    self.seen.append(row["transactionId"])
            time.sleep(0.005)


def killed_load(db: Database, cmd: list[str], env: dict[str, str], how: str, rng: random.Random,
                span: float, transactions: int) -> dict[str, Any]:
    """Start ``cmd`` and SIGKILL it: ``random`` (uniform in ``span`` seconds) or ``in-tx`` (while
    write transaction number k, random in 1..``transactions``, is open)."""
    watcher = TxWatcher(db)
    watcher.start()
    began = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    target_k = rng.randint(1, max(1, transactions))
    when = rng.uniform(0.2, span)
    in_tx = False
    try:
        while proc.poll() is None:
            elapsed = time.monotonic() - began
            if how == "random" and elapsed >= when:
                break
            if how == "in-tx" and len(watcher.seen) >= target_k and watcher.open_now:
                break
            time.sleep(0.002)
        in_tx = watcher.open_now
        finished = proc.poll() is not None
        if not finished:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        watcher.stop.set()
        watcher.join(timeout=5)
    return {"at": time.monotonic() - began, "in_tx": in_tx, "finished_first": finished,
            "write_txs_seen": len(watcher.seen)}


def crash_benchmark(db: Database, uri: str, args: argparse.Namespace, work: Path) -> list[dict[str, Any]]:
    v1, v2, changed_ids = write_corpus(args.corpus, args.passages, args.changed, work / "corpus", args.seed)
    home = work / "home"
    env = _env(uri, home)
    batch = args.batch_size
    # references: the same loads, never killed
    _fresh(db)
    started = time.monotonic()
    first = _run(_load_cmd(v1, "light", batch), env)
    clean_seconds = time.monotonic() - started
    if first.returncode != 0:
        raise SystemExit(f"the clean load failed:\n{first.stderr[-2000:]}")
    summary = json.loads(first.stdout)
    reference_v1 = _graph(db)
    started = time.monotonic()
    second = _run(_load_cmd(v2, "light", batch), env)
    replace_seconds = time.monotonic() - started
    if second.returncode != 0:
        raise SystemExit(f"the clean replacement load failed:\n{second.stderr[-2000:]}")
    reference_v2 = _graph(db)
    replaced = json.loads(second.stdout)["documents_replaced"]
    print(f"clean load: {summary['documents_loaded']} documents, {summary['chunks']} chunks, "
          f"{summary['transactions']} write transactions, {clean_seconds:.1f} s; replacement of {replaced} "
          f"documents {replace_seconds:.1f} s; digests {digest(reference_v1)} / {digest(reference_v2)}", file=sys.stderr)
    rng = random.Random(args.seed)
    rows = []
    for run in range(1, args.kills + 1):
        replacing = run % 2 == 0
        how = "in-tx" if run % 4 in (1, 2) else "random"
        _fresh(db)
        if replacing:
            pre = _run(_load_cmd(v1, "light", batch), env)
            assert pre.returncode == 0, pre.stderr[-2000:]
        corpus, reference = (v2, reference_v2) if replacing else (v1, reference_v1)
        version_before, graph_before = _version(db), digest(_graph(db))
        span = (replace_seconds if replacing else clean_seconds) * 0.9
        # a replacement's write transactions: one delete per changed document, then a few batches;
        # short ones can slip between two polls, so aim at the first third
        transactions = max(1, replaced // 3) if replacing else int(summary["transactions"]) - 2
        kill = killed_load(db, _load_cmd(corpus, "light", batch), env, how, rng, span, transactions)
        statuses = _statuses(db)
        version_after_kill, graph_after_kill = _version(db), digest(_graph(db))
        version_ok = graph_after_kill == graph_before or version_after_kill > version_before
        if replacing:
            old_or_new = db.read(
                "UNWIND $ids AS id OPTIONAL MATCH (d:Document {id: id}) RETURN count(d) AS present, "
                "sum(CASE WHEN d.status = 'complete' THEN 1 ELSE 0 END) AS complete", ids=changed_ids)[0]
        started = time.monotonic()
        resumed = _run(_load_cmd(corpus, "light", batch), env)
        resume_seconds = time.monotonic() - started
        after = _graph(db)
        differences = diff(reference, after)
        differing = sum(len(set(reference[kind]) ^ set(after[kind])) for kind in ("nodes", "relationships"))
        row = {
            "run": run, "load": "replace v1->v2" if replacing else "v1 from empty", "kill": how,
            "killed_at_s": round(kill["at"], 2), "in_open_tx": kill["in_tx"],
            "finished_before_kill": kill["finished_first"],
            "complete_at_kill": statuses.get("complete", 0), "loading_at_kill": statuses.get("loading", 0),
            "version_moved_with_writes": version_ok, "resume_exit": resumed.returncode,
            "resume_s": round(resume_seconds, 1), "equal": not differences, "differences": differing,
        }
        if replacing:
            row["changed_docs_present_at_kill"] = int(old_or_new["present"])
        if differences:
            row["first_difference"] = differences[0][:300]
        rows.append(row)
        print(f"  run {run}: {row}", file=sys.stderr)
    return rows


FAULT_CASES: list[tuple[str, str, int | None, str]] = [
    # (label, fault, times (None: every request), documented behaviour)
    ("connection refused", "refused", None, "fatal: stop, name endpoint and KAG_LLM_BASE_URL"),
    ("HTTP 401", "401", None, "fatal: stop, name endpoint and KAG_LLM_API_KEY"),
    ("HTTP 404", "404", None, "fatal: stop, name endpoint, KAG_LLM_MODEL and KAG_LLM_BASE_URL"),
    ("HTTP 500, always", "500", None, "retried, then per-chunk failure; old version kept"),
    ("HTTP 500, once", "500", 1, "retried, then succeeds"),
    ("timeout, always", "timeout", None, "retried, then per-chunk failure; old version kept"),
    ("timeout, once", "timeout", 1, "retried, then succeeds"),
    ("invalid JSON, always", "invalid_json", None, "repair prompts, then per-chunk failure; old version kept"),
    ("invalid JSON, once", "invalid_json", 1, "repair prompt, then succeeds"),
]


def _small_corpus(source: Path, work: Path, passages: int) -> tuple[Path, Path]:
    v1, v2, _ = write_corpus(source, passages, max(2, passages // 4), work / "small", seed=3)
    return v1, v2


def fault_benchmark(db: Database, uri: str, args: argparse.Namespace, work: Path) -> list[dict[str, Any]]:
    v1, v2 = _small_corpus(args.corpus, work, args.fault_passages)
    home = work / "home-full"

    def full_env(endpoint: FakeEndpoint) -> dict[str, str]:
        return _env(uri, home, KAG_LLM_PROVIDER="openai", KAG_LLM_BASE_URL=endpoint.url, KAG_LLM_MODEL="fake",
                    KAG_LLM_MAX_RETRIES="2", KAG_LLM_TIMEOUT="1", KAG_NO_CACHE="true")

    def full_load(corpus: Path, fault: str = "none", times: int | None = None) -> tuple[subprocess.CompletedProcess[str], FakeEndpoint, float]:
        with FakeEndpoint(fault, times=times, delay=2.5) as endpoint:  # type: ignore[arg-type]
            began = time.monotonic()
            result = _run(_load_cmd(corpus, "full", 500), full_env(endpoint))
            return result, endpoint, time.monotonic() - began

    _fresh(db)
    full_load(v1)
    full_load(v2)
    clean_v2 = _graph(db)
    rows = []
    for label, fault, times, documented in FAULT_CASES:
        _fresh(db)
        first, _, _ = full_load(v1)
        assert first.returncode == 0, first.stderr[-2000:]
        before, version_before = _graph(db), _version(db)
        result, endpoint, seconds = full_load(v2, fault, times)
        after = _graph(db)
        summary = json.loads(result.stdout) if result.stdout.strip().startswith("{") else {}
        error = " ".join(result.stderr.split())
        error = error[error.find("error:"):][:160] if "error:" in error else ""
        if result.returncode != 0 and not summary:
            observed = "fatal"
        elif summary.get("extraction_failures"):
            observed = f"per-chunk failures ({summary['extraction_failures']} chunks, {summary['documents_kept']} kept)"
        else:
            observed = f"completed ({summary.get('documents_replaced', 0)} replaced)"
        statuses = _statuses(db)
        unchanged = not diff(before, after) and _version(db) == version_before
        rerun, _, _ = full_load(v2)
        rows.append({
            "fault": label, "documented": documented, "exit": result.returncode, "observed": observed,
            "requests": endpoint.requests, "seconds": round(seconds, 1),
            "old_version_intact": unchanged if not observed.startswith("completed") else "replaced",
            "loading_docs": statuses.get("loading", 0),
            "rerun_equals_clean": rerun.returncode == 0 and not diff(clean_v2, _graph(db)),
            "message": error.replace(endpoint.url, "http://127.0.0.1:PORT/v1"),
        })
        print(f"  {label}: {rows[-1]}", file=sys.stderr)
    return rows


def _table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    def cell(value: Any) -> str:
        if isinstance(value, bool):
            return "yes" if value else "no"
        return str(value).replace("|", "\\|")

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(row.get(c, "")) for c in columns) + " |" for row in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--yes", action="store_true", help="confirm that the configured database may be emptied")
    parser.add_argument("--corpus", type=Path, default=Path("../shared/benchmarks/musique/corpus.json"))
    parser.add_argument("--passages", type=int, default=300)
    parser.add_argument("--changed", type=int, default=30, help="passages rewritten in the changed version")
    parser.add_argument("--batch-size", type=int, default=20, help="chunks per write transaction")
    parser.add_argument("--kills", type=int, default=12)
    parser.add_argument("--fault-passages", type=int, default=8)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--skip", choices=("crash", "faults"), default=None)
    parser.add_argument("--out", type=Path, default=None, help="also write the rows as JSON here")
    args = parser.parse_args(argv)
    if not args.yes:
        parser.error("this benchmark empties the configured database; pass --yes to confirm")
    if not args.corpus.is_file():
        parser.error(f"{args.corpus} does not exist; give --corpus a [{{title, text}}] JSON file")
    results: dict[str, list[dict[str, Any]]] = {}
    with Database.connect(load_settings()) as db, tempfile.TemporaryDirectory(prefix="kag-faults-") as tmp:
        claim_database(db, reason="benchmarks/faults_builder.py --yes", allow_data=True)
        uri = db.connection.uri
        if db.connection.auth:  # the loader processes connect with this script's credentials
            os.environ["NEO4J_USERNAME"], os.environ["NEO4J_PASSWORD"] = db.connection.auth
        work = Path(tmp)
        if args.skip != "crash":
            results["crash"] = crash_benchmark(db, uri, args, work)
        if args.skip != "faults":
            results["faults"] = fault_benchmark(db, uri, args, work)
        reset_database(db)
    if "crash" in results:
        rows = results["crash"]
        print(f"### Crash: SIGKILL during `kag-neo4j load --mode light` ({args.passages} passages, batch "
              f"{args.batch_size}, hashing embedder), then the same command again\n")
        print(_table(rows, ["run", "load", "kill", "killed_at_s", "in_open_tx", "complete_at_kill", "loading_at_kill",
                            "version_moved_with_writes", "resume_exit", "resume_s", "equal", "differences"]))
        equal = sum(1 for row in rows if row["equal"])
        in_tx = sum(1 for row in rows if row["in_open_tx"])
        print(f"\n{equal} of {len(rows)} resumed loads equal the clean load ({in_tx} kills inside an open write "
              "transaction).\n")
    if "faults" in results:
        print(f"### Model endpoint faults during a full load ({args.fault_passages} passages, changed version "
              "loaded against the faulty endpoint)\n")
        print(_table(results["faults"], ["fault", "documented", "exit", "observed", "requests", "seconds",
                                         "old_version_intact", "loading_docs", "rerun_equals_clean", "message"]))
    if args.out is not None:
        args.out.write_text(json.dumps(results, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

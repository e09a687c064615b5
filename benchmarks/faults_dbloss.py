"""Database loss: the local Neo4j is killed (SIGKILL of its java process) in the middle of a load
and in the middle of a question, then started again.

    export KAG_SERVER_NAME=dev-me            # a server instance of your own (never default/pytest)
    kag-neo4j server start
    python benchmarks/faults_dbloss.py --yes [--limit 300] [--embedder hashing|e5] [--retry 10]

**It empties that instance's database and kills its server** (hence `--yes`). Steps, each with the
real CLI in a subprocess (`KAG_NEO4J_RETRY_SECONDS=--retry`):

1. clean load: `kag-neo4j load PASSAGES --mode light --batch-size 25 --no-cache` of the first
   `--limit` MuSiQue passages; the graph is dumped (`graph_compare.dump`);
2. the database is emptied, the same load starts, and once a third of the documents are complete
   the server's java process gets SIGKILL; the CLI must exit != 0 with one `error:` line, no
   traceback;
3. `kag-neo4j server start`, then the same load again: it must resume and give a graph equal to
   the clean one;
4. `kag-neo4j ask` with a scripted planner (an OpenAI-compatible endpoint this script serves on
   127.0.0.1, replying with a fixed logical form) answers once normally; then, while the planner
   call of a second ask is held, the server is killed and the planner released: the ask meets
   the dead database in its retrieval step and must exit != 0 with one `error:` line;
5. `kag-neo4j server start` again, and the database is emptied.

Bounded: every subprocess has a timeout; the script prints Markdown tables.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from graph_compare import VOLATILE, diff, digest, dump  # noqa: E402

from kag_neo4j.config import load_settings  # noqa: E402
from kag_neo4j.eval.datasets import default_data_dir  # noqa: E402
from kag_neo4j.store import server  # noqa: E402
from kag_neo4j.store.database import Connection, Database  # noqa: E402
from kag_neo4j.store.reset import claim_database, reset_database  # noqa: E402

CLI = shutil.which("kag-neo4j") or "kag-neo4j"
#: ``Document.load_seq`` is a clock value that orders loads ("first in load order wins"): two
#: loads differ in it by construction, so the dumps leave it out and the order is compared instead
IGNORE = VOLATILE | {"load_seq"}


def _load_order(db: Database) -> list[str]:
    return [row["id"] for row in db.read("MATCH (d:Document) RETURN d.id AS id ORDER BY d.load_seq, d.id")]


# --------------------------------------------------------------------------- scripted planner


def _minimal(schema: dict[str, Any], root: dict[str, Any]) -> Any:
    """The smallest value a JSON schema accepts (required fields only)."""
    if "$ref" in schema:
        target: Any = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            target = target[part]
        return _minimal(target, root)
    if "default" in schema:
        return schema["default"]
    if "enum" in schema:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            return _minimal(schema[key][0], root)
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        required = schema.get("required", [])
        return {k: _minimal(v, root) for k, v in schema.get("properties", {}).items() if k in required}
    return {"array": [], "string": "", "integer": 0, "number": 0, "boolean": False}.get(str(kind))


class Planner:
    """Answers chat completions: the planner with ``plan``, every other call with the smallest
    valid object. With ``hold`` set, a planner call waits until ``release`` is set."""

    def __init__(self, plan: str) -> None:
        self.plan = plan
        self.hold = threading.Event()
        self.plan_seen = threading.Event()
        self.release = threading.Event()
        self.calls: list[str] = []
        planner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                content = planner.reply(body)
                data = json.dumps({
                    "id": "scripted", "object": "chat.completion", "created": 0, "model": body.get("model"),
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": content}}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
                }).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.http.server_address[1]}/v1"

    def reply(self, body: dict[str, Any]) -> str:
        system = body["messages"][0]["content"]
        if "You are the planner" in system:
            self.calls.append("plan")
            if self.hold.is_set():
                self.plan_seen.set()
                self.release.wait(timeout=300)
            return json.dumps({"logical_form": self.plan})
        self.calls.append("other")
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema")
        return json.dumps(_minimal(schema, schema) if schema else {})

    def close(self) -> None:
        self.http.shutdown()


# --------------------------------------------------------------------------- helpers


def _run(args: list[str], env: dict[str, str], timeout: float) -> tuple[int, str, str, float]:
    began = time.perf_counter()
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    return proc.returncode, proc.stdout, proc.stderr, time.perf_counter() - began


def _error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.startswith("error:")]
    return lines[-1] if lines else (stderr.strip().splitlines() or ["(nothing)"])[-1]


def _cell(text: str, limit: int = 400) -> str:
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _kill(settings: Any) -> int:
    state = server.read_state(settings)
    if state is None:
        raise SystemExit("the local server is not running; start it with `kag-neo4j server start`")
    os.kill(state.pid, signal.SIGKILL)
    return state.pid


def _exit_after_kill(child: subprocess.Popen[str], retry: float) -> tuple[bool, str]:
    """Wait for a CLI run whose server was just killed: did it exit != 0 with an `error:` line and
    no traceback? Returns that and a table cell."""
    killed_at = time.perf_counter()
    _, err = child.communicate(timeout=retry * 6 + 120)
    seconds = time.perf_counter() - killed_at
    traceback = "Traceback" in err
    passed = child.returncode not in (0, None) and not traceback and _error_line(err).startswith("error:")
    return passed, (f"exit {child.returncode} after {seconds:.1f} s; traceback: {'yes' if traceback else 'no'}; "
                    f"stderr: `{_cell(_error_line(err))}`")


def _complete(uri: str) -> int:
    with Database(Connection(uri, "neo4j", server.instance_auth(load_settings()), retry_seconds=0)) as db:
        return int(db.read("MATCH (d:Document {status: 'complete'}) RETURN count(d) AS n")[0]["n"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--yes", action="store_true", help="agree that the instance's database is emptied and its server killed")
    parser.add_argument("--limit", type=int, default=300, help="MuSiQue passages to load")
    parser.add_argument("--embedder", default="hashing", choices=["hashing", "e5"])
    parser.add_argument("--retry", type=float, default=10.0, help="KAG_NEO4J_RETRY_SECONDS for the CLI runs")
    parser.add_argument("--data-dir", type=Path, default=None, help="benchmarks folder (KAG_BENCHMARKS_DIR)")
    args = parser.parse_args()
    if not args.yes:
        parser.error("this empties the database of the local server instance and kills its server; pass --yes")
    settings = load_settings()
    if settings.neo4j_uri:
        parser.error("needs the local server (it kills its java process): unset NEO4J_URI and set KAG_SERVER_NAME")
    if settings.server_name in ("default", "pytest"):
        parser.error(f"KAG_SERVER_NAME={settings.server_name!r}: use a server instance of your own for this benchmark")
    data_dir = args.data_dir or default_data_dir()
    corpus = (data_dir / "musique" / "corpus.json") if data_dir else None
    if corpus is None or not corpus.is_file():
        parser.error("no MuSiQue corpus: pass --data-dir or set KAG_BENCHMARKS_DIR")
    state = server.read_state(settings)
    if state is None:
        parser.error("the local server is not running; start it with `kag-neo4j server start`")
    uri = state.uri

    env = {k: v for k, v in os.environ.items() if k not in ("NEO4J_URI", "KAG_LLM_PROVIDER")}
    env.update(KAG_EMBEDDER=args.embedder, KAG_NEO4J_RETRY_SECONDS=f"{args.retry:g}", PYTHONPATH=str(ROOT))
    rows: list[tuple[str, str]] = []
    ok = True
    with tempfile.TemporaryDirectory(prefix="kag-dbloss-") as tmp:
        passages = json.loads(corpus.read_text(encoding="utf-8"))[: args.limit]
        data = Path(tmp) / f"musique-{len(passages)}.json"
        data.write_text(json.dumps(passages, ensure_ascii=False), encoding="utf-8")
        load = [CLI, "load", str(data), "--mode", "light", "--batch-size", "25", "--no-cache", "--json"]

        # 1. the clean load
        with Database(Connection(uri, "neo4j", server.instance_auth(load_settings()))) as db:
            claim_database(db, reason="benchmarks/faults_dbloss.py", allow_data=True)
            reset_database(db)
        code, out, err, seconds = _run(load, env, 900)
        if code != 0:
            print(err[-3000:], file=sys.stderr)
            return 1
        with Database(Connection(uri, "neo4j", server.instance_auth(load_settings()))) as db:
            clean = dump(db, ignore=IGNORE)
            clean_order = _load_order(db)
            reset_database(db)
        rows.append(("clean load", f"exit {code}, {len(passages)} passages, {len(clean['nodes'])} nodes, "
                                   f"{len(clean['relationships'])} relationships, digest `{digest(clean)}`, {seconds:.0f} s"))

        # 2. SIGKILL mid-load
        child = subprocess.Popen(load, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        target = max(1, len(passages) // 3)
        done, deadline = 0, time.monotonic() + 600
        while child.poll() is None and time.monotonic() < deadline:
            try:
                done = _complete(uri)
            except Exception:  # noqa: BLE001 - not migrated yet
                done = 0
            if done >= target:
                break
            time.sleep(0.2)
        if child.poll() is not None:
            print("the load finished before the kill; raise --limit", file=sys.stderr)
            return 1
        pid = _kill(settings)
        rows.append(("kill mid-load", f"SIGKILL java pid {pid} with {done}/{len(passages)} documents complete"))
        passed, outcome = _exit_after_kill(child, args.retry)
        ok &= passed
        rows.append(("load CLI after the kill", outcome))

        # 3. restart and resume
        code, _, err, seconds = _run([CLI, "server", "start"], env, 600)
        rows.append(("`kag-neo4j server start`", f"exit {code}, {seconds:.1f} s"))
        code, out, err, seconds = _run(load, env, 900)
        summary = json.loads(out) if code == 0 else {}
        with Database(Connection(server.read_state(settings).uri, "neo4j", server.instance_auth(settings))) as db:  # type: ignore[union-attr]
            resumed = dump(db, ignore=IGNORE)
            resumed_order = _load_order(db)
        differences = diff(clean, resumed)
        if resumed_order != clean_order:
            differences.append("documents are in another load order (Document.load_seq)")
        ok &= code == 0 and not differences
        rows.append(("resumed load", f"exit {code}, {summary.get('documents_loaded')} loaded, "
                                     f"{summary.get('documents_resumed')} resumed, {summary.get('documents_skipped')} "
                                     f"unchanged (skipped), {seconds:.0f} s"))
        rows.append(("resumed graph = clean graph (every node, relationship and property but `load_seq`, "
                     "whose order is compared)", ("yes" if not differences else "**no**: " + _cell("; ".join(differences), 1500))
                     + f" (digest `{digest(resumed)}`)"))

        # 4. the ask
        title = passages[0]["title"]
        question = f"What is {title}?"
        planner = Planner(f"Step1: {question}\nAction1: Retrieval(s=s1[`{title}`], p=p1, o=o1)\nAction2: Output(o1)")
        ask_env = {**env, "KAG_LLM_PROVIDER": "openai", "KAG_LLM_BASE_URL": planner.base_url,
                   "KAG_LLM_MODEL": "scripted-planner", "KAG_LLM_API_KEY": "none", "KAG_NO_CACHE": "true"}
        ask = [CLI, "ask", question, "--json"]
        try:
            code, out, err, seconds = _run(ask, ask_env, 300)
            ask_ok = code == 0
            ok &= ask_ok
            answer = json.loads(out).get("answer") if code == 0 else _error_line(err)
            rows.append(("ask, database up", f"exit {code}, {seconds:.1f} s, answer: `{_cell(str(answer), 120)}`"))
            planner.hold.set()
            child = subprocess.Popen(ask, env=ask_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if not planner.plan_seen.wait(timeout=300):
                child.kill()
                print("the ask never reached its planner call", file=sys.stderr)
                return 1
            pid = _kill(settings)
            planner.release.set()
            rows.append(("kill mid-ask", f"SIGKILL java pid {pid} while the planner call was held, then released"))
            passed, outcome = _exit_after_kill(child, args.retry)
            ok &= passed
            rows.append(("ask CLI after the kill", outcome))
        finally:
            planner.close()

        # 5. back to a running, empty server
        code, _, err, seconds = _run([CLI, "server", "start"], env, 600)
        rows.append(("`kag-neo4j server start`", f"exit {code}, {seconds:.1f} s"))
        with Database(Connection(server.read_state(settings).uri, "neo4j", server.instance_auth(settings))) as db:  # type: ignore[union-attr]
            reset_database(db)

    print(f"Database loss: {len(passages)} MuSiQue passages, light mode, {args.embedder} embedder, "
          f"KAG_NEO4J_RETRY_SECONDS={args.retry:g}, {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC\n")
    print("| step | outcome |")
    print("|---|---|")
    for step, outcome in rows:
        print(f"| {step} | {outcome} |")
    print(f"\nall checks passed: {'yes' if ok else 'NO'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""`kag-neo4j mcp` in a subprocess, driven by the official MCP SDK's own client over stdio and over
streamable HTTP, against the test Neo4j holding the solver's fixture graph.

The LLM of `ask` is the scripted test double (its plans never parse, so the solver falls back to
chunk retrieval and the reader cites its first passage): what is tested is the wiring — the tools
listed, the chunks found, the run stored and traced, errors as tool errors — never the script's text.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from kag_neo4j.config import Settings
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.store.database import Database, connection_for
from tests.integration.cli_env import subprocess_env
from tests.integration.conftest import TEST_DIMENSION
from tests.integration.solver_fixtures import DOCS, chunk_id, knowledge_counts, write_fixture_graph

ROOT = Path(__file__).resolve().parents[2]
READ_TOOLS = {"ask", "search", "trace", "schema"}


@pytest.fixture
def graph(db: Database) -> Database:
    write_fixture_graph(db, HashingEmbedder(dimension=TEST_DIMENSION))
    return db


@pytest.fixture
def server_env(test_settings: Settings, tmp_path: Path) -> dict[str, str]:
    script = tmp_path / "responses.json"
    script.write_text(json.dumps([{"logical_form": "no plan"}, {"answer": "scripted reading", "evidence": [1]}] * 3),
                      encoding="utf-8")
    return subprocess_env(connection_for(test_settings)) | {
        "KAG_LLM_PROVIDER": "scripted", "KAG_LLM_MODEL": str(script), "KAG_EMBEDDER": "hashing",
        "KAG_EMBEDDING_DIMENSIONS": str(TEST_DIMENSION), "KAG_HOME": str(test_settings.home),
        "PYTHONUNBUFFERED": "1",
    }


def stdio(env: dict[str, str], *flags: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "tests.integration.kag_cli", "mcp", *flags],
                                 env=env, cwd=str(ROOT))


def run_client(server: StdioServerParameters | str, work: Callable[[Client], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        async with Client(server, read_timeout_seconds=120) as client:
            return await work(client)

    return anyio.run(main)


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def error_of(client: Client, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    return " ".join(getattr(item, "text", "") for item in result.content)


async def tool_names(client: Client) -> set[str]:
    return {tool.name for tool in (await client.list_tools()).tools}


def test_stdio_lists_read_tools_only_and_load_only_with_allow_writes(server_env: dict[str, str]) -> None:
    assert run_client(stdio(server_env), tool_names) == READ_TOOLS
    assert run_client(stdio(server_env, "--allow-writes"), tool_names) == READ_TOOLS | {"load"}


def test_stdio_search_schema_ask_and_trace(graph: Database, server_env: dict[str, str]) -> None:
    before = knowledge_counts(graph)
    question = "In which town was the founder of the Harrow Valley Rail Company born?"

    async def work(client: Client) -> dict[str, Any]:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        found = await call(client, "search", question=question, k=3)
        schema = await call(client, "schema")
        answer = await call(client, "ask", question=question)
        traced = await call(client, "trace", run_id=answer["run_id"])
        return {"tools": tools, "found": found, "schema": schema, "answer": answer, "trace": traced}

    out = run_client(stdio(server_env), work)
    assert out["tools"]["search"].annotations.read_only_hint is True
    assert out["tools"]["search"].output_schema is not None

    chunks = out["found"]["chunks"]
    assert 1 <= len(chunks) <= 3
    assert {c["chunk_id"] for c in chunks} <= {chunk_id(doc) for doc in DOCS}
    assert chunks[0]["chunk_id"] == chunk_id("hvrc")  # the only chunk naming the company
    assert [c["score"] for c in chunks] == sorted((c["score"] for c in chunks), reverse=True)
    assert all(c["ranks"] and min(c["ranks"].values()) >= 1 for c in chunks)
    assert "org:hvrc" in out["found"]["seed_entity_ids"]

    assert {"Person", "Organization", "Town"} <= set(out["schema"]["graph_types"])
    assert {"founded", "bornIn"} <= {r["name"] for r in out["schema"]["graph_relations"]}

    answer = out["answer"]
    stored = {row["id"] for row in graph.read("MATCH (c:Chunk) RETURN c.id AS id")}
    assert answer["run_id"] and answer["citations"]
    assert {c["chunk_id"] for c in answer["citations"]} <= stored
    traced = out["trace"]
    assert traced["run_id"] == answer["run_id"] and traced["question"] == question
    assert traced["steps"] and traced["cited_chunk_ids"] == [c["chunk_id"] for c in answer["citations"]]
    assert traced["browser_param"] == f":param run_id => '{answer['run_id']}'"
    rows = graph.read_tx(lambda tx: list(tx.run(traced["browser_query"], run_id=answer["run_id"])))
    assert {"KagRun", "KagStep", "Chunk"} <= {label for row in rows for n in row["path"].nodes for label in n.labels}
    assert knowledge_counts(graph) == before  # question answering wrote only its trace


def test_stdio_bad_arguments_are_tool_errors_and_the_server_keeps_serving(graph: Database,
                                                                         server_env: dict[str, str]) -> None:
    async def work(client: Client) -> dict[str, Any]:
        errors = {
            "k": await error_of(client, "search", question="Who founded it?", k=0),
            "recipe": await error_of(client, "search", question="Who founded it?", recipe="bm25"),
            "empty": await error_of(client, "search", question="  "),
            "unknown run": await error_of(client, "trace", run_id="0123abcd"),
            "hostile run": await error_of(client, "trace", run_id="x' }) DETACH DELETE n //"),
            "mode": await error_of(client, "ask", question="Who?", mode="psychic"),
            "load hidden": await error_of(client, "load", paths=["/tmp"]),
        }
        return {"errors": errors, "after": await call(client, "search", question="Harrow Valley Rail Company", k=2)}

    out = run_client(stdio(server_env), work)
    errors = out["errors"]
    assert "k=0" in errors["k"] and "1 to 50" in errors["k"]
    assert "'bm25'" in errors["recipe"] and "hybrid" in errors["recipe"]
    assert "question is empty" in errors["empty"]
    assert "no run '0123abcd'" in errors["unknown run"]
    assert "is not valid" in errors["hostile run"]
    assert "mode" in errors["mode"]
    assert "load" in errors["load hidden"]
    assert out["after"]["chunks"][0]["chunk_id"] == chunk_id("hvrc")


def test_stdio_load_writes_only_with_allow_writes(db: Database, server_env: dict[str, str], tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "orchard.md").write_text("# Orchard\n\nThe Quillon Orchard grows pears near Dunmere.", encoding="utf-8")

    async def work(client: Client) -> dict[str, Any]:
        missing = await error_of(client, "load", paths=[str(tmp_path / "nowhere")])
        loaded = await call(client, "load", paths=[str(corpus)], mode="light")
        return {"missing": missing, "loaded": loaded}

    out = run_client(stdio(server_env, "--allow-writes"), work)
    assert "no such file or folder" in out["missing"] and "nowhere" in out["missing"]
    assert out["loaded"]["summary"]["documents_loaded"] == 1
    assert db.read("MATCH (d:Document) RETURN count(d) AS n")[0]["n"] == 1


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def http_server(server_env: dict[str, str]) -> Iterator[str]:
    port = _free_port()
    process = subprocess.Popen([sys.executable, "-m", "tests.integration.kag_cli", "mcp", "--http", "--host",
                                "127.0.0.1", "--port", str(port)], env=server_env, cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise AssertionError(f"kag-neo4j mcp --http exited: {process.stderr.read().decode()[-2000:]}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_streamable_http_search_ask_trace_and_an_error(graph: Database, http_server: str) -> None:
    async def work(client: Client) -> dict[str, Any]:
        names = await tool_names(client)
        bad = await error_of(client, "search", question="Who?", k=500)
        found = await call(client, "search", question="When did the Millbrook Viaduct open?", k=2, recipe="hybrid")
        answer = await call(client, "ask", question="When did the Millbrook Viaduct open?", mode="iterative")
        traced = await call(client, "trace", run_id=answer["run_id"])
        return {"names": names, "bad": bad, "found": found, "answer": answer, "trace": traced}

    out = run_client(http_server, work)
    assert out["names"] == READ_TOOLS
    assert "k=500" in out["bad"]
    assert out["found"]["chunks"][0]["chunk_id"] == chunk_id("viaduct")
    assert out["trace"]["run_id"] == out["answer"]["run_id"]
    assert graph.read("MATCH (r:KagRun {id: $id}) RETURN r.mode AS mode", id=out["answer"]["run_id"]) == [
        {"mode": "iterative"}]

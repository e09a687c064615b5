"""`kag-neo4j trace RUN_ID` prints the run and a Browser query that returns the reasoning path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from kag_neo4j.api import KAG
from kag_neo4j.cli.ask import register
from kag_neo4j.config import Settings
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.store.database import Database, connection_for
from tests.integration.cli_env import connection_env
from tests.integration.conftest import TEST_DIMENSION
from tests.integration.solver_fixtures import write_fixture_graph
from tests.integration.test_solver_ask import FOUNDER_TOWN, Router


@pytest.fixture
def app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def main(ctx: typer.Context) -> None:
        ctx.obj = {}

    register(app)
    return app


def _env(settings: Settings) -> dict[str, str | None]:
    return connection_env(connection_for(settings))


def test_trace_prints_a_browser_query_that_returns_the_path(db: Database, test_settings: Settings,
                                                            app: typer.Typer) -> None:
    embedder = HashingEmbedder(dimension=TEST_DIMENSION)
    write_fixture_graph(db, embedder)
    answer = KAG(db, Router(plan=[FOUNDER_TOWN]).llm, embedder).ask(
        "In which town was the founder of the Harrow Valley Rail Company born?")
    assert answer.run_id

    result = CliRunner().invoke(app, ["trace", answer.run_id], env=_env(test_settings))
    assert result.exit_code == 0, result.output
    out = result.output
    assert "Kestrel Bay" in out and "Retrieval" in out and "graph" in out
    param_line = next(line for line in out.splitlines() if line.startswith(":param run_id"))
    assert param_line == f":param run_id => '{answer.run_id}'"
    query = out[out.index(param_line) + len(param_line):].strip()
    assert query.startswith("// The reasoning path")
    rows = db.read_tx(lambda tx: list(tx.run(query, run_id=answer.run_id)))
    labels = {label for row in rows for node in row["path"].nodes for label in node.labels}
    assert {"KagRun", "KagStep", "Entity", "Chunk"} <= labels

    listing = CliRunner().invoke(app, ["trace"], env=_env(test_settings))
    assert listing.exit_code == 0 and answer.run_id in listing.output

    as_json = CliRunner().invoke(app, ["trace", answer.run_id, "--json"], env=_env(test_settings))
    assert as_json.exit_code == 0 and '"answer": "Kestrel Bay"' in as_json.output


def test_trace_rejects_bad_and_unknown_ids(db: Database, test_settings: Settings, app: typer.Typer) -> None:
    hostile = CliRunner().invoke(app, ["trace", "x' }) DETACH DELETE n //"], env=_env(test_settings))
    assert hostile.exit_code == 1 and "run id" in hostile.output
    unknown = CliRunner().invoke(app, ["trace", "0123abcd"], env=_env(test_settings))
    assert unknown.exit_code == 1 and "no run '0123abcd'" in unknown.output


def test_ask_rejects_an_unknown_mode(test_settings: Settings, app: typer.Typer) -> None:
    result = CliRunner().invoke(app, ["ask", "Who?", "--mode", "psychic"], env=_env(test_settings))
    assert result.exit_code == 2 and "static" in result.output


def test_ask_refuses_a_solver_knob_out_of_range_naming_it(test_settings: Settings, app: typer.Typer) -> None:
    result = CliRunner().invoke(app, ["ask", "Who?", "--solver", "hop_limit=0"], env=_env(test_settings))
    assert result.exit_code == 1 and "--solver" in result.output and "hop_limit" in result.output


def test_quickstart_loads_the_sample_corpus_and_answers_with_citations(
    db: Database, test_settings: Settings, app: typer.Typer, tmp_path: Path
) -> None:
    # A scripted model whose plans never parse: every question falls back to chunk retrieval and
    # the scripted reader cites its first passage. What is tested is the wiring (load, retrieval,
    # citations resolved to stored chunks, traces), not what the script says.
    from kag_neo4j.quickstart import corpus_dir, sample_questions

    questions = sample_questions()
    responses = []
    for _ in questions:
        responses += [{"logical_form": "no plan"}, {"answer": "scripted reading", "evidence": [1]}]
    script = tmp_path / "responses.json"
    script.write_text(json.dumps(responses, ensure_ascii=False), encoding="utf-8")
    deep_home = tmp_path.joinpath(*(["a-rather-long-directory-name"] * 6), "home")
    env = _env(test_settings) | {
        "KAG_LLM_PROVIDER": "scripted", "KAG_LLM_MODEL": str(script), "KAG_EMBEDDER": "hashing",
        "KAG_EMBEDDING_DIMENSIONS": str(TEST_DIMENSION), "KAG_HOME": str(deep_home), "COLUMNS": "30",
    }
    result = CliRunner().invoke(app, ["quickstart", "--json"], env=env)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    corpus_files = [p for p in corpus_dir().iterdir() if p.is_file()]
    assert report["load"]["mode"] == "light" and report["load"]["llm_calls"] == 0
    assert report["load"]["documents_loaded"] == len(corpus_files) > 0
    assert [q["question"] for q in report["questions"]] == [q.question for q in questions]
    stored_chunks = {row["id"]: row["doc"] for row in db.read(
        "MATCH (c:Chunk)-[:PART_OF]->(d:Document) RETURN c.id AS id, d.id AS doc")}
    for row in report["questions"]:
        assert row["citations"], row
        for citation in row["citations"]:
            assert stored_chunks.get(citation["chunk_id"]) == citation["document_id"], citation
        run = db.read("MATCH (r:KagRun {id: $id}) RETURN r.question AS q, r.answer AS a", id=row["run_id"])
        assert run == [{"q": row["question"], "a": row["answer"]}]
    assert report["matched"] == sum(row["matches"] for row in report["questions"])
    assert db.read("MATCH (r:KagRun) RETURN count(r) AS n")[0]["n"] == len(questions)

"""`kag-neo4j eval` end to end on a real Neo4j, and the builder's light load under the harness."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from kag_neo4j.cli.eval import register
from kag_neo4j.config import Settings
from kag_neo4j.eval.datasets import load_corpus, load_questions
from kag_neo4j.eval.loading import ensure_corpus_loaded
from kag_neo4j.eval.methods import MethodContext, build_methods
from kag_neo4j.eval.runner import run_eval
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.store.database import Database, connection_for
from tests.integration.cli_env import connection_env
from tests.integration.conftest import TEST_DIMENSION
from tests.integration.test_eval_runner import EVAL_FIXTURES, write_light_graph

QUESTIONS = EVAL_FIXTURES / "musique_questions.json"
CORPUS = EVAL_FIXTURES / "musique_corpus.json"


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """kag-neo4j (test app)"""

    register(app)
    return app


def _env(settings: Settings) -> dict[str, str | None]:
    return connection_env(connection_for(settings)) | {
        "KAG_HOME": str(settings.home), "KAG_EMBEDDER": "hashing", "KAG_EMBEDDING_DIMENSIONS": str(TEST_DIMENSION),
        "COLUMNS": "200", "KAG_BENCHMARKS_DIR": "",
    }


@pytest.fixture
def preloaded(db: Database) -> Database:
    write_light_graph(db, load_corpus(CORPUS), HashingEmbedder(dimension=TEST_DIMENSION))
    return db


def test_eval_prints_recall_for_each_method_writes_reports_and_resumes(
    preloaded: Database, test_settings: Settings, tmp_path: Path
) -> None:
    runner = CliRunner()
    args = ["eval", str(QUESTIONS), "--corpus", str(CORPUS), "--methods", "dense,ours", "--out", str(tmp_path / "out")]
    first = runner.invoke(_app(), args, env=_env(test_settings))
    assert first.exit_code == 0, first.output
    assert "R@2" in first.output and "R@5" in first.output
    assert "│ dense " in first.output and "│ ours " in first.output
    assert "reused 10 passages" in first.output
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert report.count("\n| dense |") == 1 and report.count("\n| ours |") == 1
    assert "| method | R@2 | R@5 | ΔR@2 vs dense | ΔR@5 vs dense |" in report
    data = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    ours = next(m for m in data["methods"] if m["method"] == "ours")
    dense_rows = {r["question_id"]: r["recall"]["5"] for r in data["rows"] if r["method"] == "dense"}
    ours_rows = {r["question_id"]: r["recall"]["5"] for r in data["rows"] if r["method"] == "ours"}
    gain = ours["differences"]["R@5"]
    assert gain["baseline"] == "dense" and gain["n"] == 3
    assert gain["mean"] == pytest.approx(sum(ours_rows[q] - dense_rows[q] for q in dense_rows) / 3)
    assert gain["low"] <= gain["mean"] <= gain["high"]
    assert data["bootstrap"] == {"resamples": 10000, "seed": 0, "confidence": 0.95}
    assert f"{100 * gain['mean']:+.1f} [{100 * gain['low']:+.1f}, {100 * gain['high']:+.1f}]" in report
    assert len(data["rows"]) == 6 and {r["method"] for r in data["rows"]} == {"dense", "ours"}
    assert (tmp_path / "out" / "chart.png").stat().st_size > 1000
    assert list((test_settings.home / "eval" / "musique_questions").glob("*.jsonl")), "rows are cached under KAG_HOME"

    second = runner.invoke(_app(), args, env=_env(test_settings))
    assert second.exit_code == 0, second.output
    assert "resuming: 6 of 6 results come from the cache" in second.output
    again = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert [m["recall"] for m in again["methods"]] == [m["recall"] for m in data["methods"]]

    # the same database reached at another address (a local server started again on another port
    # looks the same to the cache): the rows are the database's, not the address's
    env = _env(test_settings)
    scheme, rest = str(env["NEO4J_URI"]).split("://", 1)
    moved = runner.invoke(_app(), args, env=env | {"NEO4J_URI": f"{'neo4j' if scheme == 'bolt' else 'bolt'}://{rest}"})
    assert moved.exit_code == 0, moved.output
    assert "resuming: 6 of 6 results come from the cache" in moved.output


def test_eval_answers_with_the_llm_given_by_llm(preloaded: Database, test_settings: Settings, tmp_path: Path) -> None:
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(["Answer: Millbrook\nSources: 1", "Answer: Kelso", "Answer: Tomas Reyne"]),
                       encoding="utf-8")
    result = CliRunner().invoke(
        _app(), ["eval", str(QUESTIONS), "--corpus", str(CORPUS), "--methods", "naive", "--llm",
                 f"scripted:{replies}", "--out", str(tmp_path / "qa")], env=_env(test_settings))
    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / "qa" / "results.json").read_text(encoding="utf-8"))
    naive = data["methods"][0]
    assert naive["em"] == pytest.approx(2 / 3) and naive["llm_calls"] == 1.0 and naive["answered"] == 3
    assert data["llm"].startswith("scripted")
    assert "| naive |" in (tmp_path / "qa" / "report.md").read_text(encoding="utf-8")


def test_eval_refuses_a_foreign_knowledge_base_and_unknown_methods(
    preloaded: Database, test_settings: Settings, tmp_path: Path
) -> None:
    preloaded.write("CREATE (:Document {id: 'other-corpus', title: 'Other', status: 'complete'})")
    runner = CliRunner()
    foreign = runner.invoke(_app(), ["eval", str(QUESTIONS), "--corpus", str(CORPUS), "--methods", "dense"],
                            env=_env(test_settings))
    assert foreign.exit_code == 1 and "--replace" in foreign.output
    unknown = runner.invoke(_app(), ["eval", str(QUESTIONS), "--corpus", str(CORPUS), "--methods", "dense,bm25"],
                            env=_env(test_settings))
    assert unknown.exit_code == 1 and "unknown method(s) bm25" in unknown.output


def test_the_builders_light_load_maps_every_retrieved_chunk_to_a_passage(
    db: Database, test_settings: Settings, tmp_path: Path
) -> None:
    embedder = HashingEmbedder(dimension=TEST_DIMENSION)
    corpus = load_corpus(CORPUS)
    status = ensure_corpus_loaded(db, corpus, settings=test_settings, embedder=embedder)
    assert not status.reused and status.documents == 10 and status.chunks >= 10
    assert ensure_corpus_loaded(db, corpus, settings=test_settings, embedder=embedder).reused
    questions = load_questions(QUESTIONS)
    ctx = MethodContext(db=db, embedder=embedder)
    run = run_eval(questions, corpus, build_methods(["dense", "ours"], ctx, qa=False), ctx, cache_root=tmp_path,
                   setup={})
    assert all(row.error is None for row in run.rows)
    assert all(r.unit is not None for row in run.rows for r in row.retrieved), "builder ids == reader ids"
    ours = [row for row in run.rows if row.method == "ours"]
    assert any(row.details["seeds"] for row in ours), "question mentions link to the entities the builder wrote"

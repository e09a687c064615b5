"""Scoring one question, summarising a method, the resumable cache, method and --llm parsing."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest
from pydantic import ValidationError

from kag_neo4j.cli.eval import parse_llm_spec
from kag_neo4j.cli.solver_options import parse_solver_options
from kag_neo4j.errors import ConfigError, EvalError
from kag_neo4j.eval.datasets import GoldPassage, Question
from kag_neo4j.eval.linking import LinkTally
from kag_neo4j.eval.methods import (
    EvalMethod,
    MethodContext,
    QAOutput,
    RetrievalOutput,
    parse_methods,
)
from kag_neo4j.eval.runner import (
    QuestionResult,
    ResultCache,
    cache_path,
    evaluate_question,
    summarise,
)
from kag_neo4j.eval.steps import StepOutcome
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.models.usage import Usage
from kag_neo4j.solver.chunks import RankedChunk
from kag_neo4j.solver.runtime import SolverConfig

QUESTION = Question(id="q1", question="Where was Ada born?", answers=["Millbrook", "Millbrook town"],
                    gold=[GoldPassage(title="Ada"), GoldPassage(title="Millbrook")])
UNITS = {"doc-ada": "ada", "doc-mill": "millbrook", "doc-x": "x", "doc-y": "y"}


def _ctx(usage: Usage | None = None) -> MethodContext:
    return MethodContext(db=cast(Any, None), embedder=HashingEmbedder(), usage=usage or Usage())


def _retriever(*docs: str):
    def retrieve(_question: str) -> RetrievalOutput:
        return RetrievalOutput(chunks=[RankedChunk(chunk_id=f"{d}#0#{i}", document_id=d) for i, d in enumerate(docs)])
    return retrieve


def test_one_question_is_scored_by_hand() -> None:
    usage = Usage()

    def answer(question: str, retrieval: RetrievalOutput | None) -> QAOutput:
        assert retrieval is not None and retrieval.chunks[0].document_id == "doc-x"
        usage.record_call("answer", prompt_tokens=100, completion_tokens=5)
        return QAOutput(answer="the Millbrook", cited_chunk_ids=["doc-mill#0#3"])

    method = EvalMethod(name="m", description="", retrieve=_retriever("doc-x", "doc-ada", "doc-ada", "doc-y", "doc-mill"),
                        answer=answer, answer_uses_retrieval=True)
    row = evaluate_question(method, QUESTION, ["ada", "millbrook"], UNITS, _ctx(usage))
    # distinct passages: x, ada, y, millbrook -> @2 finds ada (1 of 2), @5 finds both
    assert row.recall == {"2": 0.5, "5": 1.0}
    assert [r.unit for r in row.retrieved] == ["x", "ada", "ada", "y", "millbrook"]
    assert row.em == 1.0 and row.f1 == 1.0 and row.answer == "the Millbrook"
    assert (row.llm_calls, row.prompt_tokens, row.completion_tokens) == (1, 100, 5)
    assert row.qa_seconds == pytest.approx(row.answer_seconds + row.retrieval_seconds)
    assert row.error is None


def test_a_row_keeps_its_question_s_model_time_by_stage_and_the_summary_averages_it() -> None:
    usage = Usage()
    usage.record_call("plan", prompt_tokens=5000, completion_tokens=500, seconds=60.0)  # an earlier question's

    def answer(_question: str, _retrieval: RetrievalOutput | None) -> QAOutput:
        usage.record_call("plan", prompt_tokens=1000, completion_tokens=120, seconds=13.0)
        usage.record_call("subanswer", prompt_tokens=450, completion_tokens=20, seconds=7.0)
        return QAOutput(answer="Ada")

    method = EvalMethod(name="m", description="", answer=answer)
    rows = [evaluate_question(method, QUESTION, ["ada"], UNITS, _ctx(usage)) for _ in range(2)]
    assert {name: (c.calls, c.seconds) for name, c in rows[0].stages.items()} == {"plan": (1, 13.0), "subanswer": (1, 7.0)}
    summary = summarise(method, rows)
    assert summary.stages["plan"].prompt_tokens == 1000 and summary.stages["subanswer"].seconds == pytest.approx(7.0)
    assert summary.qa_s_mean is not None and summary.qa_s_mean < 1.0, "the ledger's seconds are not the wall clock"


def test_an_exception_becomes_an_error_row_not_a_crash() -> None:
    def broken(_question: str) -> RetrievalOutput:
        raise RuntimeError("index offline")

    row = evaluate_question(EvalMethod(name="m", description="", retrieve=broken), QUESTION, ["ada"], UNITS, _ctx())
    assert row.error == "RuntimeError: index offline" and "traceback" in row.details and row.recall == {}


def test_a_summary_counts_failures_as_misses() -> None:
    method = EvalMethod(name="m", description="d", retrieve=_retriever(), answer=lambda q, r: QAOutput(answer=""))
    rows = [
        QuestionResult(method="m", question_id="1", question="", gold_answers=["a"], gold_units=["a"],
                       recall={"2": 1.0, "5": 1.0}, answer="a", em=1.0, f1=1.0, llm_calls=2, prompt_tokens=90,
                       completion_tokens=10, retrieval_seconds=0.010, qa_seconds=1.0),
        QuestionResult(method="m", question_id="2", question="", gold_answers=["a"], gold_units=["a"],
                       recall={"2": 0.0, "5": 0.5}, answer="b", em=0.0, f1=0.5, llm_calls=1, prompt_tokens=40,
                       completion_tokens=10, retrieval_seconds=0.030, qa_seconds=3.0),
        QuestionResult(method="m", question_id="3", question="", gold_answers=["a"], gold_units=["a"], error="boom"),
    ]
    summary = summarise(method, rows)
    assert summary.questions == 3 and summary.errors == 1
    assert summary.recall == {"2": pytest.approx(1 / 3), "5": pytest.approx(0.5)}
    assert summary.em == pytest.approx(1 / 3) and summary.f1 == pytest.approx(0.5)
    assert summary.answered == 2 and summary.llm_calls == 1.5 and summary.tokens == 75.0
    assert summary.retrieval_ms_p50 == pytest.approx(20.0) and summary.qa_s_p95 == pytest.approx(2.9)


def test_the_cache_skips_a_torn_last_line_and_failed_rows(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path / "eval" / "m.jsonl")
    ok = QuestionResult(method="m", question_id="1", question="q", gold_answers=["a"], gold_units=[])
    cache.append(ok)
    cache.append(ok.model_copy(update={"question_id": "2", "error": "timeout"}))
    with cache.path.open("a", encoding="utf-8") as handle:
        handle.write('{"method": "m", "question_id": "3", "quest')  # the run was killed mid-write
    assert list(cache.load()) == ["1"]
    cache.clear()
    assert cache.load() == {}


def test_the_cache_file_changes_with_everything_that_changes_results(tmp_path: Path) -> None:
    method = EvalMethod(name="dense+ppr", description="", config={"k": 10})
    base = cache_path(tmp_path, "musique", method, {"embedder": "e5", "graph_version": 3})
    assert base.parent == tmp_path / "musique" and base.name.startswith("dense_ppr-")
    assert base == cache_path(tmp_path, "musique", method, {"graph_version": 3, "embedder": "e5"})
    assert base != cache_path(tmp_path, "musique", method, {"embedder": "e5", "graph_version": 4})
    other = EvalMethod(name="dense+ppr", description="", config={"k": 20})
    assert base != cache_path(tmp_path, "musique", other, {"embedder": "e5", "graph_version": 3})


def test_method_names_are_checked() -> None:
    assert parse_methods("dense, ours,dense", qa=False) == ["dense", "ours"]
    assert "naive" in parse_methods(None, qa=True) and "naive" not in parse_methods(None, qa=False)
    with pytest.raises(EvalError, match="unknown method.*bm25"):
        parse_methods("dense,bm25", qa=False)
    with pytest.raises(EvalError, match="empty"):
        parse_methods(" , ", qa=False)


def test_llm_specs() -> None:
    assert parse_llm_spec("openai:gpt-4o-mini") == {"llm_provider": "openai", "llm_model": "gpt-4o-mini"}
    assert parse_llm_spec("scripted:/tmp/replies.json") == {"llm_provider": "scripted", "llm_model": "/tmp/replies.json"}
    assert parse_llm_spec("llamacpp") == {"llm_provider": "llamacpp"}
    assert parse_llm_spec("qwen2.5-1.5b") == {"llm_model": "qwen2.5-1.5b"}
    with pytest.raises(EvalError):
        parse_llm_spec(" ")


def test_solver_options_are_validated_knobs_of_the_solver() -> None:
    config = parse_solver_options(["graph_confidence=0.6", "retrieval.k_ppr=7", "retrieval.seed_titles=false"])
    assert config is not None and config.graph_confidence == 0.6
    assert (config.retrieval.k_ppr, config.retrieval.seed_titles) == (7, False)
    assert config.chunk_k == SolverConfig().chunk_k, "what is not given keeps its default"
    assert parse_solver_options([]) is None
    with pytest.raises(ConfigError, match="graph_confidence"):
        parse_solver_options(["graph_confidence=1.5"])
    with pytest.raises(ConfigError, match="not KEY=VALUE"):
        parse_solver_options(["graph_confidence"])
    with pytest.raises(ConfigError, match="no_such_knob"):
        parse_solver_options(["no_such_knob=1"])


def test_a_summary_counts_the_solver_steps_and_scores_graph_answers_where_gold_exists() -> None:
    def retrieve_with(*sources: str, values: str) -> Any:
        def retrieve(_question: str) -> RetrievalOutput:
            return RetrievalOutput(chunks=[], steps=[StepOutcome(source=s, values=[values]) for s in sources])
        return retrieve

    with_hops = QUESTION.model_copy(update={"hop_answers": ["Ada Pembroke"]})
    rows = [evaluate_question(EvalMethod(name="m", description="", retrieve=retrieve_with("graph", "chunks", values=v)),
                              question, ["ada"], UNITS, _ctx())
            for question, v in [(with_hops, "Ada Pembroke"), (with_hops, "Kestrel Bay"), (QUESTION, "Ada Pembroke")]]
    assert [row.steps.graph_gold if row.steps else "-" for row in rows] == [1, 0, None]
    summary = summarise(EvalMethod(name="m", description="", retrieve=_retriever()), rows)
    assert (summary.steps, summary.graph_steps) == (2.0, 1.0)
    assert summary.graph_step_gold == 0.5, "scored over the questions with gold hop answers only"


def test_a_misspelt_knob_is_refused_by_the_python_api_too() -> None:
    with pytest.raises(ValidationError, match="graf_confidence"):
        SolverConfig(graf_confidence=0.6)  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="k_pr"):
        SolverConfig.model_validate({"retrieval": {"k_pr": 5}})


def test_a_summary_pools_the_links_over_seeds_and_gold_passages() -> None:
    def row(question_id: str, links: LinkTally | None) -> QuestionResult:
        return QuestionResult(method="ours", question_id=question_id, question="?", gold_answers=[], gold_units=[],
                              links=links)

    rows = [row("q1", LinkTally(mentions=2, entities=2, titles=1, gold_seeds=2, gold=2, gold_reached=2)),
            row("q2", LinkTally(mentions=1, entities=0, gold_seeds=0, gold=2, gold_reached=0)),
            row("q3", None)]
    summary = summarise(EvalMethod(name="ours", description="", retrieve=_retriever()), rows)
    assert summary.linked_questions == 2 and (summary.entities, summary.titles) == (1.0, 0.5)
    assert summary.seed_precision == 2 / 3, "pooled over seeds, not averaged over questions"
    assert summary.gold_reached == 0.5 and summary.no_seed == 0.5
    dense = summarise(EvalMethod(name="dense", description="", retrieve=_retriever()), [row("q1", None)])
    assert dense.linked_questions == 0 and dense.seed_precision is None

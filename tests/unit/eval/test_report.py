"""The Markdown table, the JSON rows and the PNG chart of a run."""

from __future__ import annotations

import json
from pathlib import Path

from kag_neo4j.eval.report import markdown, write_reports
from kag_neo4j.eval.runner import EvalRun, MethodSummary, QuestionResult


def _run(qa: bool) -> EvalRun:
    methods = [
        MethodSummary(method="dense", description="vector index only", questions=2, errors=0,
                      recall={"2": 0.5125, "5": 0.75}, retrieval_ms_p50=12.4, retrieval_ms_p95=30.2),
        MethodSummary(method="naive", description="", questions=2, errors=1, recall={"2": 0.5, "5": 0.75},
                      em=0.5 if qa else None, f1=0.625 if qa else None, answered=1, llm_calls=1.0, tokens=812.0,
                      retrieval_ms_p50=12.0, retrieval_ms_p95=14.0, qa_s_p50=6.5, qa_s_p95=8.25),
    ]
    rows = [QuestionResult(method="dense", question_id="q1", question="Q?", gold_answers=["a"], gold_units=["t"],
                           recall={"2": 1.0, "5": 1.0})]
    return EvalRun(dataset="musique", format="musique", questions_file="/x/questions.dev.json",
                   corpus_file="/x/corpus.json", recall_unit="paragraph", questions=2, k_values=[2, 5],
                   embedder="multilingual-e5-small", llm="qwen" if qa else None, database="neo4j", neo4j="5.26.24",
                   gds="2.13.9", graph_version=3, started_at="2026-11-29T20:00:00+00:00", seconds=61.0,
                   methods=methods, rows=rows, notes=["ours: its answerer is not installed in this checkout"])


def test_retrieval_only_table() -> None:
    text = markdown(_run(qa=False))
    assert "| method | R@2 | R@5 | ms p50/p95 | errors |" in text
    assert "| dense | 51.2 | 75.0 | 12/30 | 0 |" in text
    assert "EM" not in text.split("| method")[1].split("\n")[0]
    assert "by paragraph" in text and "Neo4j 5.26.24, GDS 2.13.9" in text
    assert "- ours: its answerer is not installed in this checkout" in text


def test_qa_columns_and_dashes_for_what_was_not_measured() -> None:
    text = markdown(_run(qa=True))
    assert "| method | R@2 | R@5 | EM | F1 | calls/q | tokens/q | ms p50/p95 | QA s p50/p95 | errors |" in text
    assert "| dense | 51.2 | 75.0 | – | – | – | – | 12/30 | – | 0 |" in text
    assert "| naive | 50.0 | 75.0 | 50.0 | 62.5 | 1.00 | 812 | 12/14 | 6.50/8.25 | 1 |" in text


def test_the_three_files(tmp_path: Path) -> None:
    written = write_reports(_run(qa=True), tmp_path / "out")
    assert set(written) == {"markdown", "json", "chart"}
    data = json.loads(written["json"].read_text(encoding="utf-8"))
    assert data["rows"][0]["question_id"] == "q1" and data["methods"][1]["em"] == 0.5
    assert written["chart"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_solver_methods_say_how_their_steps_were_answered() -> None:
    run = _run(qa=True)
    run.methods.append(MethodSummary(method="ours-solver", questions=2, errors=0, recall={"2": 0.5, "5": 1.0},
                                     steps=2.5, graph_steps=0.5, graph_step_gold=0.75))
    run.methods.append(MethodSummary(method="ours", questions=2, errors=0, recall={}, steps=1.0, graph_steps=1.0))
    text = markdown(run)
    assert ("- ours-solver: 2.50 Retrieval steps per question, 0.50 answered from the graph "
            "(75.0 % of them bound a gold hop answer)") in text
    assert "- ours: 1.00 Retrieval steps per question, 1.00 answered from the graph (no gold hop answers" in text
    assert text.count("Retrieval steps per question") == 2, "only the methods that ran the solver get a line"


def test_linking_methods_say_what_their_mentions_linked_to() -> None:
    run = _run(qa=False)
    run.methods.append(MethodSummary(method="ours", questions=2, errors=0, recall={"2": 0.5, "5": 1.0},
                                     linked_questions=2, entities=1.0, titles=0.5, seed_precision=2 / 3,
                                     gold_reached=0.5, no_seed=0.5))
    text = markdown(run)
    assert ("- ours linking: its mentions linked 1.00 entities and titled 0.50 documents per question (50.0 % of "
            "questions neither); 66.7 % of these seeds lead to a gold passage in one step, reaching 50.0 % of the "
            "gold passages") in text
    assert text.count(" linking: ") == 1, "dense and naive link nothing"


def test_answering_methods_say_where_their_time_goes_by_stage() -> None:
    from kag_neo4j.eval.stages import StageCost

    run = _run(qa=True)
    run.methods.append(MethodSummary(
        method="ours-solver", questions=2, errors=0, recall={}, qa_s_mean=40.0,
        stages={"plan": StageCost(calls=1, prompt_tokens=1040, completion_tokens=130, seconds=14.0),
                "subanswer": StageCost(calls=2.5, prompt_tokens=1250, completion_tokens=50, seconds=20.0),
                "judge": StageCost(seconds=0.5)}))
    text = markdown(run)
    assert ("- ours-solver time per question (mean 40.0 s): subanswer 2.50 × (500 + 20 tokens) 20.0 s; "
            "plan 1.00 × (1,040 + 130 tokens) 14.0 s; outside the model 5.5 s") in text
    assert text.count("time per question") == 1, "a method without stage figures gets no line"
    run.methods[-1].qa_s_mean = 30.0
    assert "together 34.5 s, more than the answer time" in markdown(run), "overlapping calls are not hidden as 0 s"


def test_solver_methods_say_how_their_plans_came_about() -> None:
    from kag_neo4j.eval.plans import PlanOrigins

    run = _run(qa=True)
    run.methods.append(MethodSummary(
        method="ours-solver", questions=4, errors=0, recall={},
        plans=PlanOrigins(questions={"first try": 3, "fallback": 1}, plan_seconds={"first try": 9.04, "fallback": 41.0})))
    text = markdown(run)
    assert ("- ours-solver plans: first try 3 (75.0 %), fallback 1 (25.0 %); planning per question: "
            "9.0 s first try, 41.0 s fallback") in text
    assert text.count(" plans: ") == 1, "a method without plans gets no line"

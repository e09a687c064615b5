"""Run the methods over the questions, score every answer and ranking, and resume after a stop.

Questions are visited one at a time and every method runs on each before the next question,
so no method profits from a warmer cache; each retriever runs once on the first question before
timing starts (GDS projection, JIT, index warm-up), but for those that call the LLM (``warm_up`` off). Per-question results go to a JSON-lines
file under ``KAG_HOME/eval/<dataset>/`` as soon as they exist; its name hashes everything that
changes a result (question and corpus files, method configuration, embedder, LLM, graph version),
so an interrupted run resumes where it stopped and a changed setup starts afresh. A question that
failed is reported but not cached, so the next run tries it again.
"""

from __future__ import annotations

import hashlib
import json
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from kag_neo4j.errors import EvalError
from kag_neo4j.eval import metrics
from kag_neo4j.eval.datasets import Corpus, Question, QuestionSet
from kag_neo4j.eval.linking import LinkTally, tally_links
from kag_neo4j.eval.loading import LoadStatus
from kag_neo4j.eval.methods import EvalMethod, MethodContext, RetrievalOutput, SeedLinks
from kag_neo4j.eval.paired import Bootstrap, Difference, Outcomes, compare_to_baselines
from kag_neo4j.eval.plans import PlanOrigins, tally_plans
from kag_neo4j.eval.stages import StageCost, mean_stages, stage_costs, stage_snapshot
from kag_neo4j.eval.steps import StepTally, tally_steps
from kag_neo4j.solver.results import PlanOrigin

__all__ = ["EvalRun", "MethodSummary", "QuestionResult", "ResultCache", "run_eval", "summarise"]

#: part of every cache key: bump it when a change to the harness changes results
HARNESS_VERSION = 1
#: recall@k reported (the published tables use 2 and 5)
K_VALUES: tuple[int, ...] = (2, 5)
#: a method whose first attempts all fail stops the run (a systematic error, not a bad question)
_FAIL_FAST = 3


class RetrievedRow(BaseModel):
    chunk_id: str
    document_id: str | None = None
    unit: str | None = None


class QuestionResult(BaseModel):
    """Everything measured for one question and one method."""

    method: str
    question_id: str
    question: str
    gold_answers: list[str]
    gold_units: list[str]
    retrieved: list[RetrievedRow] = Field(default_factory=list)
    recall: dict[str, float | None] = Field(default_factory=dict, description="k -> recall@k")
    answer: str | None = None
    em: float | None = None
    f1: float | None = None
    cited_chunk_ids: list[str] = Field(default_factory=list)
    llm_calls: int = 0
    llm_cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    #: tokens of the responses served from the cache, at what they cost when computed
    llm_cached_tokens: int = 0
    stages: dict[str, StageCost] = Field(default_factory=dict, description=(
        "the LLM's calls, tokens and seconds for this question, by pipeline stage"))
    retrieval_seconds: float | None = None
    answer_seconds: float | None = None
    qa_seconds: float | None = None
    details: dict[str, Any] = Field(default_factory=dict)
    steps: StepTally | None = Field(default=None, description="a solver run's Retrieval steps, counted")
    plan_origin: PlanOrigin | None = Field(default=None, description="how a solver run's static plan came about")
    links: LinkTally | None = Field(default=None, description=(
        "what the question's mentions linked to (the methods that link them)"))
    error: str | None = None

    @property
    def tokens(self) -> int:
        """Tokens this question costs a cold run (cached responses counted at their original cost)."""
        return self.prompt_tokens + self.completion_tokens + self.llm_cached_tokens

    @property
    def requests(self) -> int:
        """LLM requests this question makes, whether the model or the cache answered them."""
        return self.llm_calls + self.llm_cache_hits


class MethodSummary(BaseModel):
    method: str
    description: str = ""
    questions: int
    errors: int
    recall: dict[str, float | None]
    em: float | None = None
    f1: float | None = None
    answered: int = 0
    llm_calls: float | None = Field(default=None, description=(
        "mean LLM requests per answered question (answered by the model or the response cache)"))
    tokens: float | None = Field(default=None, description=(
        "mean prompt + completion tokens per answered question, cached responses at their original cost"))
    retrieval_ms_p50: float | None = None
    retrieval_ms_p95: float | None = None
    qa_s_p50: float | None = None
    qa_s_p95: float | None = None
    qa_unavailable: str | None = None
    steps: float | None = Field(default=None, description="mean Retrieval steps per question (solver methods)")
    graph_steps: float | None = Field(default=None, description=(
        "mean Retrieval steps answered from the graph per question"))
    graph_step_gold: float | None = Field(default=None, description=(
        "the share of graph-answered steps that bound a gold hop answer (questions with gold hop answers)"))
    linked_questions: int = Field(default=0, description="questions whose query-time entity links were scored")
    entities: float | None = Field(default=None, description="mean entities the question's mentions linked to")
    titles: float | None = Field(default=None, description="mean documents the question's mentions title")
    seed_precision: float | None = Field(default=None, description=(
        "the share of seeds (linked entities, titled documents) that lead to a gold passage in one step"))
    gold_reached: float | None = Field(default=None, description="the share of gold passages some seed leads to")
    no_seed: float | None = Field(default=None, description="the share of questions whose mentions linked to nothing")
    differences: dict[str, Difference] = Field(default_factory=dict, description=(
        "metric (R@k, EM, F1) -> the paired difference to the baseline, with its bootstrap interval"))
    outcomes: Outcomes | None = Field(default=None, description=(
        "exact-match outcomes per question against the QA baseline (both right, only one, neither)"))
    stages: dict[str, StageCost] = Field(default_factory=dict, description=(
        "mean LLM calls, tokens and seconds per answered question, by pipeline stage"))
    qa_s_mean: float | None = Field(default=None, description="mean answer latency (the stages' seconds are part of it)")
    plans: PlanOrigins | None = Field(default=None, description="how the solver's static plans came about")


class EvalRun(BaseModel):
    dataset: str
    format: str
    questions_file: str
    corpus_file: str
    recall_unit: str
    questions: int
    k_values: list[int]
    embedder: str
    llm: str | None = None
    database: str
    neo4j: str | None = None
    gds: str | None = None
    graph_version: int | None = None
    load: LoadStatus | None = None
    started_at: str
    seconds: float
    resumed_rows: int = 0
    methods: list[MethodSummary]
    rows: list[QuestionResult]
    notes: list[str] = Field(default_factory=list)
    bootstrap: Bootstrap | None = None


class ResultCache:
    """Per-question results of one method and setup, appended line by line (JSON lines)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> dict[str, QuestionResult]:
        """question id -> result; a line cut short by an interruption is ignored."""
        results: dict[str, QuestionResult] = {}
        if not self.path.is_file():
            return results
        for line in self.path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            try:
                row = QuestionResult.model_validate_json(line)
            except ValidationError:
                continue
            if row.error is None:
                results[row.question_id] = row
        return results

    def append(self, row: QuestionResult) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(row.model_dump_json() + "\n")
            handle.flush()

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)


def cache_key(parts: dict[str, Any]) -> str:
    text = json.dumps(parts, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def cache_path(root: Path, dataset: str, method: EvalMethod, setup: dict[str, Any]) -> Path:
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in method.name)
    key = cache_key({**setup, "method": method.name, "config": method.config, "answers": method.answer is not None,
                     "harness": HARNESS_VERSION})
    return root / dataset / f"{safe}-{key}.jsonl"


def _usage_snapshot(ctx: MethodContext) -> tuple[int, int, int, int, int]:
    total = ctx.usage.total()
    return total.calls, total.cache_hits, total.prompt_tokens, total.completion_tokens, total.cached_tokens


def _fill_documents(ctx: MethodContext, retrieval: RetrievalOutput) -> None:
    missing = [chunk.chunk_id for chunk in retrieval.chunks if not chunk.document_id]
    if missing:
        documents = ctx.documents_of(missing)
        for chunk in retrieval.chunks:
            if not chunk.document_id:
                chunk.document_id = documents.get(chunk.chunk_id, "")


def _links(ctx: MethodContext, links: SeedLinks, units: dict[str, str], gold_units: Sequence[str]) -> LinkTally:
    def unit(document_id: str) -> str:
        return units.get(document_id, f"document:{document_id}")

    seeds = links.seeds
    documents = ctx.entity_documents(seeds)
    titled = ctx.documents_of(links.titled)
    return tally_links(len(links.mentions),
                       {seed: [unit(doc) for doc in documents.get(seed, [])] for seed in seeds},
                       [unit(doc) for doc in dict.fromkeys(titled.values())], gold_units)


def evaluate_question(
    method: EvalMethod,
    question: Question,
    gold_units: Sequence[str],
    units: dict[str, str],
    ctx: MethodContext,
    k_values: Sequence[int] = K_VALUES,
) -> QuestionResult:
    """Run one method on one question and score it (errors are caught into the row)."""
    row = QuestionResult(method=method.name, question_id=question.id, question=question.question,
                         gold_answers=question.answers, gold_units=list(gold_units))
    before, stages_before = _usage_snapshot(ctx), stage_snapshot(ctx.usage)
    try:
        retrieval = None
        if method.retrieve is not None:
            started = time.perf_counter()
            retrieval = method.retrieve(question.question)
            row.retrieval_seconds = time.perf_counter() - started
            _fill_documents(ctx, retrieval)
            row.retrieved = [
                RetrievedRow(chunk_id=c.chunk_id, document_id=c.document_id or None,
                             unit=units.get(c.document_id) if c.document_id else None)
                for c in retrieval.chunks
            ]
            ranked = [r.unit or f"document:{r.document_id or r.chunk_id}" for r in row.retrieved]
            row.recall = {str(k): metrics.recall_at_k(ranked, gold_units, k) for k in k_values}
            row.details.update(retrieval.details)
            if retrieval.links is not None:
                row.links = _links(ctx, retrieval.links, units, gold_units)
        if method.answer is not None:
            started = time.perf_counter()
            output = method.answer(question.question, retrieval)
            row.answer_seconds = time.perf_counter() - started
            retrieval_part = (row.retrieval_seconds or 0.0) if method.answer_uses_retrieval else 0.0
            row.qa_seconds = row.answer_seconds + retrieval_part
            row.answer = output.answer
            row.cited_chunk_ids = output.cited_chunk_ids
            row.em = metrics.best_exact_match(output.answer, question.answers)
            row.f1 = metrics.best_f1(output.answer, question.answers)
            row.details.update(output.details)
        outcomes = output.steps if method.answer is not None and output.steps is not None else (
            retrieval.steps if retrieval is not None else None)
        if outcomes is not None:
            gold = [*question.hop_answers, *question.answers] if question.hop_answers else []
            row.steps = tally_steps(outcomes, gold)
        row.plan_origin = (output.plan_origin if method.answer is not None and output.plan_origin is not None
                           else retrieval.plan_origin if retrieval is not None else None)
    except Exception as exc:  # noqa: BLE001 - one bad question must not end a long run; reported
        row.error = f"{type(exc).__name__}: {exc}"
        row.details["traceback"] = traceback.format_exc(limit=6)
    after = _usage_snapshot(ctx)
    row.stages = stage_costs(stages_before, stage_snapshot(ctx.usage))
    row.llm_calls, row.llm_cache_hits, row.prompt_tokens, row.completion_tokens, row.llm_cached_tokens = (
        after[i] - before[i] for i in range(5)
    )
    return row


def _ms(value: float | None) -> float | None:
    return value * 1000 if value is not None else None


def summarise(method: EvalMethod, rows: Iterable[QuestionResult], k_values: Sequence[int] = K_VALUES) -> MethodSummary:
    """Means over the questions; a failed question counts as a miss (recall 0, EM/F1 0)."""
    rows = list(rows)
    failed = [row for row in rows if row.error]
    recall: dict[str, float | None] = {}
    if method.retrieve is not None:
        for k in k_values:
            values = [0.0 if row.error else row.recall.get(str(k)) for row in rows]
            recall[str(k)] = metrics.mean(values)
    summary = MethodSummary(method=method.name, description=method.description, questions=len(rows),
                            errors=len(failed), recall=recall, qa_unavailable=method.qa_unavailable)
    retrieval_times = [row.retrieval_seconds for row in rows if row.retrieval_seconds is not None and not row.error]
    summary.retrieval_ms_p50 = _ms(metrics.percentile(retrieval_times, 50))
    summary.retrieval_ms_p95 = _ms(metrics.percentile(retrieval_times, 95))
    if method.answer is not None:
        summary.em = metrics.mean([0.0 if row.error else row.em for row in rows])
        summary.f1 = metrics.mean([0.0 if row.error else row.f1 for row in rows])
        answered = [row for row in rows if row.answer is not None and not row.error]
        summary.answered = len(answered)
        summary.llm_calls = metrics.mean([float(row.requests) for row in answered])
        summary.tokens = metrics.mean([float(row.tokens) for row in answered])
        qa_times = [row.qa_seconds for row in answered if row.qa_seconds is not None]
        summary.qa_s_p50 = metrics.percentile(qa_times, 50)
        summary.qa_s_p95 = metrics.percentile(qa_times, 95)
        summary.qa_s_mean = metrics.mean(qa_times)
        summary.stages = mean_stages([row.stages for row in answered])
    tallies = [row.steps for row in rows if row.steps is not None and not row.error]
    if tallies:
        summary.steps = metrics.mean([float(t.steps) for t in tallies])
        summary.graph_steps = metrics.mean([float(t.graph) for t in tallies])
        scored = [t for t in tallies if t.graph_gold is not None]
        graph_total = sum(t.graph for t in scored)
        summary.graph_step_gold = sum(t.graph_gold or 0 for t in scored) / graph_total if graph_total else None
    summary.plans = tally_plans([(row.plan_origin, row.stages) for row in rows if not row.error])
    links = [row.links for row in rows if row.links is not None and not row.error]
    if links:
        summary.linked_questions = len(links)
        summary.entities = metrics.mean([float(t.entities) for t in links])
        summary.titles = metrics.mean([float(t.titles) for t in links])
        seeds = sum(t.seeds for t in links)
        summary.seed_precision = sum(t.gold_seeds for t in links) / seeds if seeds else None
        gold = sum(t.gold for t in links)
        summary.gold_reached = sum(t.gold_reached for t in links) / gold if gold else None
        summary.no_seed = sum(1 for t in links if t.seeds == 0) / len(links)
    return summary


class Progress:
    """What the runner reports while it works (a rich progress bar in the CLI, nothing in tests)."""

    def start(self, total: int, done: int) -> None: ...

    def advance(self, method: str, row: QuestionResult) -> None: ...

    def stop(self) -> None: ...


def run_eval(
    questions: QuestionSet,
    corpus: Corpus,
    methods: Sequence[EvalMethod],
    ctx: MethodContext,
    *,
    cache_root: Path,
    setup: dict[str, Any],
    fresh: bool = False,
    progress: Progress | None = None,
    k_values: Sequence[int] = K_VALUES,
    warm_up: bool = True,
    info: dict[str, Any] | None = None,
    log: Callable[[str], None] | None = None,
    bootstrap: Bootstrap | None = None,
) -> EvalRun:
    """Evaluate every method on every question; cached rows are reused unless ``fresh``.

    Each method's summary gets its paired differences to the baselines, with ``bootstrap``
    intervals (:mod:`kag_neo4j.eval.paired`)."""
    say = log or (lambda _message: None)
    progress = progress or Progress()
    started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    started = time.monotonic()
    units = corpus.units(questions.recall_unit)
    gold = {q.id: questions.gold_units(q) for q in questions.questions}
    caches = {m.name: ResultCache(cache_path(cache_root, questions.name, m, setup)) for m in methods}
    done: dict[str, dict[str, QuestionResult]] = {}
    for method in methods:
        if fresh:
            caches[method.name].clear()
        done[method.name] = caches[method.name].load()
    resumed = sum(1 for m in methods for q in questions.questions if q.id in done[m.name])
    if resumed:
        say(f"resuming: {resumed} of {len(methods) * len(questions.questions)} results come from the cache")
    pending = [q for q in questions.questions if any(q.id not in done[m.name] for m in methods)]
    if warm_up and pending:
        for method in methods:
            if method.retrieve is not None and method.warm_up and any(q.id not in done[method.name] for q in pending):
                try:
                    method.retrieve(pending[0].question)
                except Exception as exc:  # noqa: BLE001 - the timed call reports it again
                    say(f"{method.name}: warm-up failed ({type(exc).__name__}: {exc})")
    progress.start(len(methods) * len(questions.questions), resumed)
    failures: dict[str, int] = {m.name: 0 for m in methods}
    successes: dict[str, int] = {m.name: len(done[m.name]) for m in methods}
    results: dict[str, dict[str, QuestionResult]] = {m.name: dict(done[m.name]) for m in methods}
    try:
        for question in questions.questions:
            for method in methods:
                if question.id in done[method.name]:
                    continue
                row = evaluate_question(method, question, gold[question.id], units, ctx, k_values)
                results[method.name][question.id] = row
                if row.error is None:
                    caches[method.name].append(row)
                    successes[method.name] += 1
                else:
                    failures[method.name] += 1
                    say(f"{method.name} failed on {question.id}: {row.error}")
                    if successes[method.name] == 0 and failures[method.name] >= _FAIL_FAST:
                        raise EvalError(
                            f"method {method.name} failed on its first {_FAIL_FAST} questions; the last error: "
                            f"{row.error}"
                        )
                progress.advance(method.name, row)
    finally:
        progress.stop()
    rows = [results[m.name][q.id] for q in questions.questions for m in methods if q.id in results[m.name]]
    summaries = [summarise(m, [results[m.name][q.id] for q in questions.questions if q.id in results[m.name]], k_values)
                 for m in methods]
    bootstrap = bootstrap or Bootstrap()
    compare_to_baselines(summaries, results, [q.id for q in questions.questions], k_values, bootstrap)
    notes = [m.qa_unavailable for m in methods if m.qa_unavailable]
    extra = info or {}
    return EvalRun(
        dataset=questions.name, format=questions.format, questions_file=str(questions.path),
        corpus_file=str(corpus.path), recall_unit=questions.recall_unit, questions=len(questions.questions),
        k_values=list(k_values), embedder=ctx.embedder.model_id, llm=ctx.llm_id, database=ctx.db.database,
        neo4j=extra.get("neo4j"), gds=extra.get("gds"), graph_version=extra.get("graph_version"),
        load=extra.get("load"), started_at=started_at, seconds=time.monotonic() - started, resumed_rows=resumed,
        methods=summaries, rows=rows, notes=notes, bootstrap=bootstrap,
    )

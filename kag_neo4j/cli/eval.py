"""``kag-neo4j eval DATASET``: compare retrieval and QA methods on a multi-hop benchmark.

    kag-neo4j eval musique --limit 50 --methods dense,ours
    kag-neo4j eval questions.json --corpus corpus.json --methods naive,ours --qa

The lead wires it with ``register(app)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.progress import Progress as RichProgressBar

from kag_neo4j.cli.common import console, err_console, reports_errors, settings_from
from kag_neo4j.cli.solver_options import parse_solver_options
from kag_neo4j.config import Settings
from kag_neo4j.errors import EvalError
from kag_neo4j.eval.runner import Progress, QuestionResult
from kag_neo4j.models.providers import llm_provider_names

__all__ = ["parse_llm_spec", "register"]

def parse_llm_spec(spec: str) -> dict[str, str]:
    """``provider:model``, ``provider`` or a bare model name -> settings overrides."""
    text = spec.strip()
    if not text:
        raise EvalError("--llm is empty; give provider:model (e.g. openai:gpt-4o-mini) or a model name")
    provider, sep, model = text.partition(":")
    if provider in llm_provider_names():
        return {"llm_provider": provider, **({"llm_model": model} if sep and model else {})}
    return {"llm_model": text}


class RichProgress(Progress):
    def __init__(self) -> None:
        self.bar = RichProgressBar(
            TextColumn("[bold]eval[/]"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[last]}"),
            TimeElapsedColumn(), TimeRemainingColumn(), console=err_console, transient=False,
        )
        self.task: Any = None

    def start(self, total: int, done: int) -> None:
        self.bar.start()
        self.task = self.bar.add_task("eval", total=total, completed=done, last="")

    def advance(self, method: str, row: QuestionResult) -> None:
        status = "error" if row.error else f"R@5 {row.recall.get('5')}" if row.recall else f"F1 {row.f1}"
        self.bar.update(self.task, advance=1, last=f"{method} {row.question_id[:18]} {status}")

    def stop(self) -> None:
        self.bar.stop()


def _settings(ctx: typer.Context, llm: str | None) -> Settings:
    settings = settings_from(ctx)
    if llm:
        settings = settings.model_copy(update=parse_llm_spec(llm))
    return settings


def run_command(
    ctx: typer.Context,
    dataset: str,
    corpus: Path | None,
    limit: int | None,
    methods: str | None,
    qa: bool,
    llm: str | None,
    data_dir: Path | None,
    out: Path | None,
    fresh: bool,
    replace: bool,
    build: str,
    k: int,
    answer_k: int,
    solver: Sequence[str] = (),
) -> None:
    from kag_neo4j.eval.datasets import (
        load_corpus,
        load_questions,
        missing_gold,
        resolve_dataset,
    )
    from kag_neo4j.eval.loading import BuildMode, ensure_corpus_loaded
    from kag_neo4j.eval.methods import MethodContext, build_methods, parse_methods
    from kag_neo4j.eval.report import (
        link_lines,
        outcome_lines,
        plan_lines,
        rich_table,
        stage_lines,
        step_lines,
        write_reports,
    )
    from kag_neo4j.eval.runner import run_eval
    from kag_neo4j.models import build_embedder, build_llm
    from kag_neo4j.models.usage import Usage
    from kag_neo4j.solver.projection import graph_version
    from kag_neo4j.store import cypher, migrations
    from kag_neo4j.store.database import Database

    if build not in ("light", "full"):
        raise EvalError(f"--build must be light or full, got {build!r}")
    mode: BuildMode = "full" if build == "full" else "light"
    solver_config = parse_solver_options(solver)
    qa = qa or llm is not None
    settings = _settings(ctx, llm)
    names = parse_methods(methods, qa=qa)
    files = resolve_dataset(dataset, corpus=corpus, data_dir=data_dir)
    questions = load_questions(files.questions, name=files.name, limit=limit)
    passages = load_corpus(files.corpus)
    lost = missing_gold(questions, passages)
    if lost:
        err_console.print(f"[yellow]warning:[/] {len(lost)} gold passage(s) are not in {files.corpus.name} "
                          f"(e.g. {lost[0][1]!r} of question {lost[0][0]}); they count as misses")
    console.print(f"{questions.name}: {len(questions.questions)} questions ({questions.format}), "
                  f"{len(passages.passages)} passages in {files.corpus}", highlight=False)

    usage = Usage()
    embedder = build_embedder(settings)
    llm_model = build_llm(settings, usage=usage) if qa or build == "full" else None
    with Database.connect(settings) as db:
        migrations.migrate(db, embedding_dimension=embedder.dimension)
        status = ensure_corpus_loaded(db, passages, settings=settings, embedder=embedder, llm=llm_model, mode=mode,
                                      replace=replace, log=lambda m: err_console.print(m, highlight=False))
        console.print(
            f"knowledge base: {'reused' if status.reused else 'loaded'} {status.documents} passages, "
            f"{status.chunks} chunks ({status.seconds:.1f} s)", highlight=False)
        usage.reset()  # the table counts question-time LLM use only
        context = MethodContext(db=db, embedder=embedder, settings=settings, k=k, answer_k=answer_k,
                                llm_factory=(lambda: llm_model) if llm_model is not None else None, usage=usage,
                                solver=solver_config)
        chosen = build_methods(names, context, qa=qa)
        info_row = db.read(cypher.query("eval/server_info" if db.capabilities.gds else "eval/server_info_no_gds"))
        version = graph_version(db)
        info = {"neo4j": info_row[0]["version"] if info_row else None, "gds": info_row[0].get("gds") if info_row else None,
                "graph_version": version, "load": status}
        setup = {"questions": questions.sha256, "corpus": passages.sha256, "embedder": embedder.model_id,
                 "llm": llm_model.model_id if llm_model is not None and qa else None, "graph_version": version,
                 "loaded_at": status.loaded_at,
                 # the database's store id, not its address: a local server may come back on another port
                 "database": f"{db.database}@{info_row[0]['store_id'] if info_row else db.connection.uri}",
                 "k": k, "answer_k": answer_k}
        run = run_eval(questions, passages, chosen, context, cache_root=settings.home / "eval", setup=setup,
                       fresh=fresh, progress=RichProgress(), info=info,
                       log=lambda m: err_console.print(m, highlight=False, markup=False))
    if qa and llm_model is not None:
        run.llm = llm_model.model_id
    console.print(rich_table(run))
    for line in outcome_lines(run) + step_lines(run) + plan_lines(run) + stage_lines(run) + link_lines(run):
        console.print(line, highlight=False)
    for note in run.notes:
        err_console.print(f"[yellow]note:[/] {note}", highlight=False)
    written = write_reports(run, out or Path("eval-results") / questions.name)
    for kind, path in written.items():
        console.print(f"{kind}: {path}", highlight=False)
    if "chart" not in written:
        err_console.print("no chart: matplotlib is not installed (pip install 'matplotlib>=3.8,<4')")


def register(app: typer.Typer) -> None:
    """Add the ``eval`` command to the ``kag-neo4j`` app."""

    @app.command("eval")
    @reports_errors
    def eval_command(
        ctx: typer.Context,
        dataset: Annotated[str, typer.Argument(
            help="musique, hotpotqa or 2wiki (from --data-dir), a dataset folder, or a question file with --corpus.",
            show_default=False)],
        corpus: Annotated[Path | None, typer.Option(
            "--corpus", help="Passages of a question file: a list of {title, text} or {title: sentence list}.")] = None,
        limit: Annotated[int | None, typer.Option("--limit", "-n", help="Evaluate the first N questions.")] = None,
        methods: Annotated[str | None, typer.Option(
            "--methods", "-m",
            help="Comma-separated: dense, fulltext, dense+ppr, ours, graphrag-vector, graphrag-hybrid, naive, "
                 "ours-solver (the solver's own recall; needs --llm) "
                 "(default: every retrieval method but ours-solver, plus naive with --qa).")] = None,
        qa: Annotated[bool, typer.Option("--qa/--no-qa", help="Also answer the questions with the LLM (EM / F1).")] = False,
        llm: Annotated[str | None, typer.Option(
            "--llm", help="The LLM for QA: provider:model (" + ", ".join(f"{name}:..." for name in llm_provider_names())
                          + ", or a provider you registered) or a model name; implies --qa.")] = None,
        data_dir: Annotated[Path | None, typer.Option(
            "--data-dir", envvar="KAG_BENCHMARKS_DIR",
            help="Benchmarks folder (default ../shared/benchmarks when it exists).")] = None,
        out: Annotated[Path | None, typer.Option(
            "--out", help="Where report.md, results.json and chart.png go (default eval-results/<dataset>).")] = None,
        fresh: Annotated[bool, typer.Option("--fresh", help="Ignore cached per-question results.")] = False,
        replace: Annotated[bool, typer.Option(
            "--replace", help="Empty the database when it holds another corpus, and load this one.")] = False,
        build: Annotated[str, typer.Option(
            "--build", help="How a missing corpus is loaded: light (no LLM) or full.")] = "light",
        k: Annotated[int, typer.Option(
            "--k", min=5, help="Chunks retrieved per question (recall@2/@5 read the first distinct passages).")] = 10,
        answer_k: Annotated[int, typer.Option("--answer-k", min=1, help="Passages NaiveRAG gives the LLM.")] = 5,
        solver: Annotated[list[str] | None, typer.Option(
            "--solver", help="A solver knob for ours and ours-solver, KEY=VALUE (repeatable; SolverConfig's fields, "
                             "e.g. graph_confidence=0.6 or retrieval.k_ppr=10).")] = None,
    ) -> None:
        """Compare retrieval (Recall@2/@5) and QA (EM/F1, LLM calls, tokens, latency) methods."""
        run_command(ctx, dataset, corpus, limit, methods, qa, llm, data_dir, out, fresh, replace, build, k, answer_k,
                    solver or [])

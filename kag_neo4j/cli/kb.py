"""`kag-neo4j kb list | create NAME | drop NAME --yes`: the knowledge bases of one Neo4j database.

Every other command works in the knowledge base named by ``--kb`` / ``KAG_KB`` (``default``)."""

from __future__ import annotations

import json

import typer
from rich.table import Table

from kag_neo4j.cli.common import connect, console, embedding_dimension, reports_errors, settings_from
from kag_neo4j.store import kb_admin, migrations
from kag_neo4j.store.knowledge_base import check_kb_name

app = typer.Typer(help="Knowledge bases in one Neo4j database: list, create, drop.", no_args_is_help=True)


@app.command("list")
@reports_errors
def list_command(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object per knowledge base."),
) -> None:
    """The knowledge bases of the database, with their sizes."""
    with connect(ctx) as db:
        summaries = kb_admin.list_kbs(db)
    if as_json:
        for summary in summaries:
            console.print(json.dumps(summary.model_dump()), highlight=False, markup=False)
        return
    table = Table(title=f"knowledge bases in {db.database!r}")
    for column in ("name", "documents", "chunks", "entities", "migrated"):
        table.add_column(column)
    for s in summaries:
        table.add_row(s.name, str(s.documents), str(s.chunks), str(s.entities), "yes" if s.migrated else "no")
    console.print(table)


@app.command("create")
@reports_errors
def create_command(ctx: typer.Context, name: str = typer.Argument(..., help="The new knowledge base's name.")) -> None:
    """Create the knowledge base NAME: its constraints and indexes (the migrations, applied in it)."""
    check_kb_name(name)
    dimension = embedding_dimension(settings_from(ctx))
    with connect(ctx) as db:
        report = migrations.migrate(db.in_kb(name), embedding_dimension=dimension)
    state = f"applied {len(report.applied)} migration(s)" if report.applied else "it already existed"
    console.print(f"knowledge base {name!r}: {state}; use it with `--kb {name}` or KAG_KB={name}", highlight=False)


@app.command("drop")
@reports_errors
def drop_command(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="The knowledge base to drop (not `default`)."),
    yes: bool = typer.Option(False, "--yes", help="Drop it: its documents, graph, runs, indexes and projections."),
) -> None:
    """Drop the knowledge base NAME and everything in it; other knowledge bases are not touched."""
    check_kb_name(name)
    if not yes:
        console.print(f"this deletes everything in knowledge base {name!r}; run again with --yes to drop it")
        raise typer.Exit(2)
    with connect(ctx) as db:
        report = kb_admin.drop_kb(db, name)
    console.print(
        f"dropped knowledge base {name!r}: {report.labels} label(s) of nodes, {report.constraints} constraint(s), "
        f"{report.indexes} index(es), {report.projections} projection(s)", highlight=False,
    )

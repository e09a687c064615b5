"""`kag-neo4j migrate [--dry-run]` and `kag-neo4j migrate status`."""

from __future__ import annotations

import typer
from rich.table import Table

from kag_neo4j.cli.common import connect, console, embedding_dimension, reports_errors, settings_from
from kag_neo4j.store import migrations

app = typer.Typer(help="Prepare the database: constraints, fulltext and vector indexes.", invoke_without_command=True)


@app.callback()
@reports_errors
def migrate(
    ctx: typer.Context,
    dry_run: bool = typer.Option(False, "--dry-run", help="Show what would be applied; change nothing."),
) -> None:
    """Apply pending migrations once each, in order."""
    if ctx.invoked_subcommand is not None:
        return
    settings = settings_from(ctx)
    dimension = embedding_dimension(settings)
    with connect(ctx) as db:
        if dry_run:
            migrations.check_vector_dimensions(db, dimension)
            report = migrations.plan(db)
            if not report.pending:
                console.print(f"nothing to apply ({len(report.already)} migrations already applied)")
            for migration in report.pending:
                console.print(f"[bold]would apply {migration.filename}[/] (vector dimension {dimension}):")
                for statement in migration.statements():
                    console.print(f"  {statement};", highlight=False, markup=False)
            return
        report = migrations.migrate(
            db, embedding_dimension=dimension,
            on_apply=lambda m: console.print(f"applying {m.filename} …"),
        )
        if report.applied:
            console.print(f"applied {len(report.applied)} migration(s); vector indexes use {dimension} dimensions")
        else:
            console.print(f"up to date: nothing to apply ({len(report.already)} migrations already applied)")


@app.command("status")
@reports_errors
def status(ctx: typer.Context) -> None:
    """List applied and pending migrations."""
    with connect(ctx) as db:
        report = migrations.plan(db)
    table = Table(title="migrations")
    for column in ("version", "name", "state", "applied at", "statements", "checksum"):
        table.add_column(column)
    for done in report.already:
        table.add_row(f"{done.version:04d}", done.name, "applied", done.applied_at, str(done.statements), done.checksum[:12])
    for pending in report.pending:
        table.add_row(f"{pending.version:04d}", pending.name, "[yellow]pending[/]", "", str(len(pending.statements())), pending.checksum[:12])
    console.print(table)

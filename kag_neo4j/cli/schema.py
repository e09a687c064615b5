"""``kag-neo4j schema``: validate, apply and show SPG schemas."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from kag_neo4j.cli.common import make_console

from kag_neo4j.config import Settings, load_settings
from kag_neo4j.errors import ConfigError, KagError, Neo4jUnavailableError
from kag_neo4j.resources import resource_dir
from kag_neo4j.schema.apply import ApplyReport, DdlAction, apply_schema, needs_dimensions
from kag_neo4j.schema.metagraph import read_schema, stored_namespaces
from kag_neo4j.schema.models import ResolvedSchema
from kag_neo4j.schema.show import schema_view
from kag_neo4j.schema.validate import load_schema
from kag_neo4j.store.database import Database

app = typer.Typer(
    help="SPG schemas: validate a .schema file, apply it to Neo4j as a meta-graph with its "
    "constraints and indexes, and show what is stored.",
    no_args_is_help=True,
)

DEFAULT_DIMENSIONS = 384

FileArg = Annotated[
    Path,
    typer.Argument(help="The .schema file (or the name of a shipped example, e.g. CompanyFinance).",
                   show_default=False),
]
NamespaceOpt = Annotated[
    str | None,
    typer.Option("--namespace", "-n", help="Use this namespace instead of the file's (fills in {{namespace}})."),
]


def _console() -> Console:
    return make_console()


def _fail(message: str) -> typer.Exit:
    make_console(stderr=True).print(f"[bold red]error:[/] {message}", highlight=False, markup=True)
    return typer.Exit(code=1)


def resolve_schema_path(file: Path) -> Path:
    """``file`` itself, or a schema shipped in ``schema/`` when ``file`` is a bare name like ``CompanyFinance``."""
    if file.exists() or file.parent != Path("."):
        return file
    try:
        shipped = resource_dir("schema") / (file.name if file.suffix == ".schema" else f"{file.name}.schema")
    except FileNotFoundError:
        return file
    return shipped if shipped.is_file() else file


def _load(file: Path, namespace: str | None) -> ResolvedSchema:
    schema = load_schema(str(resolve_schema_path(file)), namespace=namespace)
    for warning in schema.warnings:
        make_console(stderr=True).print(f"warning: {warning}", markup=False, highlight=False)
    return schema


def _embedder_dimension() -> Callable[[Settings], int] | None:
    """``kag_neo4j.models.embedder_dimension`` (imported when needed: it loads no model SDK)."""
    from kag_neo4j.models.factory import embedder_dimension

    return embedder_dimension


def embedding_dimensions(settings: Settings, flag: int | None) -> int:
    """The vector dimension: the configured embedder's, else ``--dimensions``, else settings, else 384."""
    from_embedder = _embedder_dimension()
    if from_embedder is not None:
        dimension = int(from_embedder(settings))
        if flag is not None and flag != dimension:
            raise ConfigError(
                f"--dimensions {flag} does not match the configured embedder ({dimension} dimensions); "
                "drop the flag or configure another embedder"
            )
        return dimension
    return flag or settings.embedding_dimensions or DEFAULT_DIMENSIONS


_METAGRAPH_DONE = {
    "create": "created the meta-graph",
    "update": "replaced the stored meta-graph",
    "unchanged": "meta-graph unchanged",
}
_METAGRAPH_PLANNED = {
    "create": "would create the meta-graph",
    "update": "would replace the stored meta-graph",
    "unchanged": "meta-graph unchanged",
    "unknown": "would write the meta-graph (database not checked)",
}


def _print_report(console: Console, report: ApplyReport) -> None:
    meta = (_METAGRAPH_PLANNED if report.dry_run else _METAGRAPH_DONE)[report.metagraph]
    console.print(f"namespace {report.namespace}: {meta}", markup=False, highlight=False)
    for statement in report.statements:
        if statement.action is not DdlAction.EXISTS or report.dry_run:
            console.print("  " + statement.describe(), markup=False, highlight=False)
    existing = len(report.with_action(DdlAction.EXISTS))
    pending = len(report.statements) - existing
    verb = "to create" if report.dry_run else "created"
    console.print(f"constraints and indexes: {pending} {verb}, {existing} already present", highlight=False)
    if not report.changed:
        console.print("nothing to do: the schema is already applied", highlight=False)


@app.command("validate")
def validate_command(file: FileArg, namespace: NamespaceOpt = None) -> None:
    """Parse and validate FILE (no database); print its types and relations."""
    try:
        schema = _load(file, namespace)
    except KagError as exc:
        raise _fail(str(exc)) from exc
    console = _console()
    console.print(schema_view(schema))
    console.print(f"{file}: valid ({len(schema.types)} types, {len(schema.relations())} relations)",
                  markup=False, highlight=False)


@app.command("apply")
def apply_command(
    file: FileArg,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would change; write nothing.")] = False,
    namespace: NamespaceOpt = None,
    dimensions: Annotated[
        int | None,
        typer.Option("--dimensions", min=1, max=4096,
                     help="Vector index dimension when no embedder is configured (default: settings, else 384)."),
    ] = None,
) -> None:
    """Write FILE into Neo4j: meta-graph, uniqueness constraints, fulltext/vector indexes."""
    console = _console()
    try:
        schema = _load(file, namespace)
        settings = load_settings()
        dims = embedding_dimensions(settings, dimensions) if needs_dimensions(schema) else None
        try:
            db: Database | None = Database.connect(settings)
        except Neo4jUnavailableError as exc:
            if not dry_run:
                raise
            make_console(stderr=True).print(f"note: {exc}; planning against an empty database", markup=False,
                                       highlight=False, soft_wrap=True)
            db = None
        try:
            report = apply_schema(db, schema, dimensions=dims, dry_run=dry_run)
        finally:
            if db is not None:
                db.close()
    except KagError as exc:
        raise _fail(str(exc)) from exc
    _print_report(console, report)


@app.command("show")
def show_command(
    namespace: Annotated[str | None, typer.Option("--namespace", "-n", help="Only this namespace.")] = None,
) -> None:
    """Print the schema(s) stored in Neo4j: types and relations."""
    console = _console()
    try:
        with Database.connect(load_settings()) as db:
            stored = stored_namespaces(db)
            if namespace is not None and namespace not in stored:
                raise _fail(f"namespace {namespace!r} has no stored schema (stored: {', '.join(stored) or 'none'}); "
                            "apply it with `kag-neo4j schema apply FILE`")
            schemas = [read_schema(db, name) for name in ([namespace] if namespace else stored)]
    except KagError as exc:
        raise _fail(str(exc)) from exc
    if not schemas:
        console.print("no schema stored yet; run `kag-neo4j schema apply FILE`", markup=False, highlight=False)
        return
    for schema in schemas:
        if schema is not None:
            console.print(schema_view(schema))

"""The `kag-neo4j` command line."""

from __future__ import annotations

from pathlib import Path

import typer

from kag_neo4j import __version__
from kag_neo4j.cli import ask, eval as eval_cli, kb, load, mcp, migrate, models, rules, schema, server

app = typer.Typer(
    name="kag-neo4j",
    help="Knowledge Augmented Generation that reasons inside Neo4j.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)
app.add_typer(server.app, name="server")
app.add_typer(migrate.app, name="migrate")
app.add_typer(schema.app, name="schema")
app.add_typer(models.app, name="models")
app.add_typer(rules.app, name="rules")
app.add_typer(kb.app, name="kb")
load.register(app)
ask.register(app)
eval_cli.register(app)
mcp.register(app)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"kag-neo4j {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    ctx: typer.Context,
    uri: str | None = typer.Option(None, "--uri", help="Neo4j URI (bolt://, neo4j://, neo4j+s://); overrides NEO4J_URI."),
    username: str | None = typer.Option(None, "--username", help="Overrides NEO4J_USERNAME."),
    password: str | None = typer.Option(None, "--password", help="Overrides NEO4J_PASSWORD."),
    database: str | None = typer.Option(None, "--database", help="Overrides NEO4J_DATABASE."),
    kb: str | None = typer.Option(None, "--kb", help="The knowledge base to work in (KAG_KB; default: `default`)."),
    home: Path | None = typer.Option(None, "--home", help="Cache directory for the local server and models (KAG_HOME)."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    """Global flags; they win over the environment and kag.toml."""
    ctx.obj = {
        "neo4j_uri": uri, "neo4j_username": username, "neo4j_password": password,
        "neo4j_database": database, "kb": kb, "home": home,
    }


def main() -> None:
    app()

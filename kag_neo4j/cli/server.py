"""`kag-neo4j server start | stop | status | uri | password | logs`: the local Neo4j + GDS + APOC."""

from __future__ import annotations

import time

import typer
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from kag_neo4j.cli.common import console, reports_errors, settings_from
from kag_neo4j.config import Settings
from kag_neo4j.store import server as local_server
from kag_neo4j.store.provision import is_provisioned

app = typer.Typer(help="Run a local Neo4j 5.26 with GDS and APOC (no Docker needed).", no_args_is_help=True)


@app.command()
@reports_errors
def start(
    ctx: typer.Context,
    gds: bool = typer.Option(True, "--gds/--no-gds", help=(
        "Load the GDS plugin; --no-gds starts a Neo4j with APOC only, like Aura Free or a plain server "
        "(Personalized PageRank then runs in plain Cypher). Same as KAG_SERVER_GDS=false.")),
    browser: bool = typer.Option(False, "--browser", help=(
        "Also serve Neo4j Browser over HTTP on 127.0.0.1 (port 7474 or the next free one; fetched once from "
        "Maven Central) to open reasoning paths (`kag-neo4j trace RUN --browser`). Same as KAG_SERVER_BROWSER=true.")),
) -> None:
    """Provision (first time, from Maven Central) and start the local server; wait until it answers."""
    settings = settings_from(ctx)
    if not gds:
        settings = settings.model_copy(update={"server_gds": False})
    if browser:
        settings = settings.model_copy(update={"server_browser": True})
    if settings.neo4j_uri:
        console.print(f"NEO4J_URI is set ({settings.neo4j_uri}): kag-neo4j uses that Neo4j, no local server needed.")
        return
    current = local_server.status(settings)
    if current.running and current.state:
        console.print(f"already running on [bold]{current.state.uri}[/] (pid {current.state.pid})")
        if settings.server_browser and current.state.browser_url is None:
            console.print("[yellow]without Neo4j Browser: stop it (`kag-neo4j server stop`) and start it again "
                          "with --browser[/]")
        _print_browser(current.state)
        _print_auth(settings)
        return
    if current.state is not None:
        console.print(f"[yellow]{current.note}[/]")
    first = not is_provisioned(settings)
    began = time.monotonic()
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console, transient=True) as progress:
        task = progress.add_task(
            "fetching Neo4j, GDS and APOC from Maven Central (first start only)" if first else "starting Neo4j", total=None
        )
        downloaded = 0

        def on_download(name: str) -> None:
            nonlocal downloaded
            downloaded += 1
            progress.update(task, description=f"fetched {downloaded} artifacts from Maven Central: {name}")

        def on_wait(seconds: float) -> None:
            progress.update(task, description=f"waiting for Bolt ({seconds:.0f} s)")

        state, _ = local_server.start(settings, on_download=on_download, on_wait=on_wait)
    versions = local_server.check_plugins(state.uri, local_server.instance_auth(settings), gds=local_server.has_gds(state))
    plugins = f"GDS {versions['gds']}" if versions["gds"] else "no GDS"
    console.print(
        f"Neo4j {versions['neo4j']} with {plugins} and APOC {versions['apoc']} running on "
        f"[bold]{state.uri}[/] (pid {state.pid}) in {time.monotonic() - began:.1f} s"
    )
    _print_browser(state)
    _print_auth(settings)


def _print_browser(state: local_server.ServerState) -> None:
    if state.browser_url is not None:  # plain echo: a wrapped URL cannot be clicked or copied
        typer.echo(f"Neo4j Browser: {state.browser_url}")


def _print_auth(settings: Settings) -> None:
    """Whether the running instance has authentication on (never the password itself)."""
    if local_server.credentials(settings) is None:
        console.print("[yellow]authentication is off: this server was started before kag-neo4j turned it on; "
                      "restart it (`kag-neo4j server stop`, then `start`) to give it a password[/]")
    else:
        console.print(f"authentication on: user neo4j, password kept in {local_server.credentials_path(settings)} "
                      "(`kag-neo4j server password` prints it; kag-neo4j commands need no configuration)")


@app.command()
@reports_errors
def stop(ctx: typer.Context, timeout: float = typer.Option(60.0, help="Seconds to wait before killing.")) -> None:
    """Stop the local server (SIGTERM, bounded wait, then kill)."""
    console.print(local_server.stop(settings_from(ctx), timeout=timeout))


@app.command()
@reports_errors
def status(ctx: typer.Context) -> None:
    """Is the local server running, and where."""
    settings = settings_from(ctx)
    current = local_server.status(settings)
    console.print(current.note)
    if current.running and current.state:
        auth = local_server.instance_auth(settings)
        versions = local_server.check_plugins(current.state.uri, auth, gds=local_server.has_gds(current.state))
        plugins = f"GDS {versions['gds']}" if versions["gds"] else "no GDS"
        console.print(f"Neo4j {versions['neo4j']}, {plugins}, APOC {versions['apoc']}; data in {current.state.instance}")
        _print_browser(current.state)
        _print_auth(settings)
    else:
        raise typer.Exit(3)


@app.command()
@reports_errors
def uri(ctx: typer.Context) -> None:
    """Print the Bolt URI of the running local server (for NEO4J_URI=$(kag-neo4j server uri))."""
    state = local_server.read_state(settings_from(ctx))
    if state is None:
        console.print("the local server is not running; start it with `kag-neo4j server start`")
        raise typer.Exit(3)
    typer.echo(state.uri)


@app.command()
@reports_errors
def password(ctx: typer.Context) -> None:
    """Print the password of the local server's neo4j user (kept owner-only in its instance directory).

    kag-neo4j itself needs no password configured; this is for other clients (cypher-shell, Browser,
    drivers): NEO4J_PASSWORD=$(kag-neo4j server password).
    """
    settings = settings_from(ctx)
    found = local_server.credentials(settings)
    if found is None:
        console.print(
            f"the local server {settings.server_name!r} has no password yet: `kag-neo4j server start` creates one"
        )
        raise typer.Exit(3)
    typer.echo(found.password.get_secret_value())


@app.command()
@reports_errors
def logs(
    ctx: typer.Context,
    lines: int = typer.Option(50, "--lines", "-n", help="How many lines from the end."),
    follow: bool = typer.Option(False, "--follow", "-f", help="Keep printing new lines."),
) -> None:
    """Print the end of the local server's log."""
    settings = settings_from(ctx)
    path = local_server.console_log(settings)
    for line in local_server.log_tail(settings, lines):
        console.print(line, highlight=False, markup=False)
    if follow and path.exists():
        with path.open(encoding="utf-8", errors="replace") as handle:
            handle.seek(0, 2)
            while True:
                line = handle.readline()
                if line:
                    console.print(line.rstrip("\n"), highlight=False, markup=False)
                else:
                    time.sleep(0.5)

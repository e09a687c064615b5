"""``kag-neo4j mcp``: serve the knowledge graph to MCP clients (stdio by default, or streamable HTTP)."""

from __future__ import annotations

from typing import Annotated

import typer

from kag_neo4j.cli.common import print_error, quiet_library_logs, settings_from


def mcp_command(
    ctx: typer.Context,
    http: Annotated[bool, typer.Option("--http", help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio.")] = False,
    host: Annotated[str, typer.Option("--host", help="HTTP host to bind (with --http).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="HTTP port (with --http).")] = 8000,
    allow_writes: Annotated[bool, typer.Option("--allow-writes", help="Offer the `load` tool, which writes to the graph "
                                               "(off by default: only read tools are listed).")] = False,
) -> None:
    """Serve ask, search, trace and schema as MCP tools (and load with --allow-writes).

    Settings come from NEO4J_* / KAG_* and kag.toml like every command; Neo4j is connected on the
    first tool call. See docs/mcp.md for a client configuration.
    """
    from kag_neo4j.errors import KagError
    from kag_neo4j.mcp.server import Backend, build_server

    quiet_library_logs()
    try:
        backend = Backend(settings_from(ctx))
    except KagError as exc:
        print_error(exc)
        raise typer.Exit(1) from exc
    server = build_server(backend, allow_writes=allow_writes)
    try:
        if http:
            server.run("streamable-http", host=host, port=port)
        else:
            server.run("stdio")
    except KeyboardInterrupt:
        pass
    finally:
        backend.close()


def register(app: typer.Typer) -> None:
    """Add ``mcp`` to the main ``kag-neo4j`` app."""
    app.command("mcp")(mcp_command)

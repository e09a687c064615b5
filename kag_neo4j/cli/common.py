"""What every command shares: the console, settings from the global flags, error reporting."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import typer
from rich.console import Console

from kag_neo4j.config import Settings, load_settings
from kag_neo4j.errors import KagError
from kag_neo4j.store.database import Database


def make_console(*, stderr: bool = False) -> Console:
    """A console that wraps text only on a terminal: piped or captured output (scripts, tests,
    `$(kag-neo4j server uri)`) keeps every line whole, whatever the width or path length."""
    probe = Console(stderr=stderr)
    return Console(stderr=stderr, soft_wrap=not probe.is_terminal)


console = make_console()
err_console = make_console(stderr=True)

P = ParamSpec("P")
R = TypeVar("R")


def settings_from(ctx: typer.Context) -> Settings:
    """Settings built from the global flags stored by the main callback (flags > env > kag.toml)."""
    flags: dict[str, Any] = (ctx.find_root().obj or {}) if ctx else {}
    return load_settings(**flags)


def connect(ctx: typer.Context) -> Database:
    return Database.connect(settings_from(ctx))


def embedding_dimension(settings: Settings) -> int:
    """The configured embedder's dimension, known before any vector index is created."""
    if settings.embedding_dimensions:
        return settings.embedding_dimensions
    from kag_neo4j.models import embedder_dimension

    return embedder_dimension(settings)


def reports_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turn kag-neo4j's own errors into a red message and exit code 1 instead of a traceback."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except KagError as exc:
            err_console.print(f"[bold red]error:[/] {exc}", highlight=False, markup=True)
            raise typer.Exit(1) from exc

    return wrapper

"""What every command shares: the console, settings from the global flags, error reporting.

Exit codes of every command (see :data:`EXIT_CODES`): 0 done; 1 failed, with one ``error:`` line
naming the input and the fix (a :class:`~kag_neo4j.errors.KagError`, also a lost or failing
Neo4j: nothing half-written); 2 usage error; 3 ``server status``: not running; 4 partly done:
the inputs named on stderr were refused (unreadable files, unknown document ids) and every other
input was processed; 130 interrupted (completed work is kept).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

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

#: exit code -> meaning, for every command
EXIT_CODES: dict[int, str] = {
    0: "done",
    1: "failed: one `error:` line names the input and the fix (nothing is half-written)",
    2: "usage error (unknown option, bad value)",
    3: "`server status`: the server is not running",
    4: "partly done: the inputs named on stderr were refused, every other input was processed",
    130: "interrupted (Ctrl-C or SIGTERM); completed work is kept",
}
EXIT_PARTIAL = 4

#: libraries whose warnings the commands report themselves, in their own words
_QUIET_LOGGERS = ("neo4j", "pypdf", "kag_neo4j.builder.readers")

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


def quiet_library_logs() -> None:
    """Silence the warnings of libraries whose outcome a command reports itself (the driver's
    "transaction will be retried", pypdf's parser notes, the readers' per-file lines)."""
    for name in _QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)


def print_error(message: object) -> None:
    """One ``error:`` line on stderr, never wrapped (scripts can grep it)."""
    err_console.print(f"[bold red]error:[/] {escape(str(message))}", highlight=False, markup=True)


def print_note(prefix: str, message: object) -> None:
    """One unwrapped ``prefix message`` line on stderr (a refused file, a warning, ...)."""
    err_console.print(f"{prefix} {message}", highlight=False, markup=False)


def reports_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turn kag-neo4j's own errors into a red message and exit code 1 instead of a traceback."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        quiet_library_logs()
        try:
            return func(*args, **kwargs)
        except KagError as exc:
            print_error(exc)
            raise typer.Exit(1) from exc

    return wrapper

"""The MCP server: :mod:`kag_neo4j.mcp.tools` served by the official SDK's ``MCPServer``.

One :class:`~kag_neo4j.api.KAG` serves every call; it connects on the first call (so the server
starts, and lists its tools, while Neo4j is still coming up) and closes with the server. A bad
argument, or any :class:`~kag_neo4j.errors.KagError` (an unknown run id, Neo4j unavailable, a
wrong vector dimension), becomes a tool error (``isError``) carrying the message, and the server
keeps serving.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Annotated, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

from kag_neo4j import __version__
from kag_neo4j.api import KAG
from kag_neo4j.config import Settings
from kag_neo4j.errors import KagError
from kag_neo4j.mcp import tools

__all__ = ["Backend", "build_server"]

T = TypeVar("T")

_READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
_ASK = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
_LOAD = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False)

_INSTRUCTIONS = (
    "Knowledge Augmented Generation over a Neo4j knowledge graph. `search` returns the chunks hybrid retrieval "
    "(vector + fulltext + Personalized PageRank) finds for a question, without a language model; `ask` answers "
    "with citations and stores the reasoning as a run; `trace` shows a run's steps and facts; `schema` lists the "
    "graph's types and relations."
)


class Backend:
    """The settings and the one :class:`KAG` every tool call shares, opened on first use."""

    def __init__(self, settings: Settings, factory: Callable[[Settings], KAG] = KAG.from_settings) -> None:
        self.settings = settings
        self._factory = factory
        self._kag: KAG | None = None
        self._lock = threading.Lock()

    def kag(self) -> KAG:
        with self._lock:
            if self._kag is None:
                self._kag = self._factory(self.settings)
            return self._kag

    def call(self, work: Callable[[KAG], T]) -> T:
        """Run ``work`` on the KAG; the product's own errors become tool errors with their message."""
        try:
            return work(self.kag())
        except (KagError, ValueError) as exc:
            raise ToolError(str(exc)) from exc

    def close(self) -> None:
        with self._lock:
            if self._kag is not None:
                self._kag.close()
                self._kag = None


Question = Annotated[str, Field(description="The question, in English or Chinese.")]


def build_server(backend: Backend, *, allow_writes: bool = False) -> MCPServer:
    """An ``MCPServer`` with ``ask``, ``search``, ``trace`` and ``schema``; ``load`` too when ``allow_writes``."""
    server = MCPServer("kag-neo4j", title="kag-neo4j", version=__version__, instructions=_INSTRUCTIONS)

    @server.tool(annotations=_ASK)
    def ask(
        question: Question,
        mode: Annotated[Literal["static", "iterative"], Field(
            description="static: plan once, run independent steps concurrently; iterative: one step at a time")] = "static",
    ) -> tools.AskResult:
        """Answer a question over the knowledge graph: the answer, its citations (chunks), the KG facts it used and
        the run id of the stored reasoning (read it with `trace`)."""
        return backend.call(lambda kag: tools.ask(kag, question, mode))

    @server.tool(annotations=_READ_ONLY)
    def search(
        question: Question,
        k: Annotated[int, Field(description=f"How many chunks, 1 to {tools.MAX_K}.")] = 5,
        recipe: Annotated[str, Field(description="hybrid (default), dense, fulltext or dense+ppr.")] = "hybrid",
    ) -> tools.SearchToolResult:
        """Hybrid retrieval only, no language model: the top-k chunks for a question with their ids, fused score and
        their rank in each list (dense, fulltext, ppr) that found them."""
        return backend.call(lambda kag: tools.search(kag, question, k, recipe))

    @server.tool(annotations=_READ_ONLY)
    def trace(run_id: Annotated[str, Field(description="The run id `ask` returned.")]) -> tools.TraceResult:
        """A stored run: its steps (logical form, result, facts, what each used), the cited chunks, and the Neo4j
        Browser `:param` line and query that draw its reasoning path."""
        return backend.call(lambda kag: tools.trace(kag, run_id))

    @server.tool(annotations=_READ_ONLY)
    def schema() -> tools.SchemaResult:
        """The graph's entity types and relations (from the data and from the applied SPG schemas)."""
        return backend.call(tools.schema)

    if allow_writes:
        @server.tool(annotations=_LOAD)
        def load(
            paths: Annotated[list[str], Field(description="Files or folders on the server's machine.")],
            mode: Annotated[Literal["full", "light"], Field(
                description="full: one LLM extraction call per chunk; light: NER and co-occurrence, no LLM")] = "full",
        ) -> tools.LoadResult:
            """Load files into the knowledge graph (unchanged documents are skipped). Offered only because the server
            was started with --allow-writes."""
            return backend.call(lambda kag: tools.load(kag, backend.settings, paths, mode))

    return server

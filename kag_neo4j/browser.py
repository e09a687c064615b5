"""Neo4j Browser helpers for a stored run: the ``:param`` line, the path query and a style sheet.

``kag-neo4j trace RUN --browser`` prints all three; the MCP ``trace`` tool returns the first two.
The style sheet (GraSS, ``kag_neo4j/_resources/trace.grass``) colours and captions runs, steps,
chunks, documents, entities and concepts, and the relationships between them.
"""

from __future__ import annotations

from importlib import resources

from kag_neo4j.solver.trace import browser_query

__all__ = ["PARAM_NAME", "browser_query", "cypher_string", "param_line", "style_sheet"]

#: the parameter the Browser query reads (``$run_id`` in ``cypher/solver/trace_browser.cypher``)
PARAM_NAME = "run_id"

_ESCAPES = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def cypher_string(value: str) -> str:
    """``value`` as a single-quoted Cypher string literal on one line (quotes, backslashes and
    control characters escaped), safe to paste into a Browser command."""
    out = []
    for char in value:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F or char in "\u2028\u2029\u0085":
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return "'" + "".join(out) + "'"


def param_line(run_id: str) -> str:
    """The Browser command that sets the query's parameter: ``:param run_id => '<id>'``."""
    return f":param {PARAM_NAME} => {cypher_string(run_id)}"


def style_sheet() -> str:
    """The GraSS style sheet for trace graphs (drop it on Browser's style panel, see docs/solver.md)."""
    return resources.files("kag_neo4j._resources").joinpath("trace.grass").read_text(encoding="utf-8")

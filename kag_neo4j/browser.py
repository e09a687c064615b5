"""Neo4j Browser helpers for a stored run: the ``:param`` line, the path query and a style sheet.

``kag-neo4j trace RUN --browser`` prints all three; the MCP ``trace`` tool returns the first two.
The style sheet (GraSS, ``kag_neo4j/_resources/trace.grass``) colours and captions runs, steps,
chunks, documents, entities and concepts, and the relationships between them.
"""

from __future__ import annotations

import re
from importlib import resources

from kag_neo4j.solver.trace import browser_query
from kag_neo4j.store.knowledge_base import KnowledgeBase
from kag_neo4j.store.literals import cypher_string

__all__ = ["PARAM_NAME", "browser_query", "cypher_string", "param_line", "style_sheet"]

#: the parameter the Browser query reads (``$run_id`` in ``cypher/solver/trace_browser.cypher``)
PARAM_NAME = "run_id"


def param_line(run_id: str) -> str:
    """The Browser command that sets the query's parameter: ``:param run_id => '<id>'``."""
    return f":param {PARAM_NAME} => {cypher_string(run_id)}"


def style_sheet(kb: KnowledgeBase | None = None) -> str:
    """The GraSS style sheet for trace graphs (drop it on Browser's style panel, see docs/solver.md), its
    selectors naming the labels of the knowledge base ``kb`` (default: the default one)."""
    sheet = resources.files("kag_neo4j._resources").joinpath("trace.grass").read_text(encoding="utf-8")
    prefix = (kb or KnowledgeBase()).prefix
    return re.sub(r"(?m)^node\.(?=\w)", f"node.{prefix}", sheet) if prefix else sheet

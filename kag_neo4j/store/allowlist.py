"""The GDS and APOC procedures and functions the local server loads: exactly those kag-neo4j calls.

Neo4j loads no other plugin procedure or function (``dbms.security.procedures.allowlist``), and
only these may use the internal APIs GDS needs (``dbms.security.procedures.unrestricted``). A
unit test derives the calls from the repository's Cypher and Python and compares them with this
list, so a new ``gds.``/``apoc.`` call fails the tests until it is added here.
"""

from __future__ import annotations

#: every gds.* / apoc.* procedure or function kag-neo4j calls (sorted)
PLUGIN_CALLS: tuple[str, ...] = (
    "apoc.version",
    "gds.graph.drop",
    "gds.graph.list",
    "gds.graph.project",
    "gds.pageRank.stream",
    "gds.util.asNode",
    "gds.version",
)


def setting_value() -> str:
    """The value of the two ``dbms.security.procedures.*`` settings."""
    return ",".join(PLUGIN_CALLS)

"""``kag-neo4j mcp``: the knowledge graph as Model Context Protocol tools (see ``docs/mcp.md``).

:mod:`kag_neo4j.mcp.tools` holds what each tool does (plain functions over :class:`~kag_neo4j.api.KAG`,
pydantic results); :mod:`kag_neo4j.mcp.server` builds the official SDK's ``MCPServer`` from them.
"""

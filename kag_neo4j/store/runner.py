"""The slim executor question-time code depends on: run a named ``.cypher`` file with parameters.

Linking, hybrid retrieval, projection upkeep and custom ranked lists take a :class:`QueryRunner`
rather than a :class:`~kag_neo4j.store.database.Database`, so that whoever calls them decides
what happens around each query: :class:`~kag_neo4j.store.database.Database` runs it in a read
transaction and nothing else (untraced); the solver's runner
(:meth:`kag_neo4j.solver.runtime.Runtime.runner`) also writes it, with its parameters, into the
step's trace. The contract:

* ``name`` names ``<folder>/<name>.cypher`` (no templates); every value is a keyword parameter;
* the statement runs in a read transaction and its records come back as dicts;
* errors are the driver's (a ``ClientError`` for a bad query or a GDS failure) or a
  :class:`~kag_neo4j.errors.KagError` for a lost connection, as :meth:`Database.read` raises them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from kag_neo4j.resources import ResourceFolder

if TYPE_CHECKING:
    from kag_neo4j.store.database import Capabilities
    from kag_neo4j.store.knowledge_base import KnowledgeBase

__all__ = ["QueryRunner"]


class QueryRunner(Protocol):
    """Runs read queries named by their ``.cypher`` file (see the module docs)."""

    @property
    def database(self) -> str:
        """The Neo4j database the queries run in (GDS projections are named after it)."""
        ...

    @property
    def kb(self) -> KnowledgeBase:
        """The knowledge base the queries run in (its GDS projections are named after it too)."""
        ...

    @property
    def capabilities(self) -> Capabilities:
        """What the server offers (GDS or not), read once per connection."""
        ...

    def query(self, name: str, folder: ResourceFolder = "cypher", /, **params: Any) -> list[dict[str, Any]]:
        """Run ``<folder>/<name>.cypher`` with ``params`` in a read transaction."""
        ...

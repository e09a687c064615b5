"""Empty a database completely: data, constraints, indexes and GDS graphs (tests, benchmarks).

Only a database that carries the test marker, a ``(:KagTestDatabase)`` node, is ever emptied.
The marker is written by :func:`claim_database` on an *empty* database (the test fixtures do
this for a server they started, or for the one ``KAG_TEST_NEO4J_URI`` names), or on a database
with data only when the caller says the user agreed (a benchmark's ``--yes``). A database with
data and no marker — someone's knowledge graph — is refused, so a mistyped URI cannot wipe it.
"""

from __future__ import annotations

from kag_neo4j.errors import UnsafeResetError
from kag_neo4j.store import cypher
from kag_neo4j.store.database import Database
from kag_neo4j.store.kb_admin import empty_kb, kb_names

#: the label of the node that marks a database as disposable
TEST_MARKER = "KagTestDatabase"


def is_marked(db: Database) -> bool:
    """True when the database carries the test marker."""
    return int(db.read(cypher.query("store/test_marker"))[0]["markers"]) > 0


def claim_database(db: Database, *, reason: str, allow_data: bool = False) -> None:
    """Mark the database as disposable; refuse one that holds data unless ``allow_data``."""
    row = db.read(cypher.query("store/test_marker"))[0]
    if int(row["markers"]) == 0 and int(row["other_nodes"]) > 0 and not allow_data:
        raise UnsafeResetError(
            f"the database {db.database!r} at {db.connection.uri} holds data and carries no test marker; "
            "it is not emptied. Point KAG_TEST_NEO4J_URI at an empty database (or leave it unset: the "
            "tests then start their own local server)"
        )
    db.write(cypher.query("store/create_test_marker"), reason=reason)


def reset_database(db: Database) -> None:
    """Delete every node and relationship, drop every constraint, index and GDS graph (of every
    knowledge base).

    Raises :class:`UnsafeResetError` unless the database carries the test marker, which
    survives the reset.
    """
    if not is_marked(db):
        raise UnsafeResetError(
            f"refusing to empty the database {db.database!r} at {db.connection.uri}: it carries no "
            f"(:{TEST_MARKER}) marker, so it may be someone's data. Tests and benchmarks claim an empty "
            "database first (kag_neo4j.store.reset.claim_database)"
        )
    knowledge_bases = kb_names(db)  # before the nodes that name some of them go
    db.auto_commit(cypher.query("store/delete_all"))  # every knowledge base's
    for name in knowledge_bases:
        empty_kb(db.in_kb(name), data=False)
    if db.capabilities.gds:  # a server without GDS has no projections
        db.auto_commit(cypher.query("store/drop_gds_graphs"))

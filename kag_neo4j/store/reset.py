"""Empty a database completely: data, constraints, indexes and GDS graphs (tests, `kag-neo4j reset`)."""

from __future__ import annotations

from kag_neo4j.store import cypher
from kag_neo4j.store.database import Database
from kag_neo4j.store.identifiers import check_existing_name


def reset_database(db: Database) -> None:
    """Delete every node and relationship, drop kag's schema objects and every GDS graph."""
    db.auto_commit(cypher.query("store/delete_all"))
    for row in db.read(cypher.query("store/list_constraints")):
        db.auto_commit(cypher.render("store/drop_constraint", name=check_existing_name(row["name"])))
    for row in db.read(cypher.query("store/list_indexes")):
        db.auto_commit(cypher.render("store/drop_index", name=check_existing_name(row["name"])))
    db.auto_commit(cypher.query("store/drop_gds_graphs"))




"""The GDS projection Personalized PageRank runs on, kept in step with writes.

The builder bumps ``(:KagMeta {key: 'graph'}).version`` after every load or delete. The
projection is named after that version (``kag_<database>_v<version>``), so a question finds the
current projection, projects it once when the graph has changed, and drops older ones — never
stale, never rebuilt per question.
"""

from __future__ import annotations

import threading

from neo4j.exceptions import ClientError

from kag_neo4j.store import cypher
from kag_neo4j.store.database import Database

_lock = threading.Lock()


def projection_prefix(db: Database) -> str:
    return f"kag_{db.database}_v"


def graph_version(db: Database) -> int:
    return int(db.read(cypher.query("solver/graph_version"))[0]["version"])


def current_projection(db: Database) -> str:
    """The name of an up-to-date projection, projecting (and dropping older ones) when needed."""
    prefix = projection_prefix(db)
    name = f"{prefix}{graph_version(db)}"
    with _lock:
        existing = {row["name"] for row in db.read(cypher.query("solver/list_projections"), prefix=prefix)}
        if name not in existing:
            try:
                db.read(cypher.query("project_graph", "procedures"), graph_name=name)
            except ClientError as exc:
                if "already exists" not in str(exc):  # another process projected it first
                    raise
        for stale in existing - {name}:
            db.read(cypher.query("solver/drop_projection"), graph_name=stale)
    return name

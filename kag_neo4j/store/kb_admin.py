"""Create, list, empty and drop the knowledge bases of one Neo4j database.

A knowledge base is a label namespace (:mod:`kag_neo4j.store.knowledge_base`); it exists while it
has nodes or indexes. ``create`` applies the migrations in it; ``drop`` deletes its nodes label by
label, its constraints, indexes and GDS projections, and leaves every other knowledge base as it was.
"""

from __future__ import annotations

from collections.abc import Collection

from pydantic import BaseModel, ConfigDict

from kag_neo4j.errors import ConfigError
from kag_neo4j.solver.projection import projection_prefix
from kag_neo4j.store import cypher
from kag_neo4j.store.database import Database
from kag_neo4j.store.identifiers import check_existing_name
from kag_neo4j.store.knowledge_base import DEFAULT_KB, KB_NAME, SEPARATOR, check_kb_name

__all__ = ["EmptiedKb", "KbSummary", "drop_kb", "empty_kb", "kb_names", "list_kbs"]


class KbSummary(BaseModel):
    """One knowledge base, as ``kag-neo4j kb list`` shows it."""

    model_config = ConfigDict(frozen=True)

    name: str
    documents: int
    chunks: int
    entities: int
    #: whether its constraints and indexes exist (``kag-neo4j kb create`` / ``migrate`` ran)
    migrated: bool


class EmptiedKb(BaseModel):
    """What :func:`empty_kb` removed."""

    name: str
    labels: int = 0
    constraints: int = 0
    indexes: int = 0
    projections: int = 0


def _kb_of(stored: str) -> str:
    head, separator, _ = stored.partition(SEPARATOR)
    return head if separator and KB_NAME.match(head) else DEFAULT_KB


def kb_names(db: Database) -> list[str]:
    """The knowledge bases with nodes or indexes in ``db``'s database, the default one first."""
    labels = db.read(cypher.query("store/stored_labels"))[0]["labels"]
    indexes = db.read(cypher.query("store/stored_index_names"))[0]["names"]
    named = {_kb_of(str(name)) for name in [*labels, *indexes]} - {DEFAULT_KB}
    return [DEFAULT_KB, *sorted(named)]


def list_kbs(db: Database) -> list[KbSummary]:
    """Every knowledge base with its size."""
    summaries = []
    for name in kb_names(db):
        row = db.in_kb(name).read(cypher.query("store/kb_counts"))[0]
        summaries.append(KbSummary(name=name, documents=row["documents"], chunks=row["chunks"],
                                   entities=row["entities"], migrated=row["migrations"] > 0))
    return summaries


def empty_kb(db: Database, *, data: bool = True, schema: bool = True, keep: Collection[str] = ()) -> EmptiedKb:
    """Empty ``db``'s knowledge base: its nodes (``data``; nodes of the labels in ``keep`` and the test
    marker stay), its constraints and indexes (``schema``) and its GDS projections. Other knowledge
    bases are not touched."""
    report = EmptiedKb(name=db.kb.name)
    if data:
        labels = [str(label) for label in db.read(cypher.query("store/kb_labels"))[0]["labels"] if label not in keep]
        for label in labels:
            db.auto_commit(cypher.render("store/delete_label", label=check_existing_name(label)))
        report.labels = len(labels)
    if schema:
        for row in db.read(cypher.query("store/list_constraints")):
            db.auto_commit(cypher.render("store/drop_constraint", name=check_existing_name(row["name"])))
            report.constraints += 1
        for row in db.read(cypher.query("store/list_indexes")):
            db.auto_commit(cypher.render("store/drop_index", name=check_existing_name(row["name"])))
            report.indexes += 1
    if db.capabilities.gds:
        for row in db.read(cypher.query("solver/list_projections"), prefix=projection_prefix(db)):
            db.read(cypher.query("solver/drop_projection"), graph_name=row["name"])
            report.projections += 1
    return report


def drop_kb(db: Database, name: str) -> EmptiedKb:
    """Drop the knowledge base ``name`` (never the default one) from ``db``'s database."""
    check_kb_name(name)
    if name == DEFAULT_KB:
        raise ConfigError(
            "the default knowledge base is not dropped; delete its documents with `kag-neo4j delete`, "
            "or drop another knowledge base by name"
        )
    if name not in kb_names(db):
        raise ConfigError(f"there is no knowledge base {name!r} in {db.database!r}; `kag-neo4j kb list` shows them")
    return empty_kb(db.in_kb(name))

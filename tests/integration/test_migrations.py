"""Migrations against a real Neo4j: applied once, recorded, immutable, concurrent-safe."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from kag_neo4j.errors import IndexDimensionError, MigrationError
from kag_neo4j.store import migrations
from kag_neo4j.store.database import Database

DIM = 384


def _index_names(db: Database) -> set[str]:
    return {row["name"] for row in db.read("SHOW INDEXES YIELD name RETURN name")}


def test_core_migration_creates_constraints_and_indexes(empty_db: Database) -> None:
    report = migrations.migrate(empty_db, embedding_dimension=DIM)
    assert [m.filename for m in report.applied] == ["0001_core.cypher", "0002_name_keys.cypher", "0003_title_anchors.cypher"]
    names = _index_names(empty_db)
    assert {"chunk_fulltext", "entity_fulltext", "chunk_embedding", "entity_embedding", "concept_embedding",
            "entity_name_key", "document_title_key"} <= names
    constraints = {row["name"] for row in empty_db.read("SHOW CONSTRAINTS YIELD name RETURN name")}
    assert {"document_id", "chunk_id", "entity_id", "concept_id"} <= constraints
    dims = {row["name"]: row["dimensions"] for row in empty_db.read("SHOW VECTOR INDEXES YIELD name, options "
                                                                   "RETURN name, options.indexConfig['vector.dimensions'] AS dimensions")}
    assert dims["chunk_embedding"] == DIM


def test_second_run_is_a_no_op(empty_db: Database) -> None:
    migrations.migrate(empty_db, embedding_dimension=DIM)
    before = empty_db.read("MATCH (m:KagMigration) RETURN m.version AS v, toString(m.applied_at) AS at")
    report = migrations.migrate(empty_db, embedding_dimension=DIM)
    assert report.applied == []
    assert [a.version for a in report.already] == [1, 2, 3]
    assert empty_db.read("MATCH (m:KagMigration) RETURN m.version AS v, toString(m.applied_at) AS at") == before


def test_changed_applied_file_is_refused(empty_db: Database, tmp_path: Path) -> None:
    folder = tmp_path / "migrations"
    folder.mkdir()
    (folder / "0001_core.cypher").write_text("CREATE CONSTRAINT t_id IF NOT EXISTS FOR (n:T) REQUIRE n.id IS UNIQUE;\n")
    migrations.migrate(empty_db, embedding_dimension=DIM, folder=folder)
    (folder / "0001_core.cypher").write_text("CREATE CONSTRAINT t_key IF NOT EXISTS FOR (n:T) REQUIRE n.key IS UNIQUE;\n")
    with pytest.raises(MigrationError, match="0001_core.cypher.*immutable"):
        migrations.migrate(empty_db, embedding_dimension=DIM, folder=folder)
    names = {row["name"] for row in empty_db.read("SHOW CONSTRAINTS YIELD name RETURN name")}
    assert "t_key" not in names


def test_new_migration_is_applied_after_old_ones(empty_db: Database, tmp_path: Path) -> None:
    folder = tmp_path / "migrations"
    folder.mkdir()
    (folder / "0001_a.cypher").write_text("CREATE CONSTRAINT a_id IF NOT EXISTS FOR (n:A) REQUIRE n.id IS UNIQUE;\n")
    migrations.migrate(empty_db, embedding_dimension=DIM, folder=folder)
    (folder / "0002_b.cypher").write_text(
        "// a comment\nCREATE CONSTRAINT b_id IF NOT EXISTS FOR (n:B) REQUIRE n.id IS UNIQUE;\n"
        "CREATE (:B {id: 'seed'});\n"
    )
    report = migrations.migrate(empty_db, embedding_dimension=DIM, folder=folder)
    assert [m.version for m in report.applied] == [2]
    assert empty_db.read("MATCH (b:B) RETURN count(b) AS n")[0]["n"] == 1


def test_concurrent_runs_apply_once(empty_db: Database, neo4j_connection) -> None:  # type: ignore[no-untyped-def]
    errors: list[BaseException] = []
    reports: list[migrations.MigrationReport] = []

    def run() -> None:
        other = Database(neo4j_connection)
        try:
            reports.append(migrations.migrate(other, embedding_dimension=DIM))
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)
        finally:
            other.close()

    threads = [threading.Thread(target=run) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sum(len(r.applied) for r in reports) == len(migrations.discover()), "each shipped migration once"
    assert empty_db.read("MATCH (m:KagMigration) RETURN count(m) AS n")[0]["n"] == len(migrations.discover())


def test_vector_index_of_another_dimension_is_a_clear_error(db: Database) -> None:
    with pytest.raises(IndexDimensionError, match="chunk_embedding holds 384-dimensional.*makes 768.*DROP INDEX"):
        migrations.migrate(db, embedding_dimension=768)


def test_failed_statement_names_file_and_statement(empty_db: Database, tmp_path: Path) -> None:
    folder = tmp_path / "migrations"
    folder.mkdir()
    (folder / "0001_bad.cypher").write_text(
        "CREATE CONSTRAINT ok_id IF NOT EXISTS FOR (n:Ok) REQUIRE n.id IS UNIQUE;\nTHIS IS NOT CYPHER;\n"
    )
    with pytest.raises(MigrationError, match="0001_bad.cypher failed at statement 2 of 2"):
        migrations.migrate(empty_db, embedding_dimension=DIM, folder=folder)
    assert empty_db.read("MATCH (m:KagMigration) RETURN count(m) AS n")[0]["n"] == 0
    lock = empty_db.read("MATCH (l:KagMigrationLock) RETURN l.holder AS holder")
    assert lock == [{"holder": None}]

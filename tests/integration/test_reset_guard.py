"""Tests and benchmarks never empty a database they did not claim (kag_neo4j.store.reset)."""

from __future__ import annotations

import pytest

from kag_neo4j.errors import UnsafeResetError
from kag_neo4j.store.database import Database
from kag_neo4j.store.reset import TEST_MARKER, claim_database, is_marked, reset_database


def _unmark(db: Database) -> None:
    db.write(f"MATCH (m:{TEST_MARKER}) DELETE m")


def test_reset_refuses_a_database_without_the_marker_and_leaves_its_data(empty_db: Database) -> None:
    db = empty_db
    db.write("CREATE (:Document {id: 'someone-else', title: 'precious'})")
    _unmark(db)
    try:
        with pytest.raises(UnsafeResetError, match="marker"):
            reset_database(db)
        assert db.read("MATCH (d:Document {id: 'someone-else'}) RETURN d.title AS t") == [{"t": "precious"}]
        with pytest.raises(UnsafeResetError, match="holds data"):
            claim_database(db, reason="test")
        assert not is_marked(db)
    finally:
        claim_database(db, reason="kag-neo4j integration tests", allow_data=True)
    reset_database(db)
    assert db.read("MATCH (n) WHERE NOT n:KagTestDatabase RETURN count(n) AS n") == [{"n": 0}]
    assert is_marked(db), "the marker survives a reset"


def test_an_empty_database_can_be_claimed(empty_db: Database) -> None:
    _unmark(empty_db)
    try:
        claim_database(empty_db, reason="test")
        assert is_marked(empty_db)
    finally:
        claim_database(empty_db, reason="kag-neo4j integration tests", allow_data=True)

"""Migration files: naming, ordering, statement splitting, checksums."""

from __future__ import annotations

from pathlib import Path

import pytest

from kag_neo4j.errors import MigrationError
from kag_neo4j.store.migrations import discover, split_statements


def test_shipped_migrations_are_ordered_and_parse() -> None:
    found = discover()
    assert [m.version for m in found] == sorted(m.version for m in found)
    assert found[0].filename == "0001_core.cypher"
    statements = found[0].statements()
    assert all("$embedding_dimension" in s for s in statements if "VECTOR" in s)
    assert not any(s.rstrip().endswith(";") for s in statements)


def test_split_statements_skips_comments_and_keeps_multiline() -> None:
    text = "// header\nCREATE (a)\nSET a.x = 1;\n\n// two\nMATCH (n)\nRETURN n;\n"
    assert split_statements(text) == ["CREATE (a)\nSET a.x = 1", "MATCH (n)\nRETURN n"]


def test_checksum_changes_with_content(tmp_path: Path) -> None:
    (tmp_path / "0001_a.cypher").write_text("RETURN 1;\n")
    first = discover(tmp_path)[0].checksum
    (tmp_path / "0001_a.cypher").write_text("RETURN 2;\n")
    assert discover(tmp_path)[0].checksum != first


@pytest.mark.parametrize("name", ["1_a.cypher", "0001-a.cypher", "0001_A.cypher", "core.cypher"])
def test_misnamed_files_are_refused(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_text("RETURN 1;\n")
    with pytest.raises(MigrationError, match="misnamed"):
        discover(tmp_path)


def test_duplicate_versions_are_refused(tmp_path: Path) -> None:
    (tmp_path / "0001_a.cypher").write_text("RETURN 1;\n")
    (tmp_path / "0001_b.cypher").write_text("RETURN 2;\n")
    with pytest.raises(MigrationError, match="share version 0001"):
        discover(tmp_path)

"""Java discovery for the local server."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from kag_neo4j.errors import ServerError
from kag_neo4j.store.java import find_java, java_major


def _fake_java(home: Path, version_line: str) -> Path:
    java = home / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text(f"#!/bin/sh\necho '{version_line}' >&2\n")
    java.chmod(java.stat().st_mode | stat.S_IEXEC)
    return java


def test_reads_modern_and_legacy_versions(tmp_path: Path) -> None:
    assert java_major(_fake_java(tmp_path / "a", 'openjdk version "17.0.15" 2025-04-15')) == 17
    assert java_major(_fake_java(tmp_path / "b", 'java version "1.8.0_392"')) == 8
    assert java_major(tmp_path / "missing") is None


def test_configured_java_home_of_wrong_version_is_explained(tmp_path: Path) -> None:
    _fake_java(tmp_path / "j25", 'openjdk version "25" 2025-09-16')
    with pytest.raises(ServerError, match="Java 25; Neo4j 5.26 needs Java 17 or 21"):
        find_java(tmp_path / "j25")


def test_configured_java_home_of_right_version_wins(tmp_path: Path) -> None:
    java = _fake_java(tmp_path / "j21", 'openjdk version "21.0.2" 2024-01-16')
    assert find_java(tmp_path / "j21") == java

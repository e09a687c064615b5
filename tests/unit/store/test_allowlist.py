"""The local server's procedure allow-list is exactly the gds.* / apoc.* calls kag-neo4j makes."""

from __future__ import annotations

import re
from pathlib import Path

from kag_neo4j.resources import resource_dir
from kag_neo4j.store.allowlist import PLUGIN_CALLS, setting_value

REPOSITORY = Path(__file__).resolve().parents[3]
#: a procedure or function call: a qualified gds./apoc. name followed by "("
CALL = re.compile(r"\b((?:gds|apoc)(?:\.[A-Za-z_][A-Za-z0-9_]*)+)\s*\(")


def _product_files() -> list[Path]:
    cypher = [path for folder in ("cypher", "procedures", "migrations") for path in resource_dir(folder).rglob("*.cypher")]
    python = [*(REPOSITORY / "kag_neo4j").rglob("*.py"), *(REPOSITORY / "benchmarks").rglob("*.py")]
    return cypher + python


def calls_in_repository() -> set[str]:
    found: set[str] = set()
    for path in _product_files():
        found.update(CALL.findall(path.read_text(encoding="utf-8")))
    return found


def test_the_scan_sees_the_calls_it_must_see() -> None:
    found = calls_in_repository()
    assert {"gds.pageRank.stream", "gds.graph.project", "gds.util.asNode", "apoc.version"} <= found
    assert CALL.findall("WITH gds.graph.project($g, s, t) AS g RETURN apoc.version ()") == [
        "gds.graph.project", "apoc.version",
    ]
    assert CALL.findall("apoc.export.file.enabled=false  // gds.version") == []


def test_allow_list_is_exactly_the_calls_in_the_repository() -> None:
    found = calls_in_repository()
    assert found - set(PLUGIN_CALLS) == set(), "calls the local server would refuse: add them to kag_neo4j/store/allowlist.py"
    assert set(PLUGIN_CALLS) - found == set(), "allowed but never called: remove them from kag_neo4j/store/allowlist.py"
    assert list(PLUGIN_CALLS) == sorted(PLUGIN_CALLS)


def test_setting_names_each_call_without_wildcards() -> None:
    assert setting_value().split(",") == list(PLUGIN_CALLS)
    assert "*" not in setting_value()

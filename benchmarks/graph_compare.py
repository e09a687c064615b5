"""A canonical dump of a whole graph, for "equals a clean load" checks in the fault benchmarks.

    from graph_compare import dump, diff
    before = dump(db)            # nodes, relationships, every property, text included
    ...
    print(diff(before, dump(db)))  # [] when equal

Nodes are keyed by their labels and ``id`` (or ``key`` / ``version``, the meta nodes' keys);
relationships by type, endpoint keys and their properties. Properties that record *when*
something happened (``loaded_at``, ``created_at``, ``updated_at``, ``applied_at``, and
``Document.load_seq``, a clock value that orders documents) and the
bookkeeping of runs, migrations, locks and test markers are left out: two equal loads differ
in those by construction. Vectors are compared rounded to 4 decimals.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from kag_neo4j.store.database import Database

#: properties that say when, not what
VOLATILE = frozenset({"load_seq", "loaded_at", "created_at", "updated_at", "applied_at", "expires_at", "started_at", "finished_at"})
#: labels of bookkeeping nodes that are not the knowledge graph
BOOKKEEPING = ("KagRun", "KagStep", "KagMigration", "KagMigrationLock", "KagTestDatabase", "KagLoadLease")

_NODES = """
MATCH (n) WHERE none(l IN labels(n) WHERE l IN $skip)
RETURN elementId(n) AS eid, labels(n) AS labels, properties(n) AS props
"""
_RELS = """
MATCH (a)-[r]->(b)
WHERE none(l IN labels(a) WHERE l IN $skip) AND none(l IN labels(b) WHERE l IN $skip)
RETURN elementId(a) AS a, type(r) AS type, elementId(b) AS b, properties(r) AS props
"""


def _value(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, list):
        return [_value(v) for v in value]
    if hasattr(value, "iso_format"):  # neo4j temporal values
        return value.iso_format()
    return value


def _props(props: dict[str, Any], ignore: frozenset[str]) -> str:
    kept = {k: _value(v) for k, v in props.items() if k not in ignore}
    return json.dumps(kept, sort_keys=True, ensure_ascii=False, default=str)


def _node_key(labels: list[str], props: dict[str, Any]) -> str:
    for key in ("id", "key", "version"):
        if key in props:
            return f"{':'.join(sorted(labels))}|{key}={props[key]}"
    return f"{':'.join(sorted(labels))}|{_props(props, VOLATILE)}"


def dump(db: Database, *, ignore: frozenset[str] = VOLATILE, skip_labels: tuple[str, ...] = BOOKKEEPING) -> dict[str, list[str]]:
    """Every node and relationship of the knowledge graph as sorted canonical strings."""
    keys: dict[str, str] = {}
    nodes = []
    for row in db.read(_NODES, skip=list(skip_labels)):
        key = _node_key(row["labels"], row["props"])
        keys[row["eid"]] = key
        nodes.append(f"{key} {_props(row['props'], ignore)}")
    rels = [
        f"({keys[row['a']]})-[{row['type']} {_props(row['props'], ignore)}]->({keys[row['b']]})"
        for row in db.read(_RELS, skip=list(skip_labels))
    ]
    return {"nodes": sorted(nodes), "relationships": sorted(rels)}


def digest(graph: dict[str, list[str]]) -> str:
    """A short fingerprint of a dump (equal graphs, equal digests)."""
    text = "\n".join(graph["nodes"]) + "\n--\n" + "\n".join(graph["relationships"])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def diff(expected: dict[str, list[str]], actual: dict[str, list[str]], *, limit: int = 5) -> list[str]:
    """Human-readable differences (at most ``limit`` per kind); empty when the graphs are equal."""
    out: list[str] = []
    for kind in ("nodes", "relationships"):
        want, got = set(expected[kind]), set(actual[kind])
        missing, extra = sorted(want - got), sorted(got - want)
        if len(expected[kind]) != len(set(expected[kind])) or len(actual[kind]) != len(set(actual[kind])):
            dup_e = len(expected[kind]) - len(want)
            dup_a = len(actual[kind]) - len(got)
            if dup_e != dup_a:
                out.append(f"{kind}: {dup_a} duplicated entries (clean load: {dup_e})")
        out += [f"{kind} missing: {m[:200]}" for m in missing[:limit]]
        out += [f"{kind} extra: {e[:200]}" for e in extra[:limit]]
        if len(missing) > limit or len(extra) > limit:
            out.append(f"{kind}: {len(missing)} missing, {len(extra)} extra in all")
    return out

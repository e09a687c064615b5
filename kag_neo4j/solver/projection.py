"""The GDS projection Personalized PageRank runs on, kept in step with writes.

The builder bumps ``(:KagMeta {key: 'graph'}).version`` in the same transaction as every write.
The projection is named after the version read at ask time (``kag_<database>_v<version>``), so a
question finds the current projection, projects it once when the graph has changed (a load killed
half-way included: its committed batches bumped the version), and is never stale.

Several processes ask and load at once, so the lifecycle tolerates every race:

* two processes projecting the same version at once: the loser's "already exists" is success;
* an older projection is retired only once a newer one has existed for ``grace_seconds``
  (default :data:`GRACE_SECONDS`), longer than any retrieval that may still be reading it;
  projections of a *higher* version than the graph's (left by an emptied database) go once they
  are that old themselves;
* every statement (reading the version with the list of projections in one read, projecting and
  dropping projections - GDS catalog calls that run in read transactions) goes through the caller's
  :class:`~kag_neo4j.store.runner.QueryRunner`, so an ask's trace shows the projection it made;
* a retrieval whose projection vanished, or that misses nodes written after it was projected,
  calls :func:`current_projection` again and retries (:func:`is_stale_projection_error`); a
  projection that still misses a seed of its own version is projected again (``incomplete``).
"""

from __future__ import annotations

import threading

from neo4j.exceptions import ClientError

from kag_neo4j.store.runner import QueryRunner

__all__ = ["GRACE_SECONDS", "current_projection", "graph_version", "is_stale_projection_error", "projection_prefix"]

#: how long an older projection outlives the one that replaced it
GRACE_SECONDS = 60.0

_lock = threading.Lock()


def projection_prefix(runner: QueryRunner) -> str:
    """``kag_<database>_v`` for the default knowledge base, ``kag_<database>__<kb>_v`` for another."""
    kb = "" if runner.kb.is_default else f"__{runner.kb.name}"
    return f"kag_{runner.database}{kb}_v"


def graph_version(runner: QueryRunner) -> int:
    return int(runner.query("solver/graph_version")[0]["version"])


def is_stale_projection_error(exc: ClientError) -> bool:
    """True for the GDS errors a retrieval hits when its projection was dropped under it, or lacks
    a node written after it was projected: both pass when projecting the current version again."""
    message = str(exc.message or exc)
    return ("Graph with name" in message and "does not exist" in message) or (
        "do not exist in the in-memory graph" in message
    )


def _version_of(name: str, prefix: str) -> int | None:
    tail = name[len(prefix):]
    return int(tail) if tail.isdigit() else None


def current_projection(runner: QueryRunner, *, grace_seconds: float = GRACE_SECONDS, incomplete: str | None = None) -> str:
    """The name of an up-to-date projection, projecting it when needed and retiring old ones.

    ``incomplete`` names a projection that lacks nodes of its own version (projected while the
    transaction that bumped the version was still being applied): it is projected again."""
    prefix = projection_prefix(runner)
    with _lock:
        state = runner.query("solver/projection_state", prefix=prefix)[0]  # version and projections, one read
        version = int(state["version"])
        name = f"{prefix}{version}"
        ages = {str(item["name"]): float(item["age_seconds"]) for item in state["projections"]}
        if incomplete == name:
            runner.query("solver/drop_projection", graph_name=name)
            ages.pop(name, None)
        if name not in ages:
            try:
                runner.query("project_graph", "procedures", graph_name=name)
            except ClientError as exc:
                message = str(exc.message or exc)
                if "already exists" not in message and "already loaded" not in message:
                    raise  # else another process projected it first: fine
            ages[name] = 0.0
        versions = {other: _version_of(other, prefix) for other in ages}
        for other, other_version in versions.items():
            if other == name:
                continue
            if other_version is None or other_version > version:  # not ours, or left by an emptied graph
                retired = ages[other] >= grace_seconds
            else:
                retired = any(
                    newer is not None and newer > other_version and ages[candidate] >= grace_seconds
                    for candidate, newer in versions.items()
                )
            if retired:
                runner.query("solver/drop_projection", graph_name=other)
    return name

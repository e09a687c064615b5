"""``--solver KEY=VALUE``: the solver's knobs on the command line (``kag-neo4j ask`` and ``kag-neo4j eval``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from kag_neo4j.errors import ConfigError
from kag_neo4j.solver.runtime import SolverConfig

__all__ = ["parse_solver_options"]


def parse_solver_options(pairs: Sequence[str]) -> SolverConfig | None:
    """``KEY=VALUE`` pairs (``graph_confidence=0.6``, ``retrieval.k_ppr=10``) -> a validated
    :class:`~kag_neo4j.solver.runtime.SolverConfig` (``None`` without pairs). A value is read as JSON
    when it parses (numbers, booleans, null, lists), else as text."""
    if not pairs:
        return None
    data: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        path = key.strip().split(".")
        if not sep or not all(part.isidentifier() for part in path):
            raise ConfigError(f"--solver {pair!r} is not KEY=VALUE; e.g. --solver graph_confidence=0.6 "
                              "or --solver retrieval.k_ppr=10")
        try:
            value: Any = json.loads(raw)
        except ValueError:
            value = raw
        node = data
        for part in path[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ConfigError(f"--solver {pair!r}: {part!r} was already given a value")
            node = child
        node[path[-1]] = value
    try:
        return SolverConfig.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}" for error in exc.errors())
        raise ConfigError(f"--solver: {problems} (the knobs are SolverConfig's fields, docs/solver.md)") from exc

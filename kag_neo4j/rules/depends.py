"""The order rules run in: a rule that reads what another derives runs after it.

A rule *reads* relations of its Structure, nodes of its types, properties it tests and concept
memberships (``(x:T/`name`)``); it *writes* its derived relation, membership, property, or the
nodes and edges of its Action. Rule B depends on rule A when a read of B can see a write of A:
same relation type (or an untyped edge), same property key, same concept; node types must be
compatible (the same type or one an ancestor of the other in the schema; nodes of different
declared types are different nodes). Two refinements keep KAG's event chains acyclic:

* a node an Action creates has no concept membership yet, so a read that needs one sees it only
  through the membership rule (a dependency of its own);
* a node an Action creates with ``key = constant`` is not seen by a read that requires
  ``key == other constant``.

Rules run once each in that order (KAG's semantics: no fixpoint); a cycle — including a rule
that reads its own result — is refused with the cycle named.
"""

from __future__ import annotations

import heapq

from kag_neo4j.rules.compile import CompiledRule, Fact, NodeShape
from kag_neo4j.rules.errors import RuleCycleError
from kag_neo4j.schema.models import ResolvedSchema


class _Labels:
    def __init__(self, schema: ResolvedSchema | None) -> None:
        self.ancestors: dict[str, set[str]] = {}
        if schema is not None:
            for spg_type in schema.types:
                self.ancestors[spg_type.label] = set(spg_type.labels) | {spg_type.label}

    def expand(self, labels: frozenset[str]) -> set[str]:
        out: set[str] = set()
        for label in labels:
            out |= self.ancestors.get(label, {label})
        return out

    def compatible(self, a: frozenset[str], b: frozenset[str]) -> bool:
        if not a or not b:
            return True
        return a <= self.expand(b) or b <= self.expand(a)


def _end_sees(read: NodeShape, write: NodeShape, labels: _Labels) -> bool:
    if write.created and read.concepts:
        return False
    return labels.compatible(read.labels, write.labels)


def sees(read: Fact, write: Fact, labels: _Labels) -> bool:
    """Whether a rule reading ``read`` can see facts of the kind ``write``."""
    if read.kind != write.kind:
        return False
    if read.kind == "concept":
        return read.key == write.key
    if read.kind == "property":
        return read.key == write.key and labels.compatible(read.a.labels, write.a.labels)  # type: ignore[union-attr]
    if read.kind == "node":
        assert read.a is not None and write.a is not None
        if not write.a.created or read.a.concepts:
            return False
        if not labels.compatible(read.a.labels, write.a.labels):
            return False
        made = dict(write.constants)
        return all(made.get(key, value) == value for key, value in read.constants)
    assert read.a is not None and read.b is not None and write.a is not None and write.b is not None
    if read.types is not None and write.types is not None and not (read.types & write.types):
        return False
    forward = _end_sees(read.a, write.a, labels) and _end_sees(read.b, write.b, labels)
    backward = not read.directed and _end_sees(read.a, write.b, labels) and _end_sees(read.b, write.a, labels)
    return forward or backward


def dependencies(rules: list[CompiledRule], schema: ResolvedSchema | None = None) -> dict[str, dict[str, Fact]]:
    """rule id -> {id of a rule it depends on: the fact it reads from it}."""
    labels = _Labels(schema)
    found: dict[str, dict[str, Fact]] = {rule.id: {} for rule in rules}
    for reader in rules:
        for writer in rules:
            for read in reader.reads:
                if any(sees(read, write, labels) for write in writer.writes):
                    found[reader.id].setdefault(writer.id, read)
                    break
    return found


def order(rules: list[CompiledRule], schema: ResolvedSchema | None = None) -> list[CompiledRule]:
    """The rules in dependency order (file order among independent ones); raises
    :class:`RuleCycleError` naming the cycle."""
    deps = dependencies(rules, schema)
    by_id = {rule.id: rule for rule in rules}
    for rule in rules:
        if rule.id in deps[rule.id]:
            fact = deps[rule.id][rule.id]
            raise RuleCycleError([rule.id, rule.id], f"{rule.location}: rule {rule.id} reads its own result "
                                 f"({fact.describe()}); rules run once, so a rule cannot use what it derives itself")
    waiting = {rule.id: set(deps[rule.id]) for rule in rules}
    ready = [(rule.position, rule.id) for rule in rules if not waiting[rule.id]]
    heapq.heapify(ready)
    result: list[CompiledRule] = []
    while ready:
        _, rule_id = heapq.heappop(ready)
        result.append(by_id[rule_id])
        for other, needs in waiting.items():
            if rule_id in needs:
                needs.discard(rule_id)
                if not needs and other not in {r.id for r in result}:
                    heapq.heappush(ready, (by_id[other].position, other))
    if len(result) < len(rules):
        cycle = _find_cycle({k: v for k, v in waiting.items() if v})
        steps = "; ".join(f"{a} reads {deps[a][b].describe()} from {b}" for a, b in zip(cycle, cycle[1:]))
        raise RuleCycleError(cycle, f"rules depend on each other in a cycle: {' -> '.join(cycle)} ({steps}); "
                             "rules run once each, in dependency order: remove one of these dependencies")
    return result


def _find_cycle(graph: dict[str, set[str]]) -> list[str]:
    start = min(graph)
    path = [start]
    seen = {start: 0}
    node = start
    while True:
        node = min(n for n in graph[node] if n in graph)
        if node in seen:
            return path[seen[node]:] + [node]
        seen[node] = len(path)
        path.append(node)

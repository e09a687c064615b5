"""Derived facts follow their inputs: after a load or delete commits, the registered rule sets
(:mod:`kag_neo4j.rules.registry`) are re-applied — only the rules whose inputs the change
touched, and every rule that reads their results, in dependency order, in one write
transaction.

A rule is touched by a :class:`~kag_neo4j.rules.footprint.Footprint` when it reads a relation
of a touched type (an untyped edge reads every type: any touched type touches it), a touched property key, concept
memberships when ``BELONGS_TO`` or ``IS_A`` changed, or nodes of a touched label that are on no
edge of its pattern (a node on an edge matters only through its edges and properties).

Crash safety: a rule set records the graph version its derived facts are consistent with. The
caller says which version its change started from (``since``); when the set's version is not
that one — an earlier load or delete changed the graph and its refresh never ran or failed —
every rule of the set is re-applied. A failing refresh rolls back whole: the previous derived
facts stay, and the next load or delete recomputes them all.
"""

from __future__ import annotations

import logging
import time

from pydantic import BaseModel, Field

from kag_neo4j.builder.write import mark_changed
from kag_neo4j.errors import KagError
from kag_neo4j.rules.apply import RuleResult, compile_all, parse_as_of, run_rules
from kag_neo4j.rules.compile import CompiledRule, Fact
from kag_neo4j.rules.depends import dependencies
from kag_neo4j.rules.footprint import Footprint
from kag_neo4j.rules.registry import read_rule_sets, rule_set_of
from kag_neo4j.schema.constraints import ConstraintViolation
from kag_neo4j.schema.models import ResolvedSchema
from kag_neo4j.store.cypher import query
from kag_neo4j.store.database import Database, Transaction
from kag_neo4j.store.lease import Lease

log = logging.getLogger(__name__)

CONCEPT_TYPES = frozenset({"BELONGS_TO", "IS_A"})


class RefreshReport(BaseModel):
    """What re-applying the registered rules after a change did."""

    #: namespaces whose every rule was re-applied (their facts were not known to be current)
    full: list[str] = Field(default_factory=list)
    rules: list[RuleResult] = Field(default_factory=list)
    #: derived values the schema's constraints refused (not written; ``RuleResult.rejected`` counts them)
    violations: list[ConstraintViolation] = Field(default_factory=list)
    #: rules of the registered sets left alone (the change did not touch their inputs)
    skipped: int = 0
    seconds: float = 0.0
    graph_version: int | None = None
    #: why the refresh failed (the change itself is committed; the previous derived facts stay
    #: and the next load or delete recomputes them)
    error: str | None = None

    def describe(self) -> str:
        if self.error:
            return f"not re-applied: {self.error}"
        changed = sum(r.derived for r in self.rules), sum(r.retracted for r in self.rules)
        scope = f"all rules of {', '.join(n or '(no namespace)' for n in self.full)}; " if self.full else ""
        rejected = f", {len(self.violations)} rejected (constraints)" if self.violations else ""
        return (f"{len(self.rules)} re-applied ({scope}{self.skipped} untouched), {changed[0]} facts derived, "
                f"{changed[1]} retracted{rejected}, {self.seconds:.2f}s")


def reads_touched(read: Fact, change: Footprint) -> bool:
    if read.kind == "relation":
        return bool(change.types) and (read.types is None or bool(read.types & change.types))
    if read.kind == "property":
        return read.key in change.keys
    if read.kind == "concept":
        return bool(CONCEPT_TYPES & change.types)
    assert read.a is not None
    return read.alone and (not read.a.labels or bool(read.a.labels & change.labels))


def affected(compiled: list[CompiledRule], change: Footprint, schema: ResolvedSchema | None) -> list[CompiledRule]:
    """The rules ``change`` touches and every rule that reads their results, in run order."""
    chosen = {rule.id for rule in compiled if any(reads_touched(read, change) for read in rule.reads)}
    deps = dependencies(compiled, schema)
    for rule in compiled:  # dependency order: a rule's writers come before it
        if rule.id not in chosen and chosen & set(deps[rule.id]):
            chosen.add(rule.id)
    return [rule for rule in compiled if rule.id in chosen]


def _graph_version(tx: Transaction) -> int:
    record = tx.run(query("solver/graph_version")).single()
    return int(record["version"]) if record is not None else 0


def refresh_rules(db: Database, change: Footprint, *, since: int | None, lease: Lease | None = None) -> RefreshReport | None:
    """Re-apply what ``change`` (a committed load or delete that started at graph version
    ``since``) touched of the registered rule sets; ``None`` when no rule set is registered."""
    began = time.perf_counter()
    stored = db.read_tx(read_rule_sets)
    if not stored:
        return None
    report = RefreshReport()
    plan: list[tuple[list[CompiledRule], str, ResolvedSchema | None]] = []
    for rule_set in stored:
        rules = rule_set_of(db, rule_set)
        compiled = compile_all(rules)
        if since is None or rule_set.graph_version != since:
            chosen = compiled
            report.full.append(rule_set.namespace)
        else:
            chosen = affected(compiled, change, rules.schema_)
        report.skipped += len(compiled) - len(chosen)
        plan.append((chosen, rule_set.as_of, rules.schema_))

    def work(tx: Transaction) -> tuple[list[RuleResult], int]:
        if lease is not None:
            lease.fence(tx)
        results: list[RuleResult] = []
        report.violations.clear()  # a retried transaction starts over
        for chosen, as_of, schema in plan:
            applied, rejected = run_rules(tx, chosen, parse_as_of(as_of), schema)
            results.extend(applied)
            report.violations.extend(rejected)
        version = mark_changed(tx, "rules refresh") if results else _graph_version(tx)
        tx.run(query("rules/ruleset_mark"), {"graph_version": version}).consume()
        return results, version

    report.rules, report.graph_version = db.write_tx(work)
    report.seconds = time.perf_counter() - began
    return report


def refresh_after_change(db: Database, change: Footprint, *, since: int | None,
                         lease: Lease | None = None) -> RefreshReport | None:
    """:func:`refresh_rules` for a change that is already committed: a rule error (or a lost
    lease) is reported in the result, not raised."""
    try:
        return refresh_rules(db, change, since=since, lease=lease)
    except KagError as exc:
        log.warning("derived facts were not re-applied after the change: %s", exc)
        return RefreshReport(error=str(exc))


def graph_version(db: Database) -> int:
    """The current graph version (what a change passes as ``since`` to :func:`refresh_rules`)."""
    return db.read_tx(_graph_version)

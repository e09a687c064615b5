"""A knowledge base's rule sets: what ``kag-neo4j rules apply`` applied is stored in the graph
(one ``(:KagRuleSet {namespace})`` per namespace: the files' sources and texts, a checksum of
them, each rule's id and version, the "as of" instant, and the graph version its derived facts
are consistent with), so that loads and deletes re-apply it (:mod:`kag_neo4j.rules.refresh`).

Registering a set replaces the namespace's previous one in the same transaction that applies
it; the facts of rules the new set no longer has are retracted there too.
"""

from __future__ import annotations

import hashlib
from datetime import date, datetime
from typing import Any

from pydantic import BaseModel

from kag_neo4j.builder.write import mark_changed
from kag_neo4j.rules.apply import ApplyResult, RuleResult, bind, compile_all, parse_as_of, run_rules
from kag_neo4j.rules.compile import CompiledRule
from kag_neo4j.rules.errors import RuleError
from kag_neo4j.rules.load import RuleSet, load_rule_texts
from kag_neo4j.schema.constraints import ConstraintViolation
from kag_neo4j.schema.metagraph import read_schema
from kag_neo4j.schema.models import ResolvedSchema
from kag_neo4j.store.cypher import query
from kag_neo4j.store.database import Database, Transaction
from kag_neo4j.store.lease import Lease


class StoredRuleSet(BaseModel):
    """One registered rule set, as read back from the graph."""

    namespace: str
    sources: list[str]
    texts: list[str]
    checksum: str
    as_of: str
    rule_ids: list[str]
    rule_versions: list[str]
    graph_version: int | None = None
    #: the resolved schema the rules' types came from (``--schema``, a ``.schema`` file or the stored one)
    resolved_schema: str | None = None


def checksum(texts: tuple[str, ...] | list[str]) -> str:
    digest = hashlib.sha256()
    for text in texts:
        digest.update(hashlib.sha256(text.encode("utf-8")).digest())
    return digest.hexdigest()[:16]


def read_rule_sets(tx: Transaction) -> list[StoredRuleSet]:
    return [StoredRuleSet(**dict(record)) for record in tx.run(query("rules/ruleset_read"))]


def rule_set_of(db: Database, stored: StoredRuleSet) -> RuleSet:
    """The stored set parsed again, with the types it was applied with (a ``.schema`` among its
    files, else the schema recorded when it was registered, else the namespace's stored schema)."""
    schema = ResolvedSchema.model_validate_json(stored.resolved_schema) if stored.resolved_schema else None
    rules = load_rule_texts(zip(stored.sources, stored.texts), schema=schema)
    return with_stored_schema(db, rules)


def with_stored_schema(db: Database, rules: RuleSet) -> RuleSet:
    """``rules`` with the namespace's stored schema when none of its files is a ``.schema``."""
    if rules.schema_ is None and rules.namespace:
        schema = read_schema(db, rules.namespace)
        if schema is not None:
            return rules.model_copy(update={"schema_": schema})
    return rules


def _removed(db: Database, previous: StoredRuleSet | None, kept: set[str]) -> list[CompiledRule]:
    """The previous set's rules that the new set no longer has (their facts are retracted)."""
    if previous is None or not set(previous.rule_ids) - kept:
        return []
    try:
        old = compile_all(rule_set_of(db, previous))
    except RuleError:  # an old set that no longer compiles (e.g. its schema changed) cannot be retracted by rule
        return []
    return [rule for rule in old if rule.id not in kept]


def apply_and_register(db: Database, rules: RuleSet, *, as_of: str | date | datetime | None = None,
                       lease: Lease | None = None) -> ApplyResult:
    """Apply ``rules`` (as :func:`~kag_neo4j.rules.apply.apply_rules`) and register them for the
    namespace, in one write transaction fenced by the builder ``lease`` (taken here when not
    given): later loads and deletes keep their derived facts up to date."""
    from kag_neo4j.builder.lease import builder_lease

    if lease is None:
        with builder_lease(db, "`kag-neo4j rules apply`") as own:
            return apply_and_register(db, rules, as_of=as_of, lease=own)
    instant = parse_as_of(as_of)
    compiled = compile_all(rules)
    namespace = rules.namespace or ""
    previous = next((s for s in db.read_tx(read_rule_sets) if s.namespace == namespace), None)
    removed = _removed(db, previous, {rule.id for rule in compiled})
    violations: list[ConstraintViolation] = []

    def work(tx: Transaction) -> list[RuleResult]:
        lease.fence(tx)
        for rule in removed:
            for statement in rule.retract:
                tx.run(statement.cypher, bind(statement, rule, instant)).consume()
        results, found = run_rules(tx, compiled, instant, rules.schema_)
        violations[:] = found  # a retried transaction starts over
        version = mark_changed(tx, "rules apply")
        params: dict[str, Any] = {
            "namespace": namespace, "sources": list(rules.sources), "texts": list(rules.texts),
            "checksum": checksum(rules.texts), "as_of": instant.isoformat(),
            "rule_ids": [rule.id for rule in compiled], "rule_versions": [rule.version for rule in compiled],
            "graph_version": version,
            "resolved_schema": rules.schema_.model_dump_json() if rules.schema_ is not None else None,
        }
        tx.run(query("rules/ruleset_save"), params).consume()
        return results

    applied = db.write_tx(work)
    return ApplyResult(as_of=instant.isoformat(), rules=applied, violations=violations)

"""Apply a rule set to Neo4j: compile, order, then — in ONE write transaction — for each rule
retract what it derived before and derive again. Re-applying changes nothing; a changed input
changes exactly the derived facts that depend on it; a failure leaves the graph as it was.

``now()`` is the "as of" instant: the start (00:00 UTC) of ``as_of`` (default: today, UTC). It
is recorded on every fact of a rule that uses ``now()`` (``as_of``), so a rerun with the same
date reproduces the result.
"""

from __future__ import annotations

from datetime import date, datetime, time, timezone
from typing import Any

import neo4j.exceptions
from pydantic import BaseModel

from kag_neo4j.builder.write import mark_changed
from kag_neo4j.rules.compile import CompiledRule, RuleKind, Statement, compile_rule
from kag_neo4j.rules.depends import order
from kag_neo4j.rules.derived_check import check_derived
from kag_neo4j.rules.errors import RuleError
from kag_neo4j.rules.load import RuleSet
from kag_neo4j.schema.constraints import ConstraintViolation
from kag_neo4j.schema.models import ResolvedSchema
from kag_neo4j.store.database import Database, Transaction
from kag_neo4j.store.knowledge_base import KnowledgeBase
from kag_neo4j.store.literals import cypher_literal


class RuleResult(BaseModel):
    id: str
    kind: RuleKind
    version: str
    retracted: int
    derived: int
    #: derived values removed because they break the schema's constraints (not counted in ``derived``)
    rejected: int = 0


class ApplyResult(BaseModel):
    as_of: str
    rules: list[RuleResult]
    #: every derived value that broke the schema's constraints (not written), with rule and node
    violations: list[ConstraintViolation] = []


def parse_as_of(value: str | date | datetime | None) -> datetime:
    """The "as of" instant: a date (00:00 UTC) or an ISO date-time; default today (UTC)."""
    if value is None:
        return datetime.combine(datetime.now(timezone.utc).date(), time(0), tzinfo=timezone.utc)
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    if isinstance(value, date):
        return datetime.combine(value, time(0), tzinfo=timezone.utc)
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise RuleError(f"--as-of {value!r} is not a date; use YYYY-MM-DD (or an ISO date-time)") from exc
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def compile_all(rules: RuleSet) -> list[CompiledRule]:
    """Every rule compiled, in dependency order."""
    return order([compile_rule(rule, rules) for rule in rules.rules], rules.schema_)


def bind(statement: Statement, rule: CompiledRule, as_of: datetime) -> dict[str, Any]:
    """The statement's parameters with the "as of" values filled in."""
    parameters = dict(statement.parameters)
    if "now" in parameters or "as_of" in parameters:
        parameters["now"] = int(as_of.timestamp())
        parameters["as_of"] = as_of.isoformat() if rule.uses_now else None
    return parameters


def run_rules(tx: Transaction, compiled: list[CompiledRule], instant: datetime,
              schema: ResolvedSchema | None) -> tuple[list[RuleResult], list[ConstraintViolation]]:
    """Retract then derive each rule of ``compiled`` (in that order) inside ``tx``; each derived
    property is held against ``schema``'s constraints right after its rule ran (the invalid
    values are removed: :func:`~kag_neo4j.rules.derived_check.check_derived`). The results, and
    the violations."""
    results: list[RuleResult] = []
    violations: list[ConstraintViolation] = []
    for rule in compiled:
        retracted = 0
        derived = 0
        for statement in rule.statements:
            try:
                record = tx.run(statement.cypher, bind(statement, rule, instant)).single()
            except neo4j.exceptions.ClientError as exc:
                raise RuleError(f"{rule.location}: rule {rule.id} failed in Neo4j: {exc.message}; "
                                "nothing was written. Check the values the rule reads (dates, numbers)") from exc
            count = int(record[0]) if record is not None else 0
            if statement.purpose == "retract":
                retracted += count
            else:
                derived = count
        rejected = check_derived(tx, rule, schema)  # constraints: invalid derived values are removed
        violations.extend(rejected)
        results.append(RuleResult(id=rule.id, kind=rule.kind, version=rule.version, retracted=retracted,
                                  derived=derived - len(rejected), rejected=len(rejected)))
    return results, violations


def apply_rules(db: Database, rules: RuleSet, *, as_of: str | date | datetime | None = None) -> ApplyResult:
    """Apply ``rules`` once, in one write transaction (not registered: a later load does not
    re-apply them; :func:`kag_neo4j.rules.registry.apply_and_register` does)."""
    instant = parse_as_of(as_of)
    compiled = compile_all(rules)

    violations: list[ConstraintViolation] = []

    def work(tx: Transaction) -> list[RuleResult]:
        results, found = run_rules(tx, compiled, instant, rules.schema_)
        violations[:] = found  # a retried transaction starts over
        mark_changed(tx, "rules apply")  # derived facts change the graph (GDS projections are per version)
        return results

    applied = db.write_tx(work)
    return ApplyResult(as_of=instant.isoformat(), rules=applied, violations=violations)


def explain(rule: CompiledRule, as_of: datetime, kb: KnowledgeBase | None = None) -> str:
    """The rule's statements, each preceded by its ``:param`` lines, ready for Neo4j Browser, as they
    run in the knowledge base ``kb`` (default: the default one)."""
    blocks = []
    for statement in rule.statements:
        text, params = (kb or KnowledgeBase()).scope(statement.cypher, bind(statement, rule, as_of))
        lines = [f"// {statement.purpose}"] + [f":param {key} => {cypher_literal(value)};" for key, value in params.items()]
        blocks.append("\n".join(lines) + "\n" + text + ";")
    return "\n\n".join(blocks)

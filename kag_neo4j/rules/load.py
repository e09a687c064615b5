"""Read rule files into a :class:`RuleSet`: ``.schema`` files (their ``rule: [[ … ]]`` blocks),
``concept.rule`` files and plain files of ``Define`` rules or ``MATCH`` queries.

Each rule gets an id from its head, ``Namespace:Subject-predicate->Object`` (e.g.
``RiskMining:App-belongTo->TaxOfRiskApp/赌博应用``), and a version: a checksum of its text with
whitespace runs collapsed (re-indenting a rule does not change its version, editing it does).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from kag_neo4j.rules import ast
from kag_neo4j.rules.errors import RuleCompileError, RuleError
from kag_neo4j.rules.parser import parse_region, parse_rules, read_text
from kag_neo4j.schema.models import ResolvedSchema
from kag_neo4j.schema.parser import parse_schema
from kag_neo4j.schema.validate import validate_schema

_RULE_OPEN = re.compile(r"^[ \t]*rule\s*:\s*\[\s*\[", re.MULTILINE)
_RULE_CLOSE = re.compile(r"\]\s*\][ \t]*$", re.MULTILINE)


class LoadedRule(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    version: str
    rule: ast.Rule
    #: 1-based position in the rule set (files in the order given, rules in file order)
    position: int


class RuleSet(BaseModel):
    """The rules (and queries) of one or more files, with the schema when a file was one."""

    model_config = ConfigDict(frozen=True)

    sources: tuple[str, ...]
    #: the text of each source (what ``rules apply`` registers, so a load can re-apply the set)
    texts: tuple[str, ...] = ()
    namespace: str | None = None
    rules: tuple[LoadedRule, ...] = ()
    queries: tuple[ast.Query, ...] = ()
    schema_: ResolvedSchema | None = None

    def get(self, key: str) -> LoadedRule:
        """A rule by id, by its head without the namespace, or by its 1-based position."""
        for rule in self.rules:
            if key in (rule.id, rule.id.partition(":")[2], str(rule.position)):
                return rule
        known = "\n  ".join(f"{r.position}. {r.id}" for r in self.rules) or "(none)"
        raise RuleError(f"no rule {key!r} in {', '.join(self.sources)}; the rules are:\n  {known}")


def rule_version(text: str) -> str:
    return hashlib.sha256(" ".join(text.split()).encode("utf-8")).hexdigest()[:16]


def _type_text(node: ast.NodePattern) -> str:
    if not node.types:
        return "*"
    return "|".join(t.name if t.concept is None else f"{t.name}/{t.concept}" for t in node.types)


def rule_id(rule: ast.Rule) -> str:
    head = rule.head
    body = f"{_type_text(head.subject)}-{head.predicate.types[0]}->{_type_text(head.object)}"
    return f"{rule.namespace}:{body}" if rule.namespace else body


def rule_head(identifier: str) -> tuple[str, str, str]:
    """``(subject type, predicate, object type)`` of a rule id (:func:`rule_id`), without the
    namespace and concept names: ``RiskMining:Person-belongTo->TaxOfRiskUser/赌博App开发者`` gives
    ``("Person", "belongTo", "TaxOfRiskUser")``; an untyped end is ``"*"``."""
    body = identifier.split(":", 1)[1] if ":" in identifier.split("-", 1)[0] else identifier
    left, _, obj = body.rpartition("->")
    subject, _, predicate = left.rpartition("-")
    return subject.split("/", 1)[0], predicate, obj.split("/", 1)[0]


def schema_rule_regions(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` offsets of the bodies of the ``rule: [[ … ]]`` blocks of a schema text."""
    regions: list[tuple[int, int]] = []
    position = 0
    while True:
        opened = _RULE_OPEN.search(text, position)
        if opened is None:
            return regions
        line_start = text.rfind("\n", 0, opened.start()) + 1
        if text[line_start : opened.start() + 1].lstrip().startswith("#"):
            position = opened.end()
            continue
        closed = _RULE_CLOSE.search(text, opened.end())
        if closed is None:
            return regions  # the schema parser reports the unclosed block
        regions.append((opened.end(), closed.start()))
        position = closed.end()


def _from_schema(path: Path, text: str) -> tuple[list[ast.Rule], str | None, ResolvedSchema | None]:
    document = parse_schema(text, source=str(path))
    rules: list[ast.Rule] = []
    for start, end in schema_rule_regions(text):
        rules.extend(parse_region(text, str(path), start, end, document.namespace))
    schema = validate_schema(document) if document.namespace else None
    return rules, document.namespace, schema


def load_rules(paths: Iterable[str | Path], *, schema: ResolvedSchema | None = None) -> RuleSet:
    """Parse every file (in order) into one rule set; rule ids must be unique across them.
    ``schema`` (e.g. read from the database) is used when no file is a ``.schema``."""
    return load_rule_texts([(str(raw), read_text(Path(raw))) for raw in paths], schema=schema)


def load_rule_texts(files: Iterable[tuple[str, str]], *, schema: ResolvedSchema | None = None) -> RuleSet:
    """:func:`load_rules` over ``(source, text)`` pairs (e.g. a rule set stored in the database)."""
    sources: list[str] = []
    texts: list[str] = []
    rules: list[ast.Rule] = []
    queries: list[ast.Query] = []
    namespaces: set[str] = set()
    for source, text in files:
        path = Path(source)
        sources.append(source)
        texts.append(text)
        if path.suffix == ".schema":
            found, namespace, file_schema = _from_schema(path, text)
            rules.extend(found)
            if file_schema is not None:
                schema = file_schema
        else:
            parsed = parse_rules(text, str(path))
            rules.extend(parsed.rules)
            queries.extend(parsed.queries)
            namespace = parsed.namespace
        if namespace:
            namespaces.add(namespace)
    if len(namespaces) > 1:
        raise RuleError(f"the files {', '.join(sources)} declare different namespaces ({', '.join(sorted(namespaces))}); "
                        "apply one namespace at a time")
    loaded: list[LoadedRule] = []
    seen: dict[str, ast.Rule] = {}
    for position, rule in enumerate(rules, start=1):
        identifier = rule_id(rule)
        if identifier in seen:
            raise RuleCompileError(rule.location, f"expected one rule per head, found a second {identifier} "
                                   f"(the first is at {seen[identifier].location}); merge them or rename one")
        seen[identifier] = rule
        loaded.append(LoadedRule(id=identifier, version=rule_version(rule.text), rule=rule, position=position))
    return RuleSet(sources=tuple(sources), texts=tuple(texts), namespace=next(iter(namespaces), None), rules=tuple(loaded),
                   queries=tuple(queries), schema_=schema)

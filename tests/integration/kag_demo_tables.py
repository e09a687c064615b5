"""Reading KAG's demo CSV tables with the csv module, for the tests' and benchmarks' independent
computations (never through the loader)."""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from kag_neo4j.schema.models import ResolvedRelation, ResolvedSchema

#: the demos' multi-value separators (``、`` occurs inside ids, so it is none)
SEPARATORS = (",", "，")


def table(folder: Path, name: str) -> list[dict[str, str]]:
    """The rows of ``folder/name.csv`` (stripped keys and cells); none when the file is absent."""
    path = folder / f"{name}.csv"
    if not path.exists():
        return []
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return [{k.strip(): (v or "").strip() for k, v in row.items()} for row in csv.DictReader(handle)]


def cell_values(cell: str) -> list[str]:
    """The values of a multi-value cell, in order (``a,b`` or ``a，b``)."""
    for sep in SEPARATORS[1:]:
        cell = cell.replace(sep, SEPARATORS[0])
    return [part.strip() for part in cell.split(SEPARATORS[0]) if part.strip()]


def _key(text: str) -> str:
    """Names compared loosely: case, spaces, ``_`` and punctuation do not matter."""
    return re.sub(r"[\W_]+", " ", text).strip().casefold()


@dataclass
class SpoExpected:
    """What an ``S,P,O`` table of a demo folder becomes under a schema (see :func:`spo_expected`)."""

    #: typed facts: (subject type, relation, object type) -> rows
    typed: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    #: typed facts one by one: (subject, relation, object, confidence, other properties as sorted items)
    facts: set[tuple[object, ...]] = field(default_factory=set)
    #: rows whose predicate the schema does not declare between the ends (open facts)
    open_facts: int = 0
    #: ends that stay untyped (distinct names)
    untyped: set[str] = field(default_factory=set)
    #: rows not fully typed (what the load reports)
    reported: int = 0


def spo_expected(folder: Path, schema: ResolvedSchema, spo: str = "SPO") -> SpoExpected:
    """The typing an ``S,P,O`` table gets from ``schema``, computed over the folder's CSVs: the
    subject's type is the one entity type that declares the predicate (by name or display name),
    else the type of the one entity record of the folder's tables named like the subject (name,
    id or alias; case, spaces and ``_`` do not matter); the object's type is the predicate's
    range on the subject's type, else the type of the one entity record or concept named like
    it. A fact is typed when the subject's type declares the predicate; the other rows are open
    facts. A typed end that names a record is that record (its id), else a node of that name."""
    kinds = {t.name: t.kind.value for t in schema.types}
    declared = {t.name: {(r.name, r.display_name): r for r in t.relations if not r.rule} for t in schema.types}

    def relation(type_name: str, predicate: str) -> ResolvedRelation | None:
        for (name, display), rel in declared.get(type_name, {}).items():
            if predicate in (name, display) or _key(predicate) in (_key(name), _key(display or "")):
                return rel
        return None

    names: dict[str, set[tuple[str, str]]] = {}  # key -> {(type, record id)}
    for type_name, kind in kinds.items():
        for r in table(folder, type_name):
            record = r.get("id") or r.get("idx") or ""
            if kind not in ("EntityType", "ConceptType") or not record:
                continue
            for text in (record, r.get("name") or r.get("title") or "", *cell_values(r.get("alias", ""))):
                if text:
                    names.setdefault(_key(text), set()).add((type_name, record))

    def record(text: str, allowed: set[str]) -> tuple[str, str] | None:
        found = {hit for hit in names.get(_key(text), set()) if hit[0] in allowed}
        return next(iter(found)) if len(found) == 1 else None

    entity_types = {t for t, kind in kinds.items() if kind == "EntityType"}
    concept_types = {t for t, kind in kinds.items() if kind == "ConceptType"}
    out = SpoExpected()
    for r in table(folder, spo):
        s, p, o = r["S"], r["P"], r["O"]
        domains = [t for t in entity_types if relation(t, p) is not None]
        subject = (record(s, {domains[0]}) or (domains[0], s)) if len(domains) == 1 else record(s, entity_types)
        rel = relation(subject[0], p) if subject is not None else None
        if rel is not None:
            obj: tuple[str, str] | None = record(o, {rel.target}) or (rel.target, o)
        else:
            obj = record(o, entity_types | concept_types)
        out.untyped |= {_key(text) for text, end in ((s, subject), (o, obj)) if end is None}
        if rel is None or subject is None or obj is None:
            out.open_facts += 1
            out.reported += 1
            continue
        out.typed[(subject[0], rel.name, rel.target)] += 1
        properties = json.loads(r.get("properties") or "{}")
        confidence = properties.pop("confidence", 1.0)
        out.facts.add((subject[1], rel.name, obj[1], confidence, tuple(sorted(properties.items()))))
    return out

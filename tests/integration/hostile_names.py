"""Hostile names and questions, and the checks that nothing of them was executed or created.

Shared by ``tests/integration/test_hostile_names.py`` (a representative subset) and
``benchmarks/faults_injection.py`` (all of them). The names go in where a model or a file
chooses names: extracted entity/event types, predicates, event roles and property keys (a
scripted LLM in full mode), and CSV/JSON column names, ``label`` values and file stems
(structured records). Questions and plans go through ``KAG.ask`` with a scripted planner.

Every payload aims at a *canary*: a ``(:Canary)`` node planted before the run. A payload that
ran would delete it, set ``pwned`` on it, create a ``:Pwned`` node or the ``pwned`` index, or
drop the ``entity_id`` constraint. :class:`Audit` also compares labels, relationship types,
property keys, indexes, constraints, procedures and functions before and after against what
the data model allows.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kag_neo4j.builder.records import SourceDocument
from kag_neo4j.errors import InvalidIdentifierError
from kag_neo4j.models.base import ChatMessage
from kag_neo4j.models.scripted import ScriptedLLM
from kag_neo4j.schema.models import ResolvedSchema
from kag_neo4j.store import cypher
from kag_neo4j.store.database import Database
from kag_neo4j.store.identifiers import RESERVED_LABELS, RESERVED_RELATIONSHIP_TYPES, check_identifier

_DELETE = "MATCH (c:Canary) DETACH DELETE c"
_SET = "MATCH (c:Canary) SET c.pwned = true"
_CREATE = "CREATE (:Pwned {by: 'payload'})"

#: names a model or a table might choose for a type, predicate, role or property key
HOSTILE_NAMES: tuple[str, ...] = (
    f"Person`) {_DELETE} //",
    f"Person` {_DELETE} //",
    f"x`]->(b) {_CREATE} //",
    f"}})-[:X]->({_CREATE}) //",
    "})-[:X]->(",
    f"a\n{_DELETE}",
    f"name' }}) {_SET} //",
    f'name" }}) {_SET} //',
    f"Foo\\u0060) {_DELETE} //",
    "x` IF EXISTS DROP CONSTRAINT entity_id //",
    "CREATE INDEX pwned IF NOT EXISTS FOR (n:Pwned) ON (n.x)",
    f"{{{{ {_CREATE} }}}}",
    "{% for x in range(3) %}Pwned{% endfor %}",
    f"CALL apoc.cypher.runWrite('{_DELETE}', {{}})",
    "Company:Pwned",
    "Company|Pwned",
    "n.pwned",
    "$rows",
    "Chunk", "Document", "Entity", "Concept", "Event", "KagRun", "KagStep", "SchemaType", "KagTestDatabase",
    "CITES", "MENTIONED_IN", "PART_OF", "NEXT", "RELATED", "BELONGS_TO", "HAS_STEP", "USED",
    "chunk", "cites", "part_of",
    "Ｃｈｕｎｋ",  # full-width
    "ＣＩＴＥＳ",
    "Сhunk",  # Cyrillic С
    "Dοcument",  # Greek omicron
    "CІTES",  # Cyrillic І
    "Chunk\u200b",  # zero-width space
    "Chunk\x00",
    "Area²",
    "id", "name", "embedding", "chunk_ids", "doc_ids", "predicate", "aliases",
    "",
    "   ",
    "1Person",
    "_private",
    "__Entity__",
    "x" * 300,
)

#: a schema applied before the hostile load: its Chunk type is stored as SpgChunk
HOSTILE_SCHEMA = """\
namespace Hostile

Person(人物): EntityType
  properties:
    born: Text
  relations:
    founded: Company

Company: EntityType

Chunk: EntityType
"""

#: mentions and questions that are punctuation only or Lucene syntax (and payloads)
HOSTILE_MENTIONS: tuple[str, ...] = (
    "—", "?!", "…", "¿¡", "()", "*", "*:*", "name:*", "\\", '"', "/", "a AND", "OR NOT", "[a TO z]", "~", "^2",
    '"unterminated', f"') YIELD node {_DELETE} //", f"x` {_CREATE} //",
)

HOSTILE_QUESTIONS: tuple[str, ...] = (
    "?!",
    "—",
    f"Who founded `) {_DELETE} //?",
    f"What is {{{{ {_CREATE} }}}}?",
    "*:* OR name:* AND /regex/ ~ ^2 [a TO z] \\",
    "Which Chunk CITES the Document?",
)


# --------------------------------------------------------------------------- load inputs


def hostile_extraction(name: str, number: int) -> dict[str, Any]:
    """A full-mode extraction answer whose entity type, event type, predicate, role and property
    keys are ``name`` (for the chunk of :func:`hostile_documents` number ``number``)."""
    return {
        "entities": [{"name": "Ada Pembroke", "type": "Person", "properties": {name: "p"}},
                     {"name": "Harrow Rail", "type": "Company"},
                     {"name": f"Thing {number}", "type": name, "properties": {"semanticType": name}}],
        "relations": [{"subject": "Ada Pembroke", "predicate": "founded", "object": "Harrow Rail",
                       "properties": {name: 1}},
                      {"subject": "Ada Pembroke", "predicate": name, "object": f"Thing {number}"}],
        "events": [{"name": f"Happening {number}", "type": name, "roles": {name: "Ada Pembroke"},
                    "properties": {name: "e"}}],
    }


def hostile_documents(names: Sequence[str]) -> list[SourceDocument]:
    """One text document per name, each mentioning the entities of :func:`hostile_extraction`."""
    documents = []
    for number in range(len(names)):
        text = f"Ada Pembroke founded Harrow Rail. Thing {number} and Happening {number} are here."
        documents.append(SourceDocument(id=f"hostile{number}", title=f"hostile {number}",
                                        source=f"test:hostile{number}.md", text=f"# hostile {number}\n\n{text}\n",
                                        media_type="text/markdown", sha256=hashlib.sha256(text.encode()).hexdigest()))
    return documents


_NUMBER = re.compile(r"Thing (\d+) and Happening")


def extraction_llm(names: Sequence[str]) -> ScriptedLLM:
    """A scripted extraction model: the chunk of document ``n`` gets :func:`hostile_extraction` of ``names[n]``."""
    def reply(messages: list[ChatMessage]) -> dict[str, Any]:
        found = _NUMBER.search(messages[-1].content)
        if found is None or int(found.group(1)) >= len(names):
            return {"entities": [], "relations": []}
        return hostile_extraction(names[int(found.group(1))], int(found.group(1)))

    return ScriptedLLM(reply)


def hostile_tables(folder: Path, names: Sequence[str]) -> list[Path]:
    """CSV and JSON record files whose column names, ``label`` values and stems are ``names``."""
    folder.mkdir(parents=True, exist_ok=True)
    fixed = {"id", "name", "label", "srcid", "dstid", "s", "p", "o", "from", "to", "fromtype", "totype", "properties"}
    usable = [name for name in names if name.strip() and "\x00" not in name and name.casefold() not in fixed]
    paths = []
    nodes = folder / "Company.csv"
    with nodes.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "name", "label", *usable])
        for number, name in enumerate(usable):
            writer.writerow([f"c{number}", f"Company {number}", name, *(f"v{number}" for _ in usable)])
    paths.append(nodes)
    edges = folder / "Chunk_CITES_Document.csv"
    with edges.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["srcId", "dstId", *usable])
        writer.writerow(["c0", "c1", *("x" for _ in usable)])
    paths.append(edges)
    records = folder / "nodes.json"
    records.write_text(json.dumps(
        [{"id": f"j{number}", "name": f"Record {number}", "label": name, "properties": {name: number}, name: name}
         for number, name in enumerate(usable)], ensure_ascii=False), encoding="utf-8")
    paths.append(records)
    links = folder / "edges.json"
    links.write_text(json.dumps(
        [{"from": "j0", "fromType": name, "to": "j1", "toType": name, "label": name, name: 1} for name in usable],
        ensure_ascii=False), encoding="utf-8")
    paths.append(links)
    spo = folder / "facts.csv"
    with spo.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["S", "P", "O"])
        for name in usable:
            writer.writerow(["Company 0", name, "Company 1"])
    paths.append(spo)
    return paths


# --------------------------------------------------------------------------- ask inputs


def hostile_plan(mention: str, type_name: str = "Person", predicate: str = "founded") -> dict[str, str]:
    """A planner reply whose Retrieval names ``mention`` as an entity of ``type_name``."""
    def quoted(text: str) -> str:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'

    return {"logical_form": (
        "Step1: Who is it?\n"
        f"Action1: Retrieval(s=s1:{quoted(type_name)}[{quoted(mention)}], p=p1:{quoted(predicate)}, o=o1:Entity)\n"
        "Action2: Output(o1)")}


def planner_llm(plan: dict[str, str] | Callable[[str], dict[str, str]]) -> ScriptedLLM:
    """A scripted LLM: the planner gets ``plan``, every other prompt an empty answer."""
    empty = {"answer": "", "evidence": [], "answerable": False, "query": "?!"}

    def reply(messages: list[ChatMessage]) -> dict[str, Any]:
        if "You are the planner" in messages[0].content:
            return plan(messages[-1].content) if callable(plan) else plan
        return empty

    return ScriptedLLM(reply)


# --------------------------------------------------------------------------- checks


def plant_canary(db: Database) -> None:
    db.write(cypher.query("eval/bench_canary_plant"))


def executed_payloads(db: Database) -> list[str]:
    """What payloads did to the canary, the marker label and the schema (``[]``: nothing)."""
    row = db.read(cypher.query("eval/bench_canary_check"))[0]
    done = []
    if row["canaries"] != 1:
        done.append(f"canary deleted ({row['canaries']} left)")
    if row["pwned_canaries"]:
        done.append("canary modified")
    if row["pwned_nodes"]:
        done.append(f"{row['pwned_nodes']} :Pwned nodes created")
    names = {r["name"] for r in db.read(cypher.query("store/list_indexes"))}
    if any("pwned" in name.casefold() for name in names):
        done.append("pwned index created")
    if "entity_id" not in {r["name"] for r in db.read(cypher.query("store/list_constraints"))}:
        done.append("entity_id constraint dropped")
    return done


def _is_identifier(name: str) -> bool:
    try:
        check_identifier(name)
    except InvalidIdentifierError:
        return False
    return True


_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def _hostile_key(key: str) -> bool:
    """A property key no load may create: not an identifier, or one of the hostile names that is
    not a plain ASCII identifier (a look-alike such as ``Ｃｈｕｎｋ`` or ``Сhunk``)."""
    return not _is_identifier(key) or (key in HOSTILE_NAMES and not _PLAIN.fullmatch(key))


@dataclass
class Snapshot:
    labels: set[str]
    types: set[str]
    keys: set[str]
    indexes: set[str]
    constraints: set[str]
    procedures: set[str]


def snapshot(db: Database) -> Snapshot:
    row = db.read(cypher.query("eval/bench_model_audit"))[0]
    return Snapshot(
        labels=set(row["labels"]), types=set(row["types"]), keys=set(row["keys"]),
        indexes={r["name"] for r in db.read(cypher.query("store/list_indexes"))},
        constraints={r["name"] for r in db.read(cypher.query("store/list_constraints"))},
        procedures={*db.read(cypher.query("eval/bench_procedures"))[0]["names"],
                    *db.read(cypher.query("eval/bench_functions"))[0]["names"]},
    )


@dataclass
class Audit:
    """What appeared between :meth:`start` and :meth:`findings` that the data model does not allow.

    Allowed: kag-neo4j's own labels and relationship types, the labels and relationship types of
    ``schemas`` (applied before :meth:`start`), and property keys that are identifiers and not
    look-alikes. Indexes
    (but lookup and constraint-backed ones), constraints, procedures and functions must not
    change at all.
    """

    db: Database
    schemas: Sequence[ResolvedSchema] = ()
    before: Snapshot | None = None
    allowed_labels: set[str] = field(default_factory=set)
    allowed_types: set[str] = field(default_factory=set)

    def start(self) -> Audit:
        self.before = snapshot(self.db)
        self.allowed_labels = set(RESERVED_LABELS) | {label for s in self.schemas for t in s.types for label in t.labels}
        self.allowed_types = set(RESERVED_RELATIONSHIP_TYPES) | {
            r.rel_type for s in self.schemas for t in s.types for r in t.relations}
        return self

    def snapshot_now(self) -> Snapshot:
        return snapshot(self.db)

    def findings(self) -> dict[str, list[str]]:
        assert self.before is not None, "call start() first"
        after, before = snapshot(self.db), self.before
        return {
            "labels": sorted(after.labels - before.labels - self.allowed_labels),
            "relationship types": sorted(after.types - before.types - self.allowed_types),
            "property keys": sorted(k for k in after.keys - before.keys if _hostile_key(k)),
            "indexes": sorted(after.indexes ^ before.indexes),
            "constraints": sorted(after.constraints ^ before.constraints),
            "procedures": sorted(after.procedures ^ before.procedures),
        }


def hostile_strings(texts: Iterable[str]) -> list[str]:
    """The payload-bearing strings among ``texts`` (those a Cypher or Lucene parser would choke on)."""
    return [text for text in texts if not _is_identifier(text)]

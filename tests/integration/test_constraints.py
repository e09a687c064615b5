"""Schema constraints hold on every write path, against a real Neo4j: a structured CSV load, a
full-mode load (scripted LLM), the CLI's --json report, and rule-derived properties. A
violation names the file and row (or chunk, or rule and node) and the property; the offending
value is absent from the graph and the rest of the record is present. Also: which of Neo4j's
own constraints the running edition offers."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import neo4j
import pytest

from kag_neo4j.builder.pipeline import LoadOptions, LoadSummary, load
from kag_neo4j.builder.records import SourceDocument
from kag_neo4j.config import Settings
from kag_neo4j.models.base import ChatMessage
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.models.scripted import ScriptedLLM
from kag_neo4j.rules.apply import apply_rules
from kag_neo4j.rules.load import load_rules
from kag_neo4j.schema.validate import load_schema
from kag_neo4j.store.database import Database
from tests.integration.cli_env import load_app
from tests.integration.conftest import TEST_DIMENSION

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "constraints"
SCHEMA = FIXTURES / "Checked.schema"
TABLES = [FIXTURES / "Customer.csv", FIXTURES / "Account.csv", FIXTURES / "Account_transfer_Account.csv"]
BOOKKEEPING = {"embedding", "chunk_ids", "doc_ids", "created_at", "updated_at", "alias_text", "name_key", "family",
               "aliases", "description", "id", "name", "record_id"}


def _no_llm(messages: list[ChatMessage]) -> dict[str, Any]:
    raise AssertionError("structured records need no model call")


def _found(summary: LoadSummary) -> set[tuple[str, int | None, str, str, str | None]]:
    return {(Path(v.where.file or "").name, v.where.row, v.type_name, f"{v.property}:{v.constraint}", v.value)
            for v in summary.violations}


def _node(db: Database, label: str, name: str) -> dict[str, Any]:
    rows = db.read("MATCH (n:Entity {name: $name}) WHERE $label IN labels(n) RETURN properties(n) AS p",
                   name=name, label=label)
    assert len(rows) == 1, (label, name, rows)
    return {k: v for k, v in rows[0]["p"].items() if k not in BOOKKEEPING}


def test_a_structured_load_leaves_out_exactly_the_bad_values(db: Database, test_settings: Settings) -> None:
    summary = load(TABLES, db, test_settings, LoadOptions(mode="full", spg_schema=load_schema(SCHEMA)),
                   llm=ScriptedLLM(_no_llm), embedder=HashingEmbedder(TEST_DIMENSION))
    assert _found(summary) == {
        ("Customer.csv", 2, "Customer", "age:ValueType", "thirty"),
        ("Customer.csv", 2, "Customer", "phone:ValueType", "12345"),
        ("Customer.csv", 2, "Customer", "email:ValueType", "bob-at-example"),
        ("Customer.csv", 2, "Customer", "signup:ValueType", "20231345"),
        ("Customer.csv", 2, "Customer", "tier:Enum", "platinum"),
        ("Customer.csv", 2, "Customer", "code:Regular", "X-9"),
        ("Customer.csv", 3, "Customer", "score:ValueType", "high"),
        ("Customer.csv", 3, "Customer", "tier:NotNull", None),
        ("Customer.csv", 3, "Customer", "referredBy:MultiValue", "c1, c2"),
        ("Account.csv", 2, "Account", "balance:ValueType", "lots"),
        ("Account_transfer_Account.csv", 2, "Account.transfer", "amount:ValueType", "12.5"),
        ("Account_transfer_Account.csv", 2, "Account.transfer", "channel:Enum", "cash"),
    }
    assert summary.constraint_violations == 12
    # row 1 is clean: every value written, typed as the schema says
    assert _node(db, "Customer", "Alice") == {"age": 34, "score": 4.5, "phone": "13800138000", "tier": "gold",
                                              "email": "alice@example.com", "signup": "2023-01-05", "code": "C-0001"}
    assert _node(db, "Customer", "Bob") == {"score": 4.0}  # the rest of the record
    assert _node(db, "Customer", "Carol") == {"age": 41, "phone": "13900139000", "email": "carol@example.com",
                                              "signup": "2023-02-28", "code": "C-0003"}
    assert _node(db, "Account", "Ledger Two") == {}
    # typed records are identified by their record id (kept in record_id)
    ids = db.read("MATCH (n:Customer|Account) RETURN n.name AS name, n.record_id AS id ORDER BY id")
    assert [(r["id"], r["name"]) for r in ids] == [("a1", "Ledger One"), ("a2", "Ledger Two"), ("a3", "Ledger Three"),
                                                   ("a4", "Ledger Four"), ("c1", "Alice"), ("c2", "Bob"), ("c3", "Carol")]
    assert _node(db, "Account", "Ledger Three") == {"balance": 7.0}
    edges = db.read("MATCH (a:Customer)-[r]->(b) WHERE type(r) IN ['owns', 'referredBy'] "
                    "RETURN a.name AS a, type(r) AS t, b.name AS b ORDER BY a, b")
    assert [(e["a"], e["t"], e["b"]) for e in edges] == [  # Bob owns two (MultiValue); Carol's referredBy is gone
        ("Alice", "owns", "Ledger One"), ("Bob", "owns", "Ledger Three"), ("Bob", "owns", "Ledger Two"),
        ("Carol", "owns", "Ledger Four")]
    transfers = db.read("MATCH (a)-[r:transfer]->(b) RETURN a.name AS a, b.name AS b, r.amount AS amount, "
                        "r.channel AS channel ORDER BY a")
    assert transfers == [{"a": "Ledger One", "b": "Ledger Two", "amount": 100, "channel": "bank"},
                         {"a": "Ledger Two", "b": "Ledger Three", "amount": None, "channel": None}]


TEXT = "Dave is a gold customer, code C-1234, aged about forty. Erin is a customer too."
ANSWER = {
    "entities": [
        {"name": "Dave", "type": "Customer", "properties": {"tier": "gold", "code": "C-1234", "age": "about forty",
                                                             "email": "dave at home"}},
        {"name": "Erin", "type": "Customer", "properties": {"code": "E-1"}},
    ],
    "relations": [{"subject": "Dave", "predicate": "score", "object": "excellent"},
                  {"subject": "Erin", "predicate": "score", "object": "3.5"}],
}


def test_a_full_mode_load_reports_the_chunk(db: Database, test_settings: Settings) -> None:
    doc = SourceDocument(id="people", title="people", source="test:people.md", text=f"# People\n\n{TEXT}\n",
                         media_type="text/markdown", sha256=hashlib.sha256(TEXT.encode()).hexdigest())
    llm = ScriptedLLM(lambda messages: ANSWER if "Dave is a gold" in messages[-1].content else {"entities": []})
    summary = load([], db, test_settings, LoadOptions(mode="full", spg_schema=load_schema(SCHEMA)), documents=[doc],
                   llm=llm, embedder=HashingEmbedder(TEST_DIMENSION))
    chunk = db.read("MATCH (c:Chunk)-[:PART_OF]->(:Document {id: 'people'}) WHERE c.text CONTAINS 'Dave' "
                    "RETURN c.id AS id")[0]["id"]
    found = {(v.where.file, v.where.row, v.where.chunk, v.property, v.constraint, v.value) for v in summary.violations}
    assert found == {
        ("test:people.md", None, chunk, "age", "ValueType", "about forty"),
        ("test:people.md", None, chunk, "email", "ValueType", "dave at home"),
        ("test:people.md", None, chunk, "code", "Regular", "E-1"),
        ("test:people.md", None, chunk, "score", "ValueType", "excellent"),
        ("test:people.md", None, chunk, "tier", "NotNull", None),  # Erin has none
    }
    assert all(f"chunk {chunk}" in v.message for v in summary.violations)
    assert _node(db, "Customer", "Dave") == {"tier": "gold", "code": "C-1234"}
    assert _node(db, "Customer", "Erin") == {"score": 3.5}


def test_the_load_command_reports_violations_in_json(db: Database, monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path) -> None:
    from typer.testing import CliRunner

    app = load_app(monkeypatch, db.connection, tmp_path, TEST_DIMENSION)
    result = CliRunner().invoke(app, ["load", str(FIXTURES / "Account.csv"), "--schema", str(SCHEMA),
                                      "--mode", "light", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["constraint_violations"] == 1
    (violation,) = report["violations"]
    assert violation["where"]["file"].endswith("Account.csv") and violation["where"]["row"] == 2
    assert (violation["property"], violation["constraint"], violation["value"]) == ("balance", "ValueType", "lots")
    assert violation["message"].endswith("Account.balance = 'lots' breaks ValueType (Float: a number); "
                                         "value not written")


def test_a_rule_deriving_an_invalid_value_is_reported_and_not_written(db: Database) -> None:
    db.write("UNWIND $rows AS r CREATE (:Entity:Shop {id: r[0], name: r[0], grade: r[1], boxes: r[2]})",
             rows=[["s1", "good", 2], ["s2", "excellent", 3], ["s3", "bad", 4]])
    rules = load_rules([FIXTURES / "Derived.schema"])
    result = apply_rules(db, rules)
    found = {(v.where.rule, v.where.node, v.property, v.constraint, v.value) for v in result.violations}
    assert found == {
        ("Derived:Shop-rating->Text", "s2", "rating", "Enum", "excellent"),
        ("Derived:Shop-stock->Integer", "s2", "stock", "ValueType", "7.5"),
    }
    counts = {r.id: (r.derived, r.rejected) for r in result.rules}
    assert counts == {"Derived:Shop-rating->Text": (2, 1), "Derived:Shop-stock->Integer": (2, 1)}
    rows = db.read("MATCH (s:Shop) RETURN s.id AS id, s.rating AS rating, s.rating_derived_by AS by, "
                   "s.stock AS stock ORDER BY id")
    assert rows == [
        {"id": "s1", "rating": "good", "by": "Derived:Shop-rating->Text", "stock": 5},
        {"id": "s2", "rating": None, "by": None, "stock": None},  # nothing of the invalid values, no provenance
        {"id": "s3", "rating": "bad", "by": "Derived:Shop-rating->Text", "stock": 10},
    ]
    again = apply_rules(db, rules)  # re-applying gives the same report and graph
    assert {(v.where.node, v.property) for v in again.violations} == {("s2", "rating"), ("s2", "stock")}
    assert db.read("MATCH (s:Shop) RETURN s.id AS id, s.rating AS rating, s.rating_derived_by AS by, "
                   "s.stock AS stock ORDER BY id") == rows


def test_rules_apply_reports_rejected_values(db: Database, test_settings: Settings) -> None:
    from typer.testing import CliRunner

    from kag_neo4j.cli import app
    from tests.integration.test_solver_cli import _env

    db.write("CREATE (:Entity:Shop {id: 's9', name: 's9', grade: 'so-so', boxes: 2})")
    result = CliRunner().invoke(app, ["rules", "apply", str(FIXTURES / "Derived.schema"), "--json"],
                                env=_env(test_settings))
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert {r["id"]: r["rejected"] for r in report["rules"]} == {"Derived:Shop-rating->Text": 1,
                                                                  "Derived:Shop-stock->Integer": 0}
    (violation,) = report["violations"]
    assert (violation["where"]["rule"], violation["where"]["node"], violation["property"], violation["value"]) == \
        ("Derived:Shop-rating->Text", "s9", "rating", "so-so")


def _edition(db: Database) -> str:
    return db.read("CALL dbms.components() YIELD edition RETURN edition")[0]["edition"]


def test_uniqueness_is_a_neo4j_constraint_and_existence_needs_enterprise(db: Database, test_settings: Settings) -> None:
    load([FIXTURES / "Account.csv"], db, test_settings, LoadOptions(mode="full", spg_schema=load_schema(SCHEMA)),
         llm=ScriptedLLM(_no_llm), embedder=HashingEmbedder(TEST_DIMENSION))
    constraints = {row["name"]: row for row in db.read(
        "SHOW CONSTRAINTS YIELD name, type, labelsOrTypes, properties RETURN *")}
    for label in ("Customer", "Account"):
        found = constraints[f"spg_{label}_id"]
        assert (found["type"], found["labelsOrTypes"], found["properties"]) == ("UNIQUENESS", [label], ["id"])
    with pytest.raises(neo4j.exceptions.ConstraintError):  # Neo4j itself refuses a second Account with that id
        db.write("MATCH (a:Account) WITH a LIMIT 1 CREATE (:Account {id: a.id})")
    if _edition(db) != "community":
        pytest.skip("the Enterprise-only constraint kinds are only refused by Community")
    for ddl in ("CREATE CONSTRAINT kag_test_exists FOR (n:Customer) REQUIRE n.tier IS NOT NULL",
                "CREATE CONSTRAINT kag_test_type FOR (n:Customer) REQUIRE n.age IS :: INTEGER"):
        with pytest.raises(neo4j.exceptions.DatabaseError, match="requires Neo4j Enterprise Edition"):
            db.write(ddl)


def test_the_refresh_after_a_load_holds_derived_values_to_the_constraints(db: Database, test_settings: Settings) -> None:
    """Registered rules re-applied at the end of a load are checked as ``rules apply`` is."""
    from kag_neo4j.rules.registry import apply_and_register
    from tests.integration.rules_support import line_document, line_extractor

    derived = FIXTURES / "Derived.schema"

    def _load(doc_id: str, lines: list[str]) -> LoadSummary:
        return load([], db, test_settings, LoadOptions(spg_schema=load_schema(derived)),
                    documents=[line_document(doc_id, lines)], extractor=line_extractor,
                    embedder=HashingEmbedder(TEST_DIMENSION))

    _load("first", ["s1|Shop grade=good"])
    assert apply_and_register(db, load_rules([derived])).violations == []
    summary = _load("second", ["s2|Shop grade=excellent"])
    assert summary.rules is not None and summary.rules.error is None
    assert {(v.where.rule, v.property, v.constraint, v.value) for v in summary.rules.violations} == {
        ("Derived:Shop-rating->Text", "rating", "Enum", "excellent")}
    assert {r.id: r.rejected for r in summary.rules.rules}.get("Derived:Shop-rating->Text") == 1
    rows = db.read("MATCH (s:Shop) RETURN s.name AS name, s.rating AS rating, s.rating_derived_by AS by ORDER BY name")
    assert rows == [{"name": "s1", "rating": "good", "by": "Derived:Shop-rating->Text"},
                    {"name": "s2", "rating": None, "by": None}]

"""KAG's riskmining rules (the RiskMining schema's two rules + its concept.rule) applied to a
small hand-built graph; the derived facts are checked against the same logic written in Python,
then re-applied (nothing changes) and re-applied after an input changed (exactly the dependent
facts go)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kag_neo4j.rules.apply import apply_rules
from kag_neo4j.rules.load import load_rules
from kag_neo4j.store.database import Database

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FILES = [FIXTURES / "schemas" / "RiskMining.schema", FIXTURES / "rules" / "kag" / "riskmining_concept.rule"]

# People p1..p5, apps, devices, companies, certificates (invented ids).
APPS = {"a1": "赌博", "a2": "UNKNOWN", "a3": "涉嫌赌博推广"}
DEVICES = {f"d{i}": [] for i in range(1, 16)}
HAS_DEVICE = {"p1": [f"d{i}" for i in range(1, 8)],     # 7 devices
              "p2": [f"d{i}" for i in range(8, 14)],    # 6 devices
              "p3": ["d14", "d15"]}
INSTALL = {**{d: ["a1"] for d in HAS_DEVICE["p1"]},        # p1: 7 devices with a1 -> develops a1
           **{d: ["a2", "a3"] for d in HAS_DEVICE["p2"]},  # p2: 6 with a2 and a3 -> develops a2, a3
           "d14": ["a1"], "d15": ["a1"]}
HOLD_SHARE = {"p4": ["c1"], "p5": ["c2"], "p3": ["c2"]}
HAS_CERT = {"c1": ["k1"], "c2": ["k2"]}
USE_CERT = {"a1": "k1", "a3": "k2", "a2": "k3"}
FUND_TRANS = [("p4", "p1"), ("p5", "p2"), ("p3", "p4")]


def build(db: Database) -> None:
    rows: list[dict[str, Any]] = []
    db.write("UNWIND $ids AS id CREATE (:Entity:Person {id: id, name: id})", ids=["p1", "p2", "p3", "p4", "p5"])
    db.write("UNWIND keys($apps) AS id CREATE (:Entity:App {id: id, riskMark: $apps[id]})", apps=APPS)
    db.write("UNWIND $ids AS id CREATE (:Entity:Device {id: id})", ids=list(DEVICES))
    db.write("UNWIND $ids AS id CREATE (:Entity:Company {id: id})", ids=["c1", "c2"])
    db.write("UNWIND $ids AS id CREATE (:Entity:Cert {id: id})", ids=["k1", "k2", "k3"])
    for rel, source, target, mapping in (
        ("hasDevice", "Person", "Device", HAS_DEVICE), ("install", "Device", "App", INSTALL),
        ("holdShare", "Person", "Company", HOLD_SHARE), ("hasCert", "Company", "Cert", HAS_CERT),
    ):
        rows = [{"s": s, "o": o} for s, targets in mapping.items() for o in targets]
        db.write(f"UNWIND $rows AS row MATCH (s:{source} {{id: row.s}}), (o:{target} {{id: row.o}}) CREATE (s)-[:{rel}]->(o)",
                 rows=rows)
    db.write("UNWIND keys($m) AS a MATCH (s:App {id: a}), (o:Cert {id: $m[a]}) CREATE (s)-[:useCert]->(o)", m=USE_CERT)
    db.write("UNWIND $rows AS row MATCH (s:Person {id: row[0]}), (o:Person {id: row[1]}) "
             "CREATE (s)-[:fundTrans {transAmt: 100, transDate: '20240101'}]->(o)", rows=[list(r) for r in FUND_TRANS])


def expected(apps: dict[str, str]) -> dict[str, set[Any]]:
    """The rules' meaning, computed in Python from the same input."""
    developed = set()
    for person, devices in HAS_DEVICE.items():
        for app in APPS:
            if len({d for d in devices if app in INSTALL.get(d, [])}) > 5:
                developed.add((person, app))
    release = set()
    for person, companies in HOLD_SHARE.items():
        for company in companies:
            for cert in HAS_CERT.get(company, []):
                release |= {(person, app) for app, used in USE_CERT.items() if used == cert}
    gambling = {app for app, mark in apps.items() if "赌博" in mark}
    developers = {p for p, a in developed if a in gambling}
    bosses = {s for s, a in release if a in gambling for u, a2 in developed if a2 == a and (s, u) in FUND_TRANS}
    return {"developed": developed, "release": release, "赌博应用": gambling, "赌博App开发者": developers,
            "赌博App老板": bosses}


def derived(db: Database) -> dict[str, set[Any]]:
    pairs = db.read("MATCH (s)-[r]->(o) WHERE r.derived_by IS NOT NULL AND type(r) <> 'BELONGS_TO' "
                    "RETURN type(r) AS type, s.id AS s, o.id AS o")
    members = db.read("MATCH (s)-[r:BELONGS_TO]->(c:Concept) WHERE r.derived_by IS NOT NULL RETURN c.name AS c, s.id AS s")
    out: dict[str, set[Any]] = {"developed": set(), "release": set(), "赌博应用": set(), "赌博App开发者": set(), "赌博App老板": set()}
    for row in pairs:
        out[row["type"]].add((row["s"], row["o"]))
    for row in members:
        out[row["c"]].add(row["s"])
    return out


def dump(db: Database) -> list[Any]:
    rels = db.read("MATCH (a)-[r]->(b) RETURN labels(a) AS la, a.id AS a, type(r) AS t, b.id AS b, properties(r) AS p")
    nodes = db.read("MATCH (n) WHERE NOT n:KagTestDatabase AND NOT n:KagMigration AND NOT n:KagMeta RETURN labels(n) AS l, properties(n) AS p")
    return sorted(repr(sorted(row.items())) for row in rels + nodes)


def test_riskmining_rules_derive_what_the_python_reading_says(db: Database) -> None:
    build(db)
    rules = load_rules(FILES)
    result = apply_rules(db, rules, as_of="2024-02-01")
    want = expected(APPS)
    assert want["developed"] == {("p1", "a1"), ("p2", "a2"), ("p2", "a3")}  # the fixture is not vacuous
    assert want["赌博App老板"] == {"p4", "p5"}
    assert derived(db) == want
    by_id = {r.id: r for r in result.rules}
    assert by_id["RiskMining:Person-developed->App"].derived == 3
    # provenance: rule id and version on every derived edge
    rows = db.read("MATCH ()-[r:developed]->() RETURN DISTINCT r.derived_by AS by, r.rule_version AS v")
    assert rows == [{"by": "RiskMining:Person-developed->App", "v": by_id["RiskMining:Person-developed->App"].version}]
    concept = db.read("MATCH (c:Concept {id: 'concept:赌博应用'}) RETURN labels(c) AS l, c.name AS n")
    assert concept == [{"l": ["Concept", "TaxOfRiskApp"], "n": "赌博应用"}] or sorted(concept[0]["l"]) == ["Concept", "TaxOfRiskApp"]


def test_reapply_changes_nothing_and_an_input_change_retracts_exactly_its_consequences(db: Database) -> None:
    build(db)
    rules = load_rules(FILES)
    apply_rules(db, rules, as_of="2024-02-01")
    before = dump(db)
    again = apply_rules(db, rules, as_of="2024-02-01")
    assert dump(db) == before
    assert all(r.retracted == r.derived for r in again.rules)
    # a1 is no longer a gambling app: p1 stops being a developer, p4 a boss; a3 (p2, p5) stays
    db.write("MATCH (a:App {id: 'a1'}) SET a.riskMark = 'UNKNOWN'")
    apply_rules(db, rules, as_of="2024-02-01")
    changed = dict(APPS, a1="UNKNOWN")
    assert derived(db) == expected(changed)
    assert expected(changed)["赌博App老板"] == {"p5"} and expected(changed)["赌博App开发者"] == {"p2"}
    # nothing a rule did not derive was touched
    assert db.read("MATCH ()-[r:fundTrans]->() RETURN count(r) AS n") == [{"n": 3}]


def test_an_extracted_edge_of_a_derived_type_is_never_retracted(db: Database) -> None:
    build(db)
    db.write("MATCH (p:Person {id: 'p3'}), (a:App {id: 'a2'}) CREATE (p)-[:developed {chunk_ids: ['doc#1']}]->(a)")
    rules = load_rules(FILES)
    apply_rules(db, rules, as_of="2024-02-01")
    apply_rules(db, rules, as_of="2024-02-01")
    rows = db.read("MATCH (:Person {id: 'p3'})-[r:developed]->(:App {id: 'a2'}) RETURN r.chunk_ids AS c, r.derived_by AS by")
    assert rows == [{"c": ["doc#1"], "by": None}]

"""KAG's supplychain rules on a small hand-built graph: derived properties with dates (``now()``
is the recorded "as of" date), a property rule that reads other rules' properties, a relation
over a derived property, and the event chain of concept.rule (Action blocks that create events
which other rules then classify). Checked against the same logic written in Python."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest

from kag_neo4j.rules.apply import apply_rules
from kag_neo4j.rules.load import load_rules
from kag_neo4j.store.database import Database

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SCHEMA = FIXTURES / "schemas" / "SupplyChain.schema"
CONCEPTS = FIXTURES / "rules" / "kag" / "supplychain_concept.rule"
AS_OF = date(2023, 9, 30)
COMPANIES = ["C1", "C2", "C3", "C4"]
FUND = [("C2", "C1", "20230925", 700), ("C3", "C1", "20230801", 300), ("C1", "C3", "20230920", 50),
        ("C1", "C4", "20230301", 40), ("C4", "C2", "20230929", 5), ("C3", "C1", "20230915", 100)]


def build(db: Database) -> None:
    db.write("UNWIND $ids AS id CREATE (:Entity:Company {id: id, name: id + ' Ltd'})", ids=COMPANIES)
    db.write("UNWIND $ids AS id CREATE (:Entity:Product {id: id})", ids=["P1", "P2"])
    db.write("UNWIND $rows AS r MATCH (s:Company {id: r[0]}), (o:Company {id: r[1]}) "
             "CREATE (s)-[:fundTrans {transDate: r[2], transAmt: r[3]}]->(o)", rows=[list(f) for f in FUND])
    db.write("MATCH (p1:Product {id: 'P1'}), (p2:Product {id: 'P2'}), (c1:Company {id: 'C1'}), (c2:Company {id: 'C2'}) "
             "CREATE (c1)-[:product]->(p1)-[:hasSupplyChain]->(p2)<-[:product]-(c2)")
    db.write("MATCH (p:Product {id: 'P1'}) CREATE (:Event:ProductChainEvent {id: 'E1', name: 'P1 price up', "
             "index: $index, trend: $trend})-[:subject]->(p)", index="价格", trend="上涨")


def days(text: str) -> int:
    return (AS_OF - date(int(text[:4]), int(text[4:6]), int(text[6:]))).days


def expected_properties() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {c: {} for c in COMPANIES}
    for company in COMPANIES:
        incoming = [f for f in FUND if f[1] == company]
        if incoming:
            out[company]["totalTransInAmt"] = sum(f[3] for f in incoming)
        for window, suffix in ((30, "1Month"), (90, "3Month")):
            outs = [f[3] for f in FUND if f[0] == company and days(f[2]) < window]
            ins = [f[3] for f in FUND if f[1] == company and days(f[2]) < window]
            if outs:
                out[company][f"fundTrans{suffix}"] = sum(outs)
            if ins:
                out[company][f"fundTrans{suffix}In"] = sum(ins)
            out[company][f"cashflowDiff{suffix}"] = sum(outs) - sum(ins)
    return out


def test_derived_properties_follow_the_as_of_date(db: Database) -> None:
    build(db)
    result = apply_rules(db, load_rules([SCHEMA]), as_of=AS_OF.isoformat())
    keys = ["totalTransInAmt", "fundTrans1Month", "fundTrans1MonthIn", "fundTrans3Month", "fundTrans3MonthIn",
            "cashflowDiff1Month", "cashflowDiff3Month"]
    rows = db.read("MATCH (c:Company) RETURN c.id AS id, properties(c) AS p")
    got = {row["id"]: {k: row["p"][k] for k in keys if k in row["p"]} for row in rows}
    want = expected_properties()
    assert want["C1"]["fundTrans1MonthIn"] == 800 and want["C1"]["cashflowDiff1Month"] == 50 - 800
    assert got == want
    # the as-of date is recorded on what used now(), not on what did not
    c1 = {row["id"]: row["p"] for row in rows}["C1"]
    assert c1["fundTrans1Month_as_of"] == "2023-09-30T00:00:00+00:00"
    assert "totalTransInAmt_as_of" not in c1 and c1["totalTransInAmt_derived_by"] == "SupplyChain:Company-totalTransInAmt->Float"
    assert result.as_of == "2023-09-30T00:00:00+00:00"
    # mainSupply reads totalTransInAmt (derived first): C2 paid C1 700 of 1100 > 50%
    assert db.read("MATCH (s)-[r:mainSupply]->(o) RETURN s.id AS s, o.id AS o") == [{"s": "C1", "o": "C2"}]
    # another as-of date moves the windows
    apply_rules(db, load_rules([SCHEMA]), as_of="2023-10-20")
    assert db.read("MATCH (c:Company {id: 'C1'}) RETURN c.fundTrans1MonthIn AS v") == [{"v": 700}]


def test_the_event_chain_creates_classified_events_once(db: Database) -> None:
    build(db)
    rules = load_rules([SCHEMA, CONCEPTS])
    apply_rules(db, rules, as_of=AS_OF.isoformat())
    chain = db.read(
        "MATCH (e1:ProductChainEvent)-[:leadTo]->(e2:CompanyEvent)-[:leadTo]->(e3:CompanyEvent) "
        "MATCH (e2)-[:subject]->(c2:Company), (e3)-[:subject]->(c3:Company) "
        "MATCH (e2)-[:BELONGS_TO]->(k2:Concept), (e3)-[:BELONGS_TO]->(k3:Concept) "
        "RETURN e1.id AS e1, e2.name AS n2, c2.id AS c2, k2.name AS k2, e3.name AS n3, c3.id AS c3, k3.name AS k3"
    )
    assert chain == [{"e1": "E1", "n2": "C2 Ltd成本上升事件", "c2": "C2", "k2": "成本上涨",
                      "n3": "C2 Ltd利润下跌事件", "c3": "C2", "k3": "利润下跌"}]
    counts = "MATCH (e:Event) RETURN count(e) AS events, count{ ()-[:leadTo]->() } AS links"
    first = db.read(counts)
    apply_rules(db, rules, as_of=AS_OF.isoformat())
    assert db.read(counts) == first == [{"events": 3, "links": 2}]
    # the source event no longer rises in price: the whole chain is retracted
    db.write("MATCH (e:ProductChainEvent {id: 'E1'}) SET e.trend = $t", t="下跌")
    apply_rules(db, rules, as_of=AS_OF.isoformat())
    assert db.read(counts) == [{"events": 1, "links": 0}]

"""Acceptance for KAG's supplychain demo at the Cypher level: the excerpt in
tests/fixtures/builder/kag_demos/supplychain is loaded with ``kag-neo4j load --schema``, the
schema's 13 rules and KAG's concept.rule (5) are applied with ``kag-neo4j rules apply --as-of``,
and what the demo's reasoner README asks for - the ten derived properties on every company
(``totalTransInAmt``, ``fundTrans1Month`` … ``cashflowDiff6Month``), ``mainSupply``,
``belongToIndustry``, ``sameLegalRepresentative`` and the event chain (``ProductChainEvent`` ->
``leadTo`` -> the created ``CompanyEvent``s -> ``leadTo`` -> ``CompanyEvent``s) - is read back
in Cypher and compared with the rules' meaning computed here, with the csv module, directly over
the CSV files.

What the columns refer to: ``Company.product``, ``Product.hasSupplyChain`` and
``ProductChainEvent.subject`` list Product ids (a product ``Product.csv`` lacks is no node: the
reference is dropped), ``Product.belongToIndustry`` an Industry concept, ``Person.legalRepresentative``
companies by name, the transfer file's first two columns company ids (each row one transfer);
``CompanyUpdate.csv`` replaces the products of its company. What the rules mean (their text in
SupplyChain.schema and concept.rule): ``date_diff(from_unix_time(now(), 'yyyyMMdd'), f.transDate)``
is the signed number of days from the transfer to the "as of" date, and the windows keep it
``< 30 / 90 / 180`` (a transfer dated after the "as of" date has a negative difference: it
counts); a sum over no transfer gives no value, and ``cashflowDiff`` counts a missing sum as 0,
so it is on every company; ``mainSupply`` is the share of ``s``'s incoming amount paid by ``o``,
``> 0.5``, where ``o`` makes a product downstream of one of ``s``'s; ``sameLegalRepresentative``
pairs two different companies with a common legal representative; each 价格上涨 product event
creates one 成本上涨 CompanyEvent per company making a product downstream of its subject, and
each of those one 利润下跌 event for the same company.

``expected_facts``, ``derived_facts`` and ``WHAT`` are also used by
benchmarks/supplychain_acceptance.py over the full demo.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import date
from pathlib import Path

import pytest

from kag_neo4j.store.database import Database
from tests.integration.kag_demo_cli import load_and_apply
from tests.integration.kag_demo_tables import cell_values, table

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FOLDER = FIXTURES / "builder" / "kag_demos" / "supplychain"
SCHEMA = FIXTURES / "schemas" / "SupplyChain.schema"
CONCEPT_RULE = FIXTURES / "rules" / "kag" / "supplychain_concept.rule"
#: the fixture's transfers of 2023-08-21, 2023-06-22 and 2023-03-24 are exactly 30, 90 and 180
#: days before it (outside the windows), the one of 2023-08-22 29 days (inside)
AS_OF = date(2023, 9, 20)

WINDOWS = {"1Month": 30, "3Month": 90, "6Month": 180}
PROPERTIES = ["totalTransInAmt", *(f"fundTrans{s}" for s in WINDOWS), *(f"fundTrans{s}In" for s in WINDOWS),
              *(f"cashflowDiff{s}" for s in WINDOWS)]
PRICE_UP, COST_UP, PROFIT_DOWN = "价格上涨", "成本上涨", "利润下跌"

#: what is compared, in order: a derived property (values per company) or a set of facts
WHAT: dict[str, str] = {
    **{p: f"Company.{p} (companies with a value)" for p in PROPERTIES},
    "mainSupply": "Company -[mainSupply]-> Company",
    "belongToIndustry": "Company -[belongToIndustry]-> Industry",
    "sameLegalRepresentative": "Company -[sameLegalRepresentative]-> Company",
    "price events": f"ProductChainEvent belongTo {PRICE_UP}",
    "cost events": "ProductChainEvent -[leadTo]-> CompanyEvent (company, name, index, trend)",
    "cost members": f"CompanyEvent belongTo {COST_UP}",
    "profit events": "CompanyEvent -[leadTo]-> CompanyEvent (from, to, index, trend)",
    "profit members": f"CompanyEvent belongTo {PROFIT_DOWN}",
    "chains": "paths ProductChainEvent -[leadTo]-> CompanyEvent -[leadTo]-> CompanyEvent",
    "company event nodes": "CompanyEvent nodes (company, name; duplicates counted)",
}

QUERIES: dict[str, str] = {
    "mainSupply": "MATCH (s:Company)-[:mainSupply]->(o:Company) RETURN s.record_id AS a, o.record_id AS b",
    "belongToIndustry": "MATCH (s:Company)-[:belongToIndustry]->(o:Concept:Industry) "
                        "RETURN s.record_id AS a, o.name AS b",
    "sameLegalRepresentative": "MATCH (s:Company)-[:sameLegalRepresentative]->(o:Company) "
                               "RETURN s.record_id AS a, o.record_id AS b",
    "price events": "MATCH (e:ProductChainEvent)-[:BELONGS_TO]->(:Concept:TaxOfProdEvent {name: $price_up}) "
                    "RETURN e.record_id AS a",
    "cost events": "MATCH (s:ProductChainEvent)-[:leadTo]->(o:CompanyEvent)-[:subject]->(c:Company) "
                   "RETURN s.record_id AS a, c.record_id AS b, o.name AS c, o.index AS d, o.trend AS e",
    "cost members": "MATCH (e:CompanyEvent)-[:BELONGS_TO]->(:Concept:TaxOfCompanyEvent {name: $cost_up}), "
                    "(e)-[:subject]->(c:Company) RETURN c.record_id AS a, e.name AS b",
    "profit events": "MATCH (s:CompanyEvent)-[:leadTo]->(o:CompanyEvent), (s)-[:subject]->(a:Company), "
                     "(o)-[:subject]->(b:Company) RETURN s.name AS a, o.name AS b, b.record_id AS c, "
                     "o.index AS d, o.trend AS e",
    "profit members": "MATCH (e:CompanyEvent)-[:BELONGS_TO]->(:Concept:TaxOfCompanyEvent {name: $profit_down}), "
                      "(e)-[:subject]->(c:Company) RETURN c.record_id AS a, e.name AS b",
    "chains": "MATCH (p:ProductChainEvent)-[:leadTo]->(x:CompanyEvent)-[:leadTo]->(y:CompanyEvent) "
              "RETURN p.record_id AS a, x.name AS b, y.name AS c",
}
PARAMS = {"price_up": PRICE_UP, "cost_up": COST_UP, "profit_down": PROFIT_DOWN}


def _day(text: str) -> date:
    digits = text.replace("-", "")
    return date(int(digits[:4]), int(digits[4:6]), int(digits[6:8]))


def _prefixes(concept: str) -> list[str]:
    parts = concept.split("-")
    return ["-".join(parts[: i + 1]) for i in range(len(parts))]


def expected_facts(folder: Path, as_of: date, dangling: str = "skip") -> dict[str, object]:
    """The rules' meaning over the CSVs, in plain Python (see the module docs). ``dangling``: what
    the load did with a reference to a product ``Product.csv`` lacks - ``skip`` it (the default)
    or ``create`` a bare Product (no industry, no supply chain)."""
    companies = {r["id"]: r["name"] for r in table(folder, "Company")}
    by_name = {name: cid for cid, name in companies.items()}
    products = {}
    for r in table(folder, "Product"):
        products.setdefault(r["id"], r)
    industries = {p for r in table(folder, "Industry") for p in _prefixes(r["id"])}

    def known(cell: str) -> set[str]:
        return {p for p in cell_values(cell) if dangling == "create" or p in products}

    made = {r["id"]: known(r["product"]) for r in table(folder, "Company")}
    for r in table(folder, "CompanyUpdate"):
        made[r["id"]] = known(r["products"])
    supply: dict[str, set[str]] = defaultdict(set)
    supply.update({p: known(r["hasSupplyChain"]) for p, r in products.items()})
    industry = {p: r["belongToIndustry"] for p, r in products.items() if r["belongToIndustry"] in industries}
    transfers = [(r["srcId"], r["dstId"], _day(r["transDate"]), int(r["transAmt"]))
                 for r in table(folder, "Company_fundTrans_Company")
                 if r["srcId"] in companies and r["dstId"] in companies]

    out: dict[str, object] = {}
    total_in: dict[str, int] = defaultdict(int)
    for _, dst, _, amount in transfers:
        total_in[dst] += amount
    out["totalTransInAmt"] = dict(total_in)
    for suffix, days in WINDOWS.items():
        sent: dict[str, int] = defaultdict(int)
        received: dict[str, int] = defaultdict(int)
        for src, dst, day, amount in transfers:
            if (as_of - day).days < days:
                sent[src] += amount
                received[dst] += amount
        out[f"fundTrans{suffix}"] = dict(sent)
        out[f"fundTrans{suffix}In"] = dict(received)
        out[f"cashflowDiff{suffix}"] = {c: sent.get(c, 0) - received.get(c, 0) for c in companies}

    paid: dict[tuple[str, str], int] = defaultdict(int)  # (s, o): what o paid s
    for src, dst, _, amount in transfers:
        paid[(dst, src)] += amount

    def downstream(s: str, o: str) -> bool:
        # (s)-[:product]->(up)-[:hasSupplyChain]->(down)<-[:product]-(o), two different product edges
        return any(down in made[o] and not (s == o and up == down) for up in made[s] for down in supply[up])

    out["mainSupply"] = {(s, o) for (s, o), amount in paid.items() if downstream(s, o) and amount / total_in[s] > 0.5}
    out["belongToIndustry"] = {(c, industry[p]) for c, owned in made.items() for p in owned if p in industry}
    represents = [{by_name[n] for n in cell_values(r["legalRepresentative"]) if n in by_name}
                  for r in table(folder, "Person")]
    out["sameLegalRepresentative"] = {(s, o) for group in represents for s in group for o in group if s != o}

    events = [e for e in table(folder, "ProductChainEvent") if known(e["subject"])]
    price_up = {e["id"] for e in events if e["index"] == "价格" and e["trend"] == "上涨"}
    hit = {e["id"]: sorted(c for c, owned in made.items() if owned & supply[e["subject"]])
           for e in events if e["id"] in price_up}
    cost_name = {c: companies[c] + "成本上升事件" for ids in hit.values() for c in ids}
    profit_name = {c: companies[c] + "利润下跌事件" for c in cost_name}
    out["price events"] = price_up
    out["cost events"] = {(e, c, cost_name[c], "成本", "上涨") for e, ids in hit.items() for c in ids}
    out["cost members"] = {(c, cost_name[c]) for ids in hit.values() for c in ids}
    out["profit events"] = {(cost_name[c], profit_name[c], c, "利润", "下跌") for ids in hit.values() for c in ids}
    out["profit members"] = {(c, profit_name[c]) for ids in hit.values() for c in ids}
    out["chains"] = {(e, cost_name[c], profit_name[c]) for e, ids in hit.items() for c in ids}
    out["company event nodes"] = Counter([(c, cost_name[c]) for ids in hit.values() for c in ids]
                                         + [(c, profit_name[c]) for ids in hit.values() for c in ids])
    return out


def derived_facts(db: Database) -> dict[str, object]:
    """The same facts, read in Cypher from what the rules derived."""
    out: dict[str, object] = {}
    for key in PROPERTIES:
        rows = db.read("MATCH (c:Company) WHERE c[$key] IS NOT NULL RETURN c.record_id AS id, c[$key] AS v", key=key)
        out[key] = {r["id"]: r["v"] for r in rows}
    for key, cypher in QUERIES.items():
        rows = db.read(cypher, **PARAMS)
        out[key] = {tuple(r.values()) if len(r) > 1 else r["a"] for r in rows}
    rows = db.read("MATCH (e:CompanyEvent) OPTIONAL MATCH (e)-[:subject]->(c:Company) "
                   "RETURN c.record_id AS c, e.name AS name")
    out["company event nodes"] = Counter((r["c"], r["name"]) for r in rows)
    return out


def test_the_readme_features_and_the_event_chain_are_what_the_rules_define(
        db: Database, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _, report = load_and_apply(db, monkeypatch, tmp_path, FOLDER, SCHEMA, CONCEPT_RULE, AS_OF.isoformat())
    assert not report["violations"]

    want = expected_facts(FOLDER, AS_OF)
    # the excerpt is not vacuous, and has its boundaries: 1662's only transfer within 90 days is
    # 30 days old (so no 1-month outflow), 0037's of 29 days counts, 0010's of 90 days does not
    # count for 3 months, 0067's of 180 days not for 6 months; 1662 paid 2238 exactly half of
    # its incoming amount (not more than half: no mainSupply), 2238 paid 1579 two thirds of its
    assert "CSF0000001662" not in want["fundTrans1Month"] and want["fundTrans3Month"]["CSF0000001662"] == 102191
    assert want["fundTrans1Month"]["CSF0000000037"] == 1000
    assert want["fundTrans3Month"]["CSF0000000010"] == 231143
    assert want["fundTrans6Month"]["CSF0000000010"] == 2231143 and "CSF0000000067" not in want["fundTrans6Month"]
    assert want["totalTransInAmt"]["CSF0000002238"] == 2 * 2000000
    assert want["mainSupply"] == {("CSF0000001579", "CSF0000002238")}
    assert all(want[key] for key in WHAT)

    got = derived_facts(db)
    for key in WHAT:
        assert got[key] == want[key], WHAT[key]

    # provenance: every derived fact names its rule
    rule_ids = {r["id"] for r in report["rules"]}
    by = db.read("MATCH ()-[r:mainSupply|belongToIndustry|sameLegalRepresentative|leadTo]->() "
                 "RETURN collect(DISTINCT r.derived_by) AS by")[0]["by"]
    assert by and set(by) <= rule_ids
    for key in PROPERTIES:
        rows = db.read("MATCH (c:Company) WHERE c[$key] IS NOT NULL RETURN collect(DISTINCT c[$by]) AS by",
                       key=key, by=f"{key}_derived_by")
        assert len(rows[0]["by"]) == 1 and rows[0]["by"][0] in rule_ids, key

"""Acceptance for KAG's riskmining demo at the Cypher level: the excerpt in
tests/fixtures/builder/kag_demos/riskmining is loaded with ``kag-neo4j load --schema``, the
schema's rules and KAG's concept.rule are applied with ``kag-neo4j rules apply``, and the README's
queries - every gambling app, the gambling-app developers and their owners - are asked in Cypher
over the derived classifications and relations. Each answer is compared with the rules' meaning
computed here, with the csv module, directly over the CSV files (what each column refers to:
``Device.install`` lists App ids, ``App.useCert`` and ``Company_hasCert_Cert`` name a Cert by its
``certNum``, the other relation files name records by id).

``expected_sets`` and ``QUERIES`` are also used by benchmarks/riskmining_acceptance.py over the
full demo.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kag_neo4j.store.database import Database
from tests.integration.kag_demo_cli import load_and_apply
from tests.integration.kag_demo_tables import table

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FOLDER = FIXTURES / "builder" / "kag_demos" / "riskmining"
SCHEMA = FIXTURES / "schemas" / "RiskMining.schema"
CONCEPT_RULE = FIXTURES / "rules" / "kag" / "riskmining_concept.rule"
AS_OF = "2024-02-01"

GAMBLING, DEVELOPER, OWNER = "赌博应用", "赌博App开发者", "赌博App老板"

#: The README's questions as Cypher over what the rules derived (``$concept`` names the class).
QUERIES: dict[str, str] = {
    "gambling apps": "MATCH (a:App)-[:BELONGS_TO]->(:Concept:TaxOfRiskApp {name: $gambling}) "
                     "RETURN DISTINCT a.record_id AS s",
    "developers": "MATCH (p:Person)-[:BELONGS_TO]->(:Concept:TaxOfRiskUser {name: $developer}) "
                  "RETURN DISTINCT p.record_id AS s",
    "owners": "MATCH (p:Person)-[:BELONGS_TO]->(:Concept:TaxOfRiskUser {name: $owner}) "
              "RETURN DISTINCT p.record_id AS s",
    "developed (person, app)": "MATCH (p:Person)-[:developed]->(a:App) "
                               "RETURN DISTINCT p.record_id AS s, a.record_id AS o",
    "release (person, app)": "MATCH (p:Person)-[:release]->(a:App) "
                             "RETURN DISTINCT p.record_id AS s, a.record_id AS o",
    # the same sets along the derived relations rather than the classes
    "developers of gambling apps (via developed)":
        "MATCH (p:Person)-[:developed]->(:App)-[:BELONGS_TO]->(:Concept:TaxOfRiskApp {name: $gambling}) "
        "RETURN DISTINCT p.record_id AS s",
    "owners (via release, developed, fundTrans)":
        "MATCH (s:Person)-[:release]->(a:App)-[:BELONGS_TO]->(:Concept:TaxOfRiskApp {name: $gambling}), "
        "(u:Person)-[:developed]->(a), (s)-[:fundTrans]->(u) RETURN DISTINCT s.record_id AS s",
}
PARAMS = {"gambling": GAMBLING, "developer": DEVELOPER, "owner": OWNER}


def expected_sets(folder: Path) -> dict[str, set[object]]:
    """The rule definitions' meaning over the CSVs, in plain Python (keys as the columns use them)."""
    apps = {r["id"]: r for r in table(folder, "App")}
    cert_by_num = {r["certNum"]: r["id"] for r in table(folder, "Cert")}
    installs = {r["id"]: {a.strip() for a in r["install"].split(",") if a.strip() in apps}
                for r in table(folder, "Device")}
    devices: dict[str, set[str]] = {}
    for r in table(folder, "Person_hasDevice_Device"):
        if r["dst"] in installs:
            devices.setdefault(r["src"], set()).add(r["dst"])
    # developed: (s)-[:hasDevice]->(d)-[:install]->(o), group(s,o).count(d) > 5
    developed = {(person, app) for person, owned in devices.items() for app in apps
                 if sum(1 for d in owned if app in installs[d]) > 5}
    # release: (s)-[:holdShare]->(c:Company)-[:hasCert]->(cert)<-[:useCert]-(o)
    company_certs: dict[str, set[str]] = {}
    for r in table(folder, "Company_hasCert_Cert"):
        if r["dst"] in cert_by_num:
            company_certs.setdefault(r["src"], set()).add(cert_by_num[r["dst"]])
    app_cert = {a: cert_by_num.get(r["useCert"]) for a, r in apps.items()}
    release = {(r["src"], app) for r in table(folder, "Person_holdShare_Company")
               for cert in company_certs.get(r["dst"], ()) for app, used in app_cert.items() if used == cert}
    paid = {(r["src"], r["dst"]) for r in table(folder, "Person_fundTrans_Person")}
    gambling = {a for a, r in apps.items() if "赌博" in r["riskMark"]}  # riskMark like "%赌博%"
    developers = {p for p, a in developed if a in gambling}
    owners = {s for s, a in release if a in gambling for u, a2 in developed if a2 == a and (s, u) in paid}
    return {"gambling apps": gambling, "developers": developers, "owners": owners,
            "developed (person, app)": developed, "release (person, app)": release,
            "developers of gambling apps (via developed)": developers,
            "owners (via release, developed, fundTrans)": owners}


def derived_sets(db: Database) -> dict[str, set[object]]:
    out: dict[str, set[object]] = {}
    for name, cypher in QUERIES.items():
        rows = db.read(cypher, **PARAMS)
        out[name] = {(r["s"], r["o"]) if "o" in r else r["s"] for r in rows}
    return out


def test_the_readme_queries_give_the_sets_the_rules_imply(db: Database, monkeypatch: pytest.MonkeyPatch,
                                                            tmp_path: Path) -> None:
    _, report = load_and_apply(db, monkeypatch, tmp_path, FOLDER, SCHEMA, CONCEPT_RULE, AS_OF)

    want = expected_sets(FOLDER)
    # the excerpt is not vacuous and has its boundary cases: person 1 has exactly 5 devices with
    # the gambling apps (not more than 5; one of them, shared with person 0, lists an app twice -
    # still one device), a 诈骗 app is released but is no gambling app
    assert want["gambling apps"] and want["developers"] and want["owners"]
    assert "1" not in want["developers"]
    assert want["release (person, app)"] - {("10", a) for a in want["gambling apps"]}
    got = derived_sets(db)
    for name in QUERIES:
        assert got[name] == want[name], name

    # one class node per concept (the loaded TaxOf* row is the one the rules classify into), and
    # every classification carries the rule that made it
    by_rule = {r["id"]: r for r in report["rules"]}
    for concept, members in ((GAMBLING, want["gambling apps"]), (DEVELOPER, want["developers"]),
                             (OWNER, want["owners"])):
        rows = db.read("MATCH (c:Concept {name: $c}) OPTIONAL MATCH (s)-[r:BELONGS_TO]->(c) "
                       "RETURN count(DISTINCT c) AS nodes, collect(DISTINCT r.derived_by) AS by", c=concept)
        (rule_id,) = [rid for rid in by_rule if rid.endswith("/" + concept)]
        assert rows == [{"nodes": 1, "by": [rule_id]}]
        assert by_rule[rule_id]["derived"] == len(members)

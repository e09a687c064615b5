"""Structured import of KAG's demos (excerpts in tests/fixtures/builder/kag_demos) into a real Neo4j.

Every expected count is computed here from the CSV files with the csv module - from what each
column refers to - never from the loader's output: records identified by their id, references
resolved by the key they use (``certNum``, a company's ``name``), transfers kept one per row,
concept tables as ``:Concept`` nodes with their ``a-b-c`` hierarchy, update files applied.
"""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from kag_neo4j.builder.names import name_key
from kag_neo4j.builder.pipeline import LoadOptions, LoadSummary, load, with_schema_types
from kag_neo4j.builder.readers.common import ReadOptions
from kag_neo4j.builder.readers.mapping import load_mapping
from kag_neo4j.config import Settings
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.schema.validate import load_schema
from kag_neo4j.store.database import Database
from tests.integration.builder_support import snapshot
from tests.integration.cli_env import set_connection_env
from tests.integration.conftest import TEST_DIMENSION
from tests.integration.kag_demo_tables import spo_expected

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
DEMOS = FIXTURES / "builder" / "kag_demos"
SCHEMAS = FIXTURES / "schemas"


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def listed(cell: str) -> list[str]:
    return [part.strip() for part in cell.split(",") if part.strip()]


def count(db: Database, cypher: str, **params: object) -> int:
    return int(db.read(cypher, **params)[0]["n"])


def _load(db: Database, settings: Settings, folder: Path, schema: str, **options: object):
    resolved = load_schema(str(SCHEMAS / schema))
    read = options.pop("read", None)
    return load([folder], db, settings, LoadOptions(mode="light", spg_schema=resolved, similarity=None, **options),
                embedder=HashingEmbedder(TEST_DIMENSION),
                read_options=with_schema_types(read if isinstance(read, ReadOptions) else None, resolved))


def test_riskmining_loads_records_by_id_references_by_key_and_every_transfer(
    db: Database, test_settings: Settings
) -> None:
    folder = DEMOS / "riskmining"
    summary = _load(db, test_settings, folder, "RiskMining.schema")
    table = {name: rows(folder / f"{name}.csv") for name in ("Person", "Company", "Cert", "App", "Device")}
    # one node per record id; the masked company names collide by name key, the records do not
    for name, records in table.items():
        assert count(db, "MATCH (n:Entity&$($l)) RETURN count(n) AS n", l=name) == len({r["id"] for r in records})
    assert len({name_key(r["name"]) for r in table["Company"]}) < len(table["Company"])
    stored = db.read("MATCH (c:Company) RETURN c.record_id AS id, c.name AS name")
    assert {(r["id"], r["name"]) for r in stored} == {(r["id"], r["name"]) for r in table["Company"]}
    # App.useCert and Company_hasCert_Cert refer to Cert.certNum, not Cert.id
    cert_by_num = {r["certNum"]: r["id"] for r in table["Cert"]}
    use_cert = {(a["id"], cert_by_num[a["useCert"]]) for a in table["App"] if a["useCert"] in cert_by_num}
    dangling = [a for a in table["App"] if a["useCert"] not in cert_by_num]
    assert dangling  # the fixture has one on purpose
    got = db.read("MATCH (a:App)-[:useCert]->(c:Cert) RETURN a.record_id AS a, c.record_id AS c")
    assert {(r["a"], r["c"]) for r in got} == use_cert
    has_cert = {(r["src"], cert_by_num[r["dst"]]) for r in rows(folder / "Company_hasCert_Cert.csv")}
    got = db.read("MATCH (a:Company)-[:hasCert]->(c:Cert) RETURN a.record_id AS a, c.record_id AS c")
    assert {(r["a"], r["c"]) for r in got} == has_cert
    # no second set of certificates: every Cert node is a row of Cert.csv
    assert count(db, "MATCH (c:Cert) WHERE NOT c.record_id IN $ids RETURN count(c) AS n",
                 ids=[r["id"] for r in table["Cert"]]) == 0
    # the dangling reference is reported with its file, row and column
    assert sum(summary.dangling_references.values()) == len(dangling)
    assert "App.csv: useCert -> Cert" in summary.dangling_references
    assert any("useCert" in line and dangling[0]["useCert"] in line for line in summary.dangling_samples)
    # every transfer row is its own relationship, with its own date and amount
    transfers = rows(folder / "Person_fundTrans_Person.csv")
    assert len({(t["src"], t["dst"]) for t in transfers}) < len(transfers)
    got = db.read("MATCH (s:Person)-[r:fundTrans]->(o:Person) "
                  "RETURN s.record_id AS s, o.record_id AS o, r.transDate AS d, r.transAmt AS a")
    assert sorted((r["s"], r["o"], r["a"]) for r in got) == sorted(
        (t["src"], t["dst"], int(t["transAmt"])) for t in transfers)
    # multi-valued Device.install -> App ids; Integer-typed age stored as a number
    install = {(d["id"], app) for d in table["Device"] for app in listed(d["install"])}
    got = db.read("MATCH (d:Device)-[:install]->(a:App) RETURN d.record_id AS d, a.record_id AS a")
    assert {(r["d"], r["a"]) for r in got} == install
    ages = db.read("MATCH (p:Person) RETURN p.record_id AS id, p.age AS age")
    assert {r["id"]: r["age"] for r in ages} == {p["id"]: int(p["age"]) for p in table["Person"]}
    # the concept tables are :Concept nodes of their type
    for name in ("TaxOfRiskApp", "TaxOfRiskUser"):
        concepts = {r["id"] for r in rows(folder / f"{name}.csv")}
        got = db.read("MATCH (c:Concept&$($l)) RETURN c.name AS name", l=name)
        assert {r["name"] for r in got} == concepts
        assert count(db, "MATCH (e:Entity&$($l)) RETURN count(e) AS n", l=name) == 0


def test_a_second_load_and_a_replaced_relation_file_change_only_what_they_must(
    db: Database, test_settings: Settings, tmp_path: Path
) -> None:
    folder = tmp_path / "riskmining"
    folder.mkdir()
    for file in (DEMOS / "riskmining").iterdir():
        (folder / file.name).write_bytes(file.read_bytes())
    _load(db, test_settings, folder, "RiskMining.schema")
    before = snapshot(db)
    again = _load(db, test_settings, folder, "RiskMining.schema")
    assert again.documents_loaded == 0 and again.chunks == 0 and again.taxonomy_concepts == 0
    assert snapshot(db) == before
    # one transfer fewer: exactly that relationship goes, the others keep their keys
    transfers = (folder / "Person_fundTrans_Person.csv").read_text(encoding="utf-8").splitlines()
    (folder / "Person_fundTrans_Person.csv").write_text("\n".join(transfers[:-1]) + "\n", encoding="utf-8")
    _load(db, test_settings, folder, "RiskMining.schema")
    assert count(db, "MATCH (:Person)-[r:fundTrans]->(:Person) RETURN count(r) AS n") == len(transfers) - 2


def _prefixes(concept: str) -> set[str]:
    parts = concept.split("-")
    return {"-".join(parts[:i]) for i in range(1, len(parts) + 1)}


def test_supplychain_concepts_hierarchy_names_as_references_and_the_update_file(
    db: Database, test_settings: Settings
) -> None:
    folder = DEMOS / "supplychain"
    summary = _load(db, test_settings, folder, "SupplyChain.schema")
    companies = rows(folder / "Company.csv")
    assert count(db, "MATCH (c:Entity:Company) RETURN count(c) AS n") == len({c["id"] for c in companies})
    # concept tables: every row and every a-b-c prefix is a :Concept of its type, IS_A its parent
    industries = {r["id"] for r in rows(folder / "Industry.csv")}
    implied = set().union(*(_prefixes(i) for i in industries))
    got = db.read("MATCH (c:Concept:Industry) RETURN c.name AS name")
    assert {r["name"] for r in got} == implied
    edges = db.read("MATCH (a:Concept:Industry)-[:IS_A]->(b:Concept:Industry) RETURN a.name AS a, b.name AS b")
    assert {(r["a"], r["b"]) for r in edges} == {(c, c.rsplit("-", 1)[0]) for c in implied if "-" in c}
    assert count(db, "MATCH (e:Entity:Industry) RETURN count(e) AS n") == 0
    # Product.belongToIndustry links the Industry concept
    products = rows(folder / "Product.csv")
    got = db.read("MATCH (p:Product)-[:belongToIndustry]->(c:Concept:Industry) RETURN p.record_id AS p, c.name AS c")
    assert {(r["p"], r["c"]) for r in got} == {(p["id"], p["belongToIndustry"]) for p in products}
    # hasSupplyChain: references to products of the load; the others are reported, not invented
    ids = {p["id"] for p in products}
    supply = {(p["id"], q) for p in products for q in listed(p["hasSupplyChain"]) if q in ids}
    got = db.read("MATCH (p:Product)-[:hasSupplyChain]->(q:Product) RETURN p.record_id AS p, q.record_id AS q")
    assert {(r["p"], r["q"]) for r in got} == supply
    missing = [q for p in products for q in listed(p["hasSupplyChain"]) if q not in ids]
    missing += [q for c in companies for q in listed(c["product"]) if q not in ids]
    assert missing and sum(summary.dangling_references.values()) == len(missing)
    # Person.legalRepresentative names companies by name; masked persons 华* / 华** stay two
    by_name = {c["name"]: c["id"] for c in companies}
    persons = rows(folder / "Person.csv")
    legal = {(p["id"], by_name[n]) for p in persons for n in listed(p["legalRepresentative"])}
    got = db.read("MATCH (p:Person)-[:legalRepresentative]->(c:Company) RETURN p.record_id AS p, c.record_id AS c")
    assert {(r["p"], r["c"]) for r in got} == legal
    hua = [p for p in persons if name_key(p["name"]) == name_key("华*")]
    assert len(hua) == 2
    assert count(db, "MATCH (p:Person) WHERE p.record_id IN $ids RETURN count(p) AS n", ids=[p["id"] for p in hua]) == 2
    # the event: its roles link the Product and the Index/Trend concepts; the values stay readable
    (event,) = rows(folder / "ProductChainEvent.csv")
    got = db.read("MATCH (e:Event:ProductChainEvent)-[:subject]->(p:Product), (e)-[:index]->(i:Concept:Index), "
                  "(e)-[:trend]->(t:Concept:Trend) RETURN e.name AS e, p.record_id AS p, i.name AS i, t.name AS t, "
                  "e.index AS index, e.trend AS trend")
    assert [(r["e"], r["p"], r["i"], r["t"], r["index"], r["trend"]) for r in got] == [
        (event["name"], event["subject"], event["index"], event["trend"], event["index"], event["trend"])]
    # CompanyUpdate.csv updates Company: its products replace the company's products (no new type)
    (update,) = rows(folder / "CompanyUpdate.csv")
    got = db.read("MATCH (c:Company {record_id: $id})-[:product]->(p:Product) RETURN p.record_id AS p", id=update["id"])
    assert {r["p"] for r in got} == {p for p in listed(update["products"]) if p in ids}
    before = {p for c in companies if c["id"] == update["id"] for p in listed(c["product"]) if p in ids}
    assert before != {r["p"] for r in got}
    assert count(db, "MATCH (n:CompanyUpdate) RETURN count(n) AS n") == 0
    # transfers between companies: one relationship per row
    assert count(db, "MATCH (:Company)-[r:fundTrans]->(:Company) RETURN count(r) AS n") == len(
        rows(folder / "Company_fundTrans_Company.csv"))


def test_medicine_disease_table_is_typed_records_and_taxonomies_are_hierarchies(
    db: Database, test_settings: Settings
) -> None:
    folder = DEMOS / "medicine"
    _load(db, test_settings, folder, "Medicine.schema")
    diseases = rows(folder / "Disease.csv")
    got = db.read("MATCH (d:Entity:Disease) RETURN d.record_id AS id, d.name AS name, d.description AS text")
    assert sorted((r["id"], r["name"], r["text"]) for r in got) == sorted(
        (d["idx"], d["title"], d["text"]) for d in diseases)
    # rows of a schema type are records, not passages: one document for the table
    assert count(db, "MATCH (d:Document) WHERE d.source ENDS WITH 'Disease.csv' RETURN count(d) AS n") == 1
    for name in ("HospitalDepartment", "HumanBodyPart"):
        concepts = set().union(*(_prefixes(r["id"]) for r in rows(folder / f"{name}.csv")))
        got = db.read("MATCH (c:Concept&$($l)) RETURN c.name AS name", l=name)
        assert {r["name"] for r in got} == concepts
        edges = count(db, "MATCH (:Concept&$($l))-[r:IS_A]->(:Concept&$($l)) RETURN count(r) AS n", l=name)
        assert edges == sum(1 for c in concepts if "-" in c)


BOOKKEEPING = {"confidence", "chunk_ids", "doc_ids", "instance"}


def _assert_spo_typed(db: Database, folder: Path, summary: LoadSummary) -> None:
    want = spo_expected(folder, load_schema(str(SCHEMAS / "Medicine.schema")))
    # the excerpt has each case: a predicate of one domain (applicableMedicine, and 就诊科室, the
    # display name of hospitalDepartment, into the department taxonomy), a subject named by a
    # record's alias (脂溢性湿疹), a record subject with an undeclared predicate, untyped rows
    assert len(want.typed) == 3 and want.open_facts and want.untyped
    got = db.read("MATCH (a:Entity)-[r]->(b) WHERE type(r) IN $types "
                  "RETURN labels(a) AS la, coalesce(a.record_id, a.name) AS a, type(r) AS p, labels(b) AS lb, "
                  "coalesce(b.record_id, b.name) AS b, properties(r) AS props",
                  types=sorted({rel for _, rel, _ in want.typed}))
    typed = {(r["a"], r["p"], r["b"], r["props"]["confidence"],
              tuple(sorted((k, v) for k, v in r["props"].items() if k not in BOOKKEEPING))) for r in got}
    assert typed == want.facts
    assert Counter((next(t for t in r["la"] if t != "Entity"), r["p"], next(t for t in r["lb"] if t not in
                    ("Entity", "Concept"))) for r in got) == want.typed
    # the department is the taxonomy's concept, the diseases the records: no new nodes
    assert count(db, "MATCH (c:Concept:HospitalDepartment) RETURN count(c) AS n") == len(
        {p for r in rows(folder / "HospitalDepartment.csv") for p in _prefixes(r["id"])})
    assert count(db, "MATCH (d:Disease) RETURN count(d) AS n") == len(rows(folder / "Disease.csv"))
    # what the schema cannot type stays an open fact between untyped (or typed) ends, and is reported
    assert count(db, "MATCH ()-[r:RELATED]->() RETURN count(r) AS n") == want.open_facts
    untyped = db.read("MATCH (e:Entity) WHERE labels(e) = ['Entity'] RETURN e.name AS name")
    assert {re.sub(r"[\W_]+", " ", r["name"]).strip().casefold() for r in untyped} == want.untyped
    assert summary.open_facts == {"SPO.csv": want.reported}
    assert len(summary.open_fact_samples) == want.reported


def test_medicine_spo_rows_are_typed_where_the_schema_says_and_the_rest_reported(
    db: Database, test_settings: Settings
) -> None:
    folder = DEMOS / "medicine"
    _assert_spo_typed(db, folder, _load(db, test_settings, folder, "Medicine.schema"))


def test_spo_rows_loaded_later_name_the_records_and_concepts_already_in_the_graph(
    db: Database, test_settings: Settings, tmp_path: Path
) -> None:
    folder = DEMOS / "medicine"
    first, second = tmp_path / "records", tmp_path / "facts"
    first.mkdir()
    second.mkdir()
    for path in folder.glob("*.csv"):
        (second if path.name == "SPO.csv" else first).joinpath(path.name).write_bytes(path.read_bytes())
    _load(db, test_settings, first, "Medicine.schema")
    _assert_spo_typed(db, folder, _load(db, test_settings, second, "Medicine.schema"))


def test_a_mapping_file_says_what_differently_laid_out_tables_hold(db: Database, test_settings: Settings) -> None:
    folder = DEMOS / "mapped"
    mapping = load_mapping(folder / "kag-mapping.toml")
    _load(db, test_settings, folder, "Medicine.schema", read=ReadOptions(mapping=mapping))
    departments = rows(folder / "departments.csv")
    got = db.read("MATCH (c:Concept:HospitalDepartment) RETURN c.name AS name")
    assert {r["name"] for r in got} == {d["dept"] for d in departments}
    edges = db.read("MATCH (a:HospitalDepartment)-[:IS_A]->(b:HospitalDepartment) RETURN a.name AS a, b.name AS b")
    assert {(r["a"], r["b"]) for r in edges} == {(d["dept"], d["parent_dept"]) for d in departments if d["parent_dept"]}
    illnesses = rows(folder / "illnesses.csv")
    got = db.read("MATCH (d:Entity:Disease) RETURN d.record_id AS id, d.name AS name, d.aliases AS aliases")
    assert sorted((r["id"], r["name"], tuple(r["aliases"])) for r in got) == sorted(
        (i["code"], i["disease"], tuple(listed(i["alias"]))) for i in illnesses)


def test_load_command_type_mapping_and_dangling_flags(
    db: Database, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import typer
    from typer.testing import CliRunner

    from kag_neo4j.cli.load import register

    app = typer.Typer()
    register(app)
    set_connection_env(monkeypatch, db.connection)
    monkeypatch.setenv("KAG_EMBEDDER", "hashing")
    monkeypatch.setenv("KAG_EMBEDDING_DIMENSIONS", str(TEST_DIMENSION))
    monkeypatch.setenv("KAG_HOME", str(tmp_path))
    runner = CliRunner()
    schema = str(SCHEMAS / "RiskMining.schema")
    people = DEMOS / "mapped" / "people_2024.csv"
    result = runner.invoke(app, ["load", str(people), "--schema", schema, "--type", "Person", "--mode", "light",
                                 "--similarity", "0", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["documents_loaded"] == 1
    got = db.read("MATCH (p:Entity:Person) RETURN p.record_id AS id, p.name AS name")
    assert {(r["id"], r["name"]) for r in got} == {(p["id"], p["name"]) for p in rows(people)}
    # --dangling create keeps a reference to a missing record as a bare node of its type
    apps = DEMOS / "riskmining" / "App.csv"
    certs = DEMOS / "riskmining" / "Cert.csv"
    result = runner.invoke(app, ["load", str(apps), str(certs), "--schema", schema, "--mode", "light",
                                 "--dangling", "create", "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    known = {c["certNum"] for c in rows(certs)}
    missing = [a["useCert"] for a in rows(apps) if a["useCert"] not in known]
    assert sum(summary["dangling_references"].values()) == len(missing)
    assert count(db, "MATCH (:App)-[:useCert]->(c:Cert) WHERE c.record_id IN $m RETURN count(c) AS n", m=missing) \
        == len(missing)
    bad = runner.invoke(app, ["load", str(apps), "--mapping", str(tmp_path / "none.toml"), "--mode", "light"])
    assert bad.exit_code == 1 and "none.toml" in bad.output
    wrong = runner.invoke(app, ["load", str(apps), "--dangling", "invent", "--mode", "light"])
    assert wrong.exit_code == 2

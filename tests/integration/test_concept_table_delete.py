"""``kag-neo4j delete`` of a concept table (``Industry.csv`` of KAG's supplychain excerpt, a
``ConceptType`` loaded as a taxonomy): its concepts go with their ``IS_A`` edges and every link
to them, the registered rules it feeds are re-applied, everything else stays as it was; a delete
that fails leaves the graph as it was."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kag_neo4j.builder import delete as delete_module
from kag_neo4j.cli import app
from kag_neo4j.errors import BuilderError
from kag_neo4j.store.database import Database
from tests.integration.kag_demo_cli import load_and_apply
from tests.integration.kag_demo_tables import table

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FOLDER = FIXTURES / "builder" / "kag_demos" / "supplychain"
SCHEMA = FIXTURES / "schemas" / "SupplyChain.schema"
CONCEPT_RULE = FIXTURES / "rules" / "kag" / "supplychain_concept.rule"
AS_OF = "2023-09-20"
#: bookkeeping that a delete changes by design (graph version, rule-set record, taxonomy records)
BOOKKEEPING = ("KagMeta", "KagRuleSet", "KagLoadLease", "KagTestDatabase", "KagRun", "KagStep", "KagMigration",
               "KagMigrationLock")


def _key(labels: list[str], props: dict[str, Any]) -> str:
    if "id" in props:
        return f"{':'.join(sorted(labels))}|{props['id']}"
    return f"{':'.join(sorted(labels))}|{json.dumps(_kept(props), sort_keys=True, ensure_ascii=False, default=str)}"


def _kept(props: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in props.items() if k not in ("embedding", "loaded_at", "load_seq", "updated_at")}


def graph(db: Database) -> tuple[dict[str, str], set[tuple[str, str, str, str]]]:
    """Every node (key -> properties) and relationship (start, type, properties, end) of the graph."""
    keys: dict[str, str] = {}
    nodes: dict[str, str] = {}
    for row in db.read("MATCH (n) WHERE none(l IN labels(n) WHERE l IN $skip) "
                       "RETURN elementId(n) AS eid, labels(n) AS labels, properties(n) AS props",
                       skip=list(BOOKKEEPING)):
        keys[row["eid"]] = key = _key(row["labels"], row["props"])
        nodes[key] = json.dumps(_kept(row["props"]), sort_keys=True, ensure_ascii=False, default=str)
    rels = {(keys[r["a"]], r["type"], json.dumps(r["props"], sort_keys=True, ensure_ascii=False, default=str),
             keys[r["b"]])
            for r in db.read("MATCH (a)-[r]->(b) WHERE none(l IN labels(a) + labels(b) WHERE l IN $skip) "
                             "RETURN elementId(a) AS a, type(r) AS type, properties(r) AS props, elementId(b) AS b",
                             skip=list(BOOKKEEPING))}
    return nodes, rels


def test_deleting_a_concept_table_removes_its_concepts_and_links_and_refreshes_the_rules(
        db: Database, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    runner, applied = load_and_apply(db, monkeypatch, tmp_path, FOLDER, SCHEMA, CONCEPT_RULE, AS_OF)
    industry_rule = next(r["id"] for r in applied["rules"] if r["id"].endswith("belongToIndustry->Industry"))

    # the table's concepts: every row and every a-b-c prefix (computed from the CSV)
    parts = [r["id"].split("-") for r in table(FOLDER, "Industry")]
    concepts = {"-".join(p[: i + 1]) for p in parts for i in range(len(p))}
    ids = {r["id"] for r in db.read("MATCH (c:Concept:Industry) WHERE c.name IN $names RETURN c.id AS id",
                                    names=sorted(concepts))}
    assert len(ids) == len(concepts)
    linked = db.read("MATCH (c:Concept:Industry)-[r]-(n) RETURN collect(DISTINCT type(r)) AS types")[0]["types"]
    assert {"IS_A", "belongToIndustry"} <= set(linked)  # Product rows' links and the rule's Company links
    before = graph(db)
    (table_id,) = [r["id"] for r in db.read(
        "MATCH (m:KagMeta) WHERE m.key ENDS WITH $name RETURN m.document_id AS id", name="/Industry.csv")]

    # a delete that fails inside its transaction leaves the graph as it was
    def broken(tx: Any, reason: str) -> int:
        raise BuilderError("injected failure after the deletes")

    with monkeypatch.context() as patch:
        patch.setattr(delete_module, "mark_changed", broken)
        failed = runner.invoke(app, ["delete", table_id])
    assert failed.exit_code != 0
    assert graph(db) == before

    # an unknown name suggests the table's id
    missing = runner.invoke(app, ["delete", "Industry.csv"])
    assert missing.exit_code == 1 and table_id in missing.output

    deleted = runner.invoke(app, ["delete", str(FOLDER / "Industry.csv"), "--json"])
    assert deleted.exit_code == 0, deleted.output
    (report,) = json.loads(deleted.stdout)
    assert (report["kind"], report["document"], report["concepts"]) == ("concept table", table_id, len(concepts))
    refreshed = {r["id"]: r for r in report["rules"]["rules"]}
    assert not report["rules"]["error"] and not report["rules"]["full"]
    assert refreshed[industry_rule]["derived"] == 0  # re-applied (its edges went with the concepts)

    nodes, rels = graph(db)
    want_nodes = {k: v for k, v in before[0].items() if k.split("|", 1)[1] not in ids}
    want_rels = {r for r in before[1] if r[0].split("|", 1)[1] not in ids and r[3].split("|", 1)[1] not in ids}
    assert nodes == want_nodes
    assert rels == want_rels
    assert report["relations_deleted"] == len(before[1] - want_rels)

    # the refresh left nothing stale: a full re-apply changes nothing
    again = runner.invoke(app, ["rules", "apply", str(SCHEMA), str(CONCEPT_RULE), "--as-of", AS_OF, "--json"])
    assert again.exit_code == 0, again.output
    assert graph(db) == (nodes, rels)
    assert runner.invoke(app, ["delete", table_id]).exit_code == 1  # gone

"""Many knowledge bases in one Neo4j: the same documents in two KBs never meet (load, search, delete,
drop), every query of the product reaches nodes through a KB's labels, and `kag-neo4j kb` manages them."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kag_neo4j.builder.delete import delete_document
from kag_neo4j.builder.pipeline import LoadOptions, load
from kag_neo4j.builder.records import SourceDocument
from kag_neo4j.config import Settings
from kag_neo4j.errors import ConfigError
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.solver.question_search import search
from kag_neo4j.store import cypher, migrations
from kag_neo4j.store.database import Connection, Database
from kag_neo4j.store.kb_admin import drop_kb, kb_names, list_kbs
from tests.integration.builder_support import capitalised_extractor, snapshot
from tests.integration.cli_env import set_connection_env
from tests.integration.conftest import TEST_DIMENSION

ROOT = Path(__file__).resolve().parents[2]

DOCS = {
    "a": "Ada Lovelace worked with Charles Babbage in London. Charles Babbage lived in London.",
    "b": "Ada Lovelace corresponded with Charles Babbage. Charles Babbage met Michael Faraday in London.",
    "c": "Michael Faraday lectured at the Royal Institution. Alan Turing visited Manchester.",
}


def _doc(doc_id: str) -> SourceDocument:
    text = DOCS[doc_id]
    return SourceDocument(id=doc_id, title=doc_id, source=f"test:{doc_id}", text=text,
                          sha256=hashlib.sha256(text.encode()).hexdigest())


def _load(db: Database, settings: Settings, ids: list[str]) -> None:
    load([], db, settings, LoadOptions(max_chars=60, overlap=0), documents=[_doc(i) for i in ids],
         extractor=capitalised_extractor, embedder=HashingEmbedder(TEST_DIMENSION))


def _kb(db: Database, name: str) -> Database:
    view = db.in_kb(name)
    migrations.migrate(view, embedding_dimension=TEST_DIMENSION)
    return view


def _stored_index_names(db: Database) -> list[str]:
    return sorted(db.read(cypher.query("store/stored_index_names"))[0]["names"])


def test_two_knowledge_bases_with_the_same_documents_never_meet(db: Database, test_settings: Settings) -> None:
    legal = _kb(db, "legal")
    _load(legal, test_settings, ["a", "b"])
    legal_alone = snapshot(legal)
    assert legal_alone["documents"] and legal_alone["facts"] and legal_alone["entities"]
    assert snapshot(db)["documents"] == [] and snapshot(db)["entities"] == []  # the default KB saw nothing

    _load(db, test_settings, ["a", "b", "c"])  # the same ids, names and facts in the default KB
    assert snapshot(legal) == legal_alone
    scratch = _kb(db, "scratch")
    _load(scratch, test_settings, ["a", "b", "c"])
    assert snapshot(db) == snapshot(scratch)  # a KB holds what the default one would, labels and all
    assert {e[0] for e in snapshot(db)["entities"]} > {e[0] for e in legal_alone["entities"]}

    embedder = HashingEmbedder(TEST_DIMENSION)
    question = "Michael Faraday lectured at the Royal Institution"
    in_default = search(db, embedder, question, k=10)
    for recipe, backend in (("hybrid", "cypher"), ("dense+ppr", "gds")):  # local PageRank, then GDS's
        found = {name: search(kb, embedder, question, k=10, recipe_name=recipe)
                 for name, kb in (("default", db), ("legal", legal))}
        assert {result.ppr_backend for result in found.values()} == {backend}
        assert "c" in {chunk.document_id for chunk in found["default"].chunks}
        assert {chunk.document_id for chunk in found["legal"].chunks} <= {"a", "b"}
        assert any("ppr" in chunk.ranks for chunk in found["legal"].chunks)
    projections = {row["name"] for row in db.read(cypher.query("solver/list_projections"), prefix="kag_")}
    assert any(name.startswith(f"kag_{db.database}__legal_v") for name in projections)
    assert any(name.startswith(f"kag_{db.database}_v") for name in projections)

    default_before = snapshot(db)
    assert delete_document(legal, "a").found
    assert snapshot(db) == default_before  # a delete in one KB leaves the other's document
    assert [d[0] for d in snapshot(legal)["documents"]] == ["b"]

    assert kb_names(db) == ["default", "legal", "scratch"]
    sizes = {kb.name: kb for kb in list_kbs(db)}
    assert sizes["legal"].documents == 1 and sizes["default"].documents == 3 and sizes["scratch"].migrated

    report = drop_kb(db, "legal")
    assert report.labels > 0 and report.constraints > 0 and report.indexes > 0 and report.projections >= 1
    assert kb_names(db) == ["default", "scratch"]
    assert not [name for name in _stored_index_names(db) if name.startswith("legal__")]
    assert snapshot(db) == default_before
    assert search(db, embedder, question, k=10).chunks == in_default.chunks


def test_answers_and_their_traces_stay_in_their_knowledge_base(db: Database) -> None:
    from kag_neo4j.api import KAG
    from kag_neo4j.solver.trace import TraceNotFoundError, read_trace
    from tests.integration.solver_fixtures import write_fixture_graph
    from tests.integration.test_solver_ask import FOUNDER_TOWN, Router

    embedder = HashingEmbedder(TEST_DIMENSION)
    legal = _kb(db, "legal")
    write_fixture_graph(legal, embedder)
    write_fixture_graph(db, embedder)  # the same ids and names in the default KB, but one town renamed
    db.write("MATCH (t:Entity {id: 'town:kestrel'}) SET t.name = 'Gull Harbour'")
    question = "In which town was the founder of the Harrow Valley Rail Company born?"
    answers = {name: KAG(kb, Router(plan=[FOUNDER_TOWN]).llm, embedder).ask(question) for name, kb in
               (("default", db), ("legal", legal))}
    assert answers["legal"].answer == "Kestrel Bay" and answers["default"].answer == "Gull Harbour"
    assert read_trace(legal, str(answers["legal"].run_id)).run["answer"] == "Kestrel Bay"
    with pytest.raises(TraceNotFoundError):
        read_trace(db, str(answers["legal"].run_id))


def test_the_default_knowledge_base_cannot_be_dropped_and_unknown_ones_are_named(db: Database) -> None:
    with pytest.raises(ConfigError, match="default knowledge base is not dropped"):
        drop_kb(db, "default")
    with pytest.raises(ConfigError, match="no knowledge base 'nothere'"):
        drop_kb(db, "nothere")
    with pytest.raises(ConfigError, match="knowledge base name"):
        db.in_kb("x`) DETACH DELETE n //")


# --------------------------------------------------------------------------- every query stays in its KB

#: queries that read or empty the whole database on purpose, and why
WHOLE_DATABASE = {
    "store/delete_all": "the test reset empties every knowledge base",
    "store/test_marker": "the reset guard looks for any data at all",
    "eval/bench_model_audit": "the injection benchmark audits a database it owns",
    "eval/bench_drop_replicas": "the latency benchmark's replicas, on a database it owns",
    "eval/bench_projection_v1": "a benchmark of projection variants, on a database it owns",
    "eval/bench_projection_no_values": "a benchmark of projection variants, on a database it owns",
}

#: template variables that make each template a query (labels and types of a schema)
TEMPLATES: dict[str, dict[str, Any]] = {
    "builder/delete_facts": {"kind": "Entity"}, "builder/delete_orphans": {"kind": "Event"},
    "builder/merge_entities": {"labels": ["Person"]}, "builder/merge_events": {"labels": ["Meeting"]},
    "builder/set_node_properties": {"label": "Person"}, "builder/update_node_properties": {"label": "Person"},
    "builder/missing_nodes": {"label": "Person"}, "builder/label_concepts": {"label": "Industry"},
    "builder/merge_facts": {"rel_type": "worksAt", "source": "Entity", "target": "Entity"},
    "builder/set_fact_properties": {"rel_type": "worksAt", "source": "Entity", "target": "Entity"},
    "builder/merge_fact_instances": {"rel_type": "pays", "source": "Entity", "target": "Entity"},
    "builder/merge_open_facts": {"source": "Entity", "target": "Event"},
    "builder/set_open_fact_properties": {"source": "Entity", "target": "Event"},
    "builder/replace_relations": {"rel_type": "worksAt"}, "builder/taxonomy_edges": {"rel_type": "IS_A"},
    "rules/retract_edges": {"rel_type": "developed"}, "rules/retract_nodes": {"label": "Event"},
    "store/delete_label": {"label": "Chunk"},
}


def _plans(plan: dict[str, Any], above: tuple[dict[str, Any], ...] = ()):  # noqa: ANN202 - a generator
    yield plan, above
    for child in plan.get("children", []):
        yield from _plans(child, (*above, plan))


def _unscoped_scans(plan: dict[str, Any], prefix: str) -> list[str]:
    """Scans of every node, every relationship or every relationship of a type (which the planner picks
    over a label scan when a label is rare or new) whose filters — the operators between the scan and
    the nearest join — name no label of the KB."""
    found = []
    for node, above in _plans(plan):
        operator = str(node["operatorType"]).split("@")[0]
        if operator == "AllNodesScan" or operator.endswith(("AllRelationshipsScan", "RelationshipTypeScan")):
            chain = []
            for ancestor in reversed(above):
                if len(ancestor.get("children", [])) > 1:
                    break
                chain.append(str(ancestor.get("args", {}).get("Details", "")))
            if not any(f":{prefix}" in details for details in chain):
                found.append(f"{operator} {node.get('args', {}).get('Details', '')}")
        elif operator.endswith("CountFromCountStore"):  # a count of every KB's nodes or relationships
            if f":{prefix}" not in str(node.get("args", {}).get("Details", "")):
                found.append(f"{operator} {node.get('args', {}).get('Details', '')}")
    return found


def _product_queries() -> dict[str, str]:
    queries = {}
    for folder in ("cypher", "procedures"):
        for path in sorted((ROOT / folder).rglob("*.cypher")):
            name = path.relative_to(ROOT / folder).with_suffix("").as_posix()
            text = path.read_text(encoding="utf-8")
            if name in WHOLE_DATABASE or "{{" not in text and "{%" not in text:
                queries[name] = text if name not in WHOLE_DATABASE else ""
            elif name in TEMPLATES:
                queries[name] = cypher.render(name, **TEMPLATES[name])
    return {name: text for name, text in queries.items() if text}


def test_no_query_scans_outside_its_knowledge_base(db: Database) -> None:
    legal = _kb(db, "legal")
    queries = _product_queries()
    assert len(queries) > 100
    leaks: dict[str, list[str]] = {}
    with legal.session() as session:
        for name, text in queries.items():
            if text.lstrip().upper().startswith(("SHOW", "//")) and "SHOW " in text.upper():
                continue  # SHOW commands have no plan; they filter by $kb_prefix themselves
            scoped = legal.kb.rewrite(text)
            for statement in migrations.split_statements(scoped) if name.startswith("migrations") else [scoped]:
                plan = session.run(f"EXPLAIN {statement}").consume().plan
                assert plan is not None, name
                if scans := _unscoped_scans(plan, legal.kb.prefix):
                    leaks[name] = scans
    assert leaks == {}


def test_the_plan_check_finds_a_query_that_would_cross_knowledge_bases(db: Database) -> None:
    legal = _kb(db, "legal")
    with legal.session() as session:
        for leaky in ("MATCH ()-[r:RELATED]->() RETURN r.predicate", "MATCH (n) WHERE n.id = $id RETURN n",
                      "MATCH ()-[r:RELATED]->() RETURN count(r)", "MATCH (n:Entity) RETURN n.id, count{(n)--()}"):
            plan = session.run(f"EXPLAIN {legal.kb.rewrite(leaky)}").consume().plan
            assert plan is not None
            assert bool(_unscoped_scans(plan, legal.kb.prefix)) == ("(n:Entity)" not in leaky), leaky


# --------------------------------------------------------------------------- the command line


def test_kb_commands_list_create_and_drop(
    db: Database, neo4j_connection: Connection, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from kag_neo4j.cli import app

    set_connection_env(monkeypatch, neo4j_connection)
    monkeypatch.setenv("KAG_EMBEDDER", "hashing")
    monkeypatch.setenv("KAG_EMBEDDING_DIMENSIONS", str(TEST_DIMENSION))
    monkeypatch.setenv("KAG_HOME", str(tmp_path))
    runner = CliRunner()

    created = runner.invoke(app, ["kb", "create", "risk_2026"])
    assert created.exit_code == 0, created.output
    assert "risk_2026" in kb_names(db)
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "note.md").write_text("# Note\n\nAda Lovelace met Charles Babbage in London.\n", encoding="utf-8")
    loaded = runner.invoke(app, ["--kb", "risk_2026", "load", str(folder), "--mode", "light"])
    assert loaded.exit_code == 0, loaded.output

    listed = runner.invoke(app, ["kb", "list", "--json"])
    assert listed.exit_code == 0, listed.output
    rows = {row["name"]: row for row in map(json.loads, listed.output.splitlines())}
    assert rows["risk_2026"]["documents"] == 1 and rows["risk_2026"]["chunks"] >= 1
    assert rows["default"]["documents"] == 0

    refused = runner.invoke(app, ["kb", "drop", "risk_2026"])
    assert refused.exit_code == 2 and "risk_2026" in kb_names(db)
    dropped = runner.invoke(app, ["kb", "drop", "risk_2026", "--yes"])
    assert dropped.exit_code == 0, dropped.output
    assert kb_names(db) == ["default"]

    hostile = runner.invoke(app, ["--kb", "Legal`)//", "kb", "list"])
    assert hostile.exit_code == 1 and "knowledge base name" in hostile.output

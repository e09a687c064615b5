"""The solver's read side under faults, races and half-loaded data, on a real Neo4j with GDS.

* an answer is never lost to its trace: a trace write that Neo4j rejects leaves the answer, a
  warning and no run id (and nothing half-written);
* chunks of documents still loading (``status = 'loading'``) never come back from retrieval or
  as the chunks of graph facts, and k results remain;
* projections: the name follows the graph version read at ask time, old ones outlive their
  successor by a grace period, and threads/processes asking while the graph changes never fail.
"""

from __future__ import annotations

import json
import multiprocessing
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from kag_neo4j.api import KAG
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.solver import projection
from kag_neo4j.solver.retrieval import RECIPES, RetrievalConfig, RetrievalWeights, hybrid_retrieve
from kag_neo4j.store.database import Connection, Database
from tests.integration.solver_fixtures import chunk_id
from tests.integration.test_solver_ask import FOUNDER_TOWN, Router, embedder, graph  # noqa: F401 (fixtures)

QUESTION = "In which town was the founder of the Harrow Valley Rail Company born?"
PPR_ONLY = RetrievalConfig(k=5, dense_seeds=0, weights=RetrievalWeights(dense=0, fulltext=0, ppr=1))


def projections(db: Database) -> set[str]:
    return {row["name"] for row in db.read("CALL gds.graph.list() YIELD graphName RETURN graphName AS name")}


def set_status(db: Database, document: str, status: str) -> None:
    db.write("MATCH (d:Document {id: $id}) SET d.status = $status", id=document, status=status)


# ---- 6. an answer is never lost ---------------------------------------------------------------


@pytest.fixture
def trace_rejected(graph: Database) -> Iterator[Database]:
    """A real write failure on Community: a uniqueness constraint the trace's run node violates.

    Community 5.26 has neither read-only users/roles nor ``ALTER DATABASE ... SET ACCESS READ
    ONLY`` (Enterprise), and ``server.databases.read_only`` needs a restart; a constraint makes
    Neo4j itself reject the trace's write transaction.
    """
    graph.auto_commit("CREATE CONSTRAINT test_one_run_per_question IF NOT EXISTS "
                      "FOR (r:KagRun) REQUIRE r.question IS UNIQUE")
    graph.write("CREATE (:KagRun {id: 'earlier', question: $q})", q=QUESTION)
    try:
        yield graph
    finally:
        graph.auto_commit("DROP CONSTRAINT test_one_run_per_question IF EXISTS")


def test_a_trace_write_neo4j_rejects_keeps_the_answer_with_a_warning(
    trace_rejected: Database, embedder: HashingEmbedder
) -> None:
    answer = KAG(trace_rejected, Router(plan=[FOUNDER_TOWN]).llm, embedder).ask(QUESTION)
    assert answer.known and answer.answer == "Kestrel Bay"
    assert answer.run_id is None
    assert len(answer.warnings) == 1 and "ConstraintValidationFailed" in answer.warnings[0]
    stored = trace_rejected.read("MATCH (r:KagRun) OPTIONAL MATCH (s:KagStep) "
                                 "RETURN collect(DISTINCT r.id) AS runs, count(s) AS steps")[0]
    assert stored == {"runs": ["earlier"], "steps": 0}, "nothing half-written"


def test_cli_ask_prints_the_answer_and_the_warning_when_the_trace_fails(
    trace_rejected: Database, embedder: HashingEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kag_neo4j.cli import ask as ask_cli

    kag = KAG(trace_rejected, Router(plan=[FOUNDER_TOWN]).llm, embedder)

    class Fixed:  # the CLI builds KAG from settings; hand it this one (the test's own LLM)
        @staticmethod
        def from_settings(*_: object, **__: object) -> KAG:
            return kag

    monkeypatch.setattr("kag_neo4j.api.KAG", Fixed)
    app = typer.Typer()

    @app.callback()
    def main(ctx: typer.Context) -> None:
        ctx.obj = {}

    ask_cli.register(app)
    result = CliRunner().invoke(app, ["ask", QUESTION, "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["answer"] == "Kestrel Bay" and payload["run_id"] is None
    assert "ConstraintValidationFailed" in payload["warnings"][0]


# ---- 7. documents still loading are invisible ------------------------------------------------


def test_chunks_of_a_loading_document_never_come_back_from_retrieval(
    graph: Database, embedder: HashingEmbedder
) -> None:
    text = "Millbrook Viaduct stone railway bridge opened 1899"
    loading = chunk_id("viaduct")
    config = RetrievalConfig(k=1, k_dense=1, k_fulltext=1, dense_seeds=0)
    before = {name: hybrid_retrieve(graph, embedder, text, config=RECIPES[name].model_copy(update={"k": 1, "k_dense": 1, "k_fulltext": 1}))
              for name in ("dense", "fulltext")}
    assert all(hits[0].chunk_id == loading for hits in before.values()), "the viaduct chunk is the best match"
    # the viaduct is mentioned in its own chunk only (facts are not walked): Ada seeds the other chunks
    seeds = ["bridge:viaduct", "person:ada"]
    assert loading in {h.chunk_id for h in hybrid_retrieve(graph, embedder, "zzz", seed_entity_ids=seeds, config=PPR_ONLY)}

    set_status(graph, "viaduct", "loading")
    for name in ("dense", "fulltext"):
        hits = hybrid_retrieve(graph, embedder, text, config=RECIPES[name].model_copy(update={"k": 1, "k_dense": 1, "k_fulltext": 1}))
        assert len(hits) == 1 and hits[0].chunk_id != loading, f"{name}: k results remain, none loading"
    ppr = hybrid_retrieve(graph, embedder, "zzz", seed_entity_ids=seeds, config=PPR_ONLY)
    assert ppr and loading not in {h.chunk_id for h in ppr}
    hybrid = hybrid_retrieve(graph, embedder, text, seed_entity_ids=["bridge:viaduct"], config=config)
    assert len(hybrid) == 1 and hybrid[0].chunk_id != loading


def test_graph_facts_do_not_cite_chunks_of_a_loading_document(graph: Database, embedder: HashingEmbedder) -> None:
    set_status(graph, "ada", "loading")  # the bornIn fact's chunk
    answer = KAG(graph, Router(plan=[FOUNDER_TOWN]).llm, embedder).ask(QUESTION, trace=False)
    cited = {c.chunk_id for c in answer.citations}
    used = {u.id for step in answer.steps for u in step.used if u.kind == "Chunk"}
    assert chunk_id("ada") not in cited | used
    assert chunk_id("hvrc") in cited


# ---- 7/8. the projection lifecycle -----------------------------------------------------------


def bump_with_a_chunk(db: Database, embedder: HashingEmbedder, name: str, text: str) -> None:
    """One write transaction, as the builder writes: new document, chunk, entity and the version."""
    db.write(
        """
        CREATE (d:Document {id: $name, title: $name, status: 'complete'})
        CREATE (c:Chunk {id: $name + '#0#0', text: $text, title: $name, embedding: $vector})-[:PART_OF]->(d)
        CREATE (e:Entity {id: 'entity:' + $name, name: $name})-[:MENTIONED_IN {count: 1}]->(c)
        MERGE (m:KagMeta {key: 'graph'}) SET m.version = coalesce(m.version, 0) + 1
        """,
        name=name, text=text, vector=embedder.embed_documents([text])[0],
    )


def test_a_write_that_bumps_the_version_makes_the_next_ask_project_afresh(
    graph: Database, embedder: HashingEmbedder
) -> None:
    first = projection.current_projection(graph)
    # a load killed after one committed batch: that batch bumped the version in its transaction
    bump_with_a_chunk(graph, embedder, "halfload", "A half-loaded note about the Greyfell mines.")
    hits = hybrid_retrieve(graph, embedder, "zzz", seed_entity_ids=["entity:halfload"], config=PPR_ONLY)
    assert [h.chunk_id for h in hits][:1] == ["halfload#0#0"], "the new chunk is in the fresh projection"
    assert projection.current_projection(graph) != first


def test_an_older_projection_outlives_its_successor_by_the_grace_period(
    graph: Database, embedder: HashingEmbedder
) -> None:
    old = projection.current_projection(graph)
    bump_with_a_chunk(graph, embedder, "next", "Another note.")
    new = projection.current_projection(graph)
    assert new != old and {old, new} <= projections(graph), "a retrieval may still be reading the old one"
    rows = graph.read("MATCH (e:Entity {id: 'person:ada'}) CALL gds.pageRank.stream($g, {sourceNodes: [e]}) "
                      "YIELD nodeId RETURN count(*) AS n", g=old)
    assert rows[0]["n"] > 0
    assert projection.current_projection(graph, grace_seconds=0) == new
    assert old not in projections(graph) and new in projections(graph)


def test_a_retrieval_whose_projection_is_dropped_under_it_projects_again(
    graph: Database, embedder: HashingEmbedder, neo4j_connection: Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process retires the projection between the moment a retrieval picked it and its query."""
    chosen: list[str] = []

    def then_dropped_elsewhere(db: Database, **options: Any) -> str:
        name = projection.current_projection(db, **options)
        chosen.append(name)
        if len(chosen) == 1:
            with Database(neo4j_connection) as other:
                other.read("CALL gds.graph.drop($g, false) YIELD graphName RETURN graphName", g=name)
        return name

    monkeypatch.setattr("kag_neo4j.solver.retrieval.current_projection", then_dropped_elsewhere)
    hits = hybrid_retrieve(graph, embedder, "zzz", seed_entity_ids=["person:ada"], config=PPR_ONLY)
    assert hits and len(chosen) == 2 and chosen[1] in projections(graph)


def test_threads_asking_while_the_graph_changes_never_fail(
    graph: Database, embedder: HashingEmbedder, neo4j_connection: Connection
) -> None:
    """4 askers (own drivers) run PPR retrieval while a writer adds chunks that are the askers'
    best dense seeds and bumps the version with each write: no retrieval may fail, although
    projections are replaced under them and new seeds are missing from the projection in use."""
    text = "Kestrel Bay harbour trawlers winter"
    seeded = RetrievalConfig(k=3, dense_seeds=2, weights=RetrievalWeights(dense=1, fulltext=0, ppr=1))
    errors: list[BaseException] = []
    calls = [0]
    stop = threading.Event()

    def asker() -> None:
        with Database(neo4j_connection) as own:
            while not stop.is_set():
                try:
                    hybrid_retrieve(own, embedder, text, seed_entity_ids=["town:kestrel"], config=seeded)
                    calls[0] += 1
                except BaseException as exc:  # noqa: BLE001 - every failure is the test's finding
                    errors.append(exc)
                    return

    def writer() -> None:
        with Database(neo4j_connection) as own:
            for number in range(40):
                if stop.is_set() or errors:
                    return
                bump_with_a_chunk(own, embedder, f"w{number}", f"{text} {number}")
                time.sleep(0.05)

    askers = [threading.Thread(target=asker) for _ in range(4)]
    write = threading.Thread(target=writer)
    for thread in [*askers, write]:
        thread.start()
    write.join(timeout=120)
    stop.set()
    for thread in askers:
        thread.join(timeout=60)
    assert errors == [], f"{len(errors)} failed retrievals, first: {errors[0]}" if errors else ""
    assert calls[0] > 10


def _project_in_process(connection: Connection, barrier_at: float) -> str:
    with Database(connection) as db:
        time.sleep(max(0.0, barrier_at - time.time()))
        return projection.current_projection(db)


def test_processes_projecting_the_same_version_at_once_all_succeed(
    graph: Database, neo4j_connection: Connection
) -> None:
    context = multiprocessing.get_context("spawn")
    with context.Pool(3) as pool:
        start = time.time() + 5  # after the workers have imported and connected
        names = pool.starmap(_project_in_process, [(neo4j_connection, start)] * 3)
    assert len(set(names)) == 1 and names[0] in projections(graph)

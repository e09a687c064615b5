"""One traced query path: a step's stored trace lists every Cypher query it ran (linking, the
projection it made, retrieval) with its parameters, and a run stores its configuration."""

from __future__ import annotations

import json
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from kag_neo4j.api import KAG
from kag_neo4j.cli.ask import register
from kag_neo4j.config import Settings
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.prompts.plan import PLAN_PROMPT_VERSION
from kag_neo4j.solver.runtime import SolverConfig
from kag_neo4j.store.database import Database, connection_for
from kag_neo4j.store.lucene import lucene_terms
from tests.integration.cli_env import connection_env
from tests.integration.conftest import TEST_DIMENSION
from tests.integration.solver_fixtures import write_fixture_graph
from tests.integration.test_solver_ask import Router, plan

HARBOUR = plan("""\
Step1: How many trawlers shelter in Kestrel Bay?
Action1: Retrieval(s=s1:Town[`Kestrel Bay`], p=p1:trawlerCount, o=o1:Integer)
Action2: Output(o1)""")
QUESTION = "How many trawlers shelter in Kestrel Bay?"


@pytest.fixture
def embedder() -> HashingEmbedder:
    return HashingEmbedder(dimension=TEST_DIMENSION)


def _ask(db: Database, embedder: HashingEmbedder, config: SolverConfig | None = None) -> Any:
    write_fixture_graph(db, embedder)
    router = Router(plan=[HARBOUR], subanswer=[{"answer": "forty", "evidence": [1]}])
    answer = KAG(db, router.llm, embedder, config=config).ask(QUESTION)
    assert answer.run_id
    return answer


def _projections(db: Database) -> set[str]:
    return {row["graphName"] for row in db.read("CALL gds.graph.list() YIELD graphName RETURN graphName")}


def test_a_steps_trace_lists_its_linking_projection_and_retrieval_queries(
    db: Database, embedder: HashingEmbedder
) -> None:
    assert not _projections(db)
    answer = _ask(db, embedder)
    stored = KAG(db, Router().llm, embedder).trace(answer.run_id)
    step = next(s["step"] for s in stored.steps if s["step"]["op"] == "Retrieval")
    queries: list[dict[str, Any]] = json.loads(step["params"])
    names = [q["name"] for q in queries]
    for name in ("procedures/link_entities", "cypher/solver/projection_state",
                 "procedures/project_graph", "procedures/hybrid_retrieval"):
        assert name in names, f"{name} is missing from the step's trace: {names}"
        assert f"// {name} (" in step["cypher"]
    assert names.index("procedures/link_entities") < names.index("procedures/project_graph") \
        < names.index("procedures/hybrid_retrieval")

    link = next(q["params"] for q in queries if q["name"] == "procedures/link_entities")
    assert link["mention_query"] == lucene_terms(link["mention"])
    assert link["mention_vector"] == f"<{TEST_DIMENSION}-d vector>"
    assert {"k", "k_candidates", "min_similarity", "rrf_k", "type"} <= set(link)

    (projected,) = _projections(db)  # the projection the step made
    project = next(q["params"] for q in queries if q["name"] == "procedures/project_graph")
    assert project == {"graph_name": projected}
    listed = next(q["params"] for q in queries if q["name"] == "cypher/solver/projection_state")
    assert projected.startswith(listed["prefix"])

    hybrid = next(q["params"] for q in queries if q["name"] == "procedures/hybrid_retrieval")
    assert hybrid["graph_name"] == projected
    assert hybrid["query_vector"] == f"<{TEST_DIMENSION}-d vector>"
    assert hybrid["seed_entity_ids"] == ["town:kestrel"], "the linked entity seeds PPR"
    assert hybrid["extra_lists"] == [] and set(hybrid["weights"]) == {"dense", "fulltext", "ppr"}


def test_a_run_stores_its_configuration_and_trace_json_shows_it(
    db: Database, embedder: HashingEmbedder, test_settings: Settings
) -> None:
    config = SolverConfig(chunk_k=3, link_k=2)
    answer = _ask(db, embedder, config)
    version = db.read("MATCH (m:KagMeta {key: 'graph'}) RETURN m.version AS v")[0]["v"]

    app = typer.Typer()

    @app.callback()
    def main(ctx: typer.Context) -> None:
        ctx.obj = {}

    register(app)
    shown = CliRunner().invoke(app, ["trace", answer.run_id, "--json"], env=connection_env(connection_for(test_settings)))
    assert shown.exit_code == 0, shown.output
    run = json.loads(shown.output)["run"]
    assert SolverConfig.model_validate_json(run["config"]) == config
    assert run["embedder"] == embedder.model_id
    assert run["graph_version"] == version
    assert json.loads(run["prompt_versions"])["plan"] == PLAN_PROMPT_VERSION
    assert json.loads(run["ranked_lists"]) == {}


def test_hostile_text_escaped_by_the_one_escaper_always_parses(db: Database, embedder: HashingEmbedder) -> None:
    from kag_neo4j.store.lucene import lucene_phrase
    from tests.unit.store.test_lucene import HOSTILE

    write_fixture_graph(db, embedder)
    for text in HOSTILE:
        for query in (lucene_terms(text), lucene_phrase("alias_text", text)):
            if query:
                db.read("CALL db.index.fulltext.queryNodes('entity_fulltext', $q, {limit: 3}) YIELD node "
                        "RETURN count(node) AS n", q=query)
                db.read("CALL db.index.fulltext.queryNodes('chunk_fulltext', $q, {limit: 3}) YIELD node "
                        "RETURN count(node) AS n", q=query)

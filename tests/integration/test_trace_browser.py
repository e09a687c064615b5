"""`kag-neo4j trace RUN --browser`: the `:param` line, the query and the style sheet, checked against
Neo4j itself (Browser's `:param name => expr` evaluates `expr` as Cypher on the server)."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from kag_neo4j.api import KAG
from kag_neo4j.browser import cypher_string
from kag_neo4j.config import Settings
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.store.database import Database, connection_for
from kag_neo4j.store.identifiers import is_reserved_label
from tests.integration.cli_env import connection_env
from tests.integration.conftest import TEST_DIMENSION
from tests.integration.solver_fixtures import write_fixture_graph
from tests.integration.test_solver_ask import FOUNDER_TOWN, Router
from tests.integration.test_solver_cli import app  # noqa: F401 - the fixture
from tests.unit.test_browser import parse_grass


def test_trace_browser_prints_param_query_and_a_style_sheet_for_every_label(
    db: Database, test_settings: Settings, app: typer.Typer  # noqa: F811
) -> None:
    embedder = HashingEmbedder(dimension=TEST_DIMENSION)
    write_fixture_graph(db, embedder)
    answer = KAG(db, Router(plan=[FOUNDER_TOWN]).llm, embedder).ask(
        "In which town was the founder of the Harrow Valley Rail Company born?")
    assert answer.run_id

    result = CliRunner().invoke(app, ["trace", answer.run_id, "--browser"],
                                env=connection_env(connection_for(test_settings)))
    assert result.exit_code == 0, result.output
    param, query, grass = result.stdout.strip().split("\n\n", 2)
    assert param == f":param run_id => '{answer.run_id}'"
    assert query.startswith("// The reasoning path")
    rules = parse_grass(grass)

    expression = param.split(" => ", 1)[1]
    value = db.read_tx(lambda tx: tx.run(f"RETURN {expression} AS v").single()["v"])  # what Browser evaluates
    rows = db.read_tx(lambda tx: list(tx.run(query, run_id=value)))
    labels = {label for row in rows for node in row["path"].nodes for label in node.labels}
    types = {rel.type for row in rows for rel in row["path"].relationships}
    assert {"KagRun", "KagStep", "Chunk", "Entity", "Document"} <= labels
    ours = {label for label in labels if is_reserved_label(label)}  # domain labels (Person, ...) are the user's
    assert {f"node.{label}" for label in ours} <= set(rules), ours
    assert {f"relationship.{rel_type}" for rel_type in types if rel_type.isupper()} <= set(rules), types


@pytest.mark.parametrize("hostile", ["x' }) DETACH DELETE n //", "a\\'b", "line\nbreak\r\t\x00", "\u2028'\\u0041",
                                     "问题 ünï"])
def test_the_quoted_id_is_one_cypher_literal_that_neo4j_reads_back(db: Database, hostile: str) -> None:
    # The literal is the expression of a Browser `:param` command, so it must be Cypher; here the
    # test builds `RETURN <literal>` on purpose — the product never puts values in query text.
    literal = cypher_string(hostile)
    assert db.read_tx(lambda tx: tx.run(f"RETURN {literal} AS v").single()["v"]) == hostile

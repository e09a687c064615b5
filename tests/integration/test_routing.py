"""A ``neo4j://`` (routing) URI against a single instance: the driver fetches the routing table,
sends reads (retrieval, the GDS projection, the trace read) to a reader and writes (a load, the
run's trace) to the writer; on one server both are that server. See docs/scaling.md."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import neo4j
import pytest

from kag_neo4j.api import KAG
from kag_neo4j.builder.pipeline import LoadOptions, load
from kag_neo4j.config import Settings
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.store import server
from kag_neo4j.store.database import Connection, Database
from tests.integration.conftest import TEST_DIMENSION
from tests.integration.solver_fixtures import chunk_id, write_fixture_graph
from tests.integration.test_solver_ask import FOUNDER_TOWN, Router


@pytest.fixture
def routed(db: Database, neo4j_connection: Connection) -> Iterator[Database]:
    scheme, address = neo4j_connection.uri.split("://", 1)
    assert scheme in ("bolt", "neo4j"), neo4j_connection.uri
    if server.auth_for_uri(Settings(neo4j_uri=None), neo4j_connection.uri) is None:
        # not a kag-neo4j local instance (a testcontainers Neo4j advertises its in-container
        # localhost:7687, not the mapped port): a routing driver could not reach it
        advertised = db.read("CALL dbms.routing.getRoutingTable({}, $db) YIELD servers RETURN servers",
                             db=db.database)[0]["servers"]
        if any(address not in entry["addresses"] for entry in advertised):
            pytest.skip(f"the test server advertises {advertised}, not {address}: routing cannot reach it")
    database = Database(replace(neo4j_connection, uri=f"neo4j://{address}"))
    try:
        database.verify()
        yield database
    finally:
        database.close()


def test_the_routing_table_names_the_instance_as_reader_and_writer(routed: Database) -> None:
    assert isinstance(routed.driver, neo4j.Neo4jDriver)  # a routing driver, not a direct one
    address = routed.connection.uri.split("://", 1)[1]
    table = routed.read("CALL dbms.routing.getRoutingTable({}, $db) YIELD servers RETURN servers", db=routed.database)
    roles = {server["role"]: server["addresses"] for server in table[0]["servers"]}
    port = address.rsplit(":", 1)[1]
    for role in ("READ", "WRITE", "ROUTE"):
        assert [a.rsplit(":", 1)[1] for a in roles[role]] == [port], (role, roles)


def test_search_ask_trace_and_load_over_a_routing_uri(routed: Database, test_settings: Settings,
                                                      tmp_path: Path) -> None:
    embedder = HashingEmbedder(dimension=TEST_DIMENSION)
    write_fixture_graph(routed, embedder)  # the builder's writer: write transactions, routed to the writer

    kag = KAG(routed, Router(plan=[FOUNDER_TOWN]).llm, embedder)
    found = kag.search("In which town was the founder of the Harrow Valley Rail Company born?", k=3, recipe="hybrid-gds")
    assert found.chunks[0].chunk_id == chunk_id("hvrc")
    assert any("ppr" in chunk.ranks for chunk in found.chunks)  # the GDS projection and PPR ran (read routing)

    answer = kag.ask("In which town was the founder of the Harrow Valley Rail Company born?")
    assert answer.run_id and not answer.warnings  # the trace was written through the writer
    assert kag.trace(answer.run_id).run["question"] == answer.question

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "orchard.md").write_text("# Orchard\n\nThe Quillon Orchard grows pears near Dunmere.", encoding="utf-8")
    summary = load([corpus], routed, test_settings, LoadOptions(mode="light"), embedder=embedder)
    assert summary.documents_loaded == 1  # the lease, the batches and the version bump, all routed writes
    titles = {row["title"] for row in routed.read("MATCH (d:Document) RETURN d.title AS title")}
    assert "Orchard" in titles and len(titles) == 6  # the fixture's five documents and the loaded one

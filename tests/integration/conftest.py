"""A real Neo4j with GDS and APOC for every integration test, one server per test session.

Where it comes from, in order: ``KAG_TEST_NEO4J_URI`` when set (with ``KAG_TEST_NEO4J_USERNAME``,
``KAG_TEST_NEO4J_PASSWORD``, ``KAG_TEST_NEO4J_DATABASE``; without a password, a running local
kag-neo4j instance at that URI lends its own); else a testcontainers
``Neo4jContainer`` when a Docker engine answers; else kag-neo4j's own local launcher, in a
server instance named ``pytest`` (started here and stopped at the end of the session).
``NEO4J_URI`` and ``kag.toml`` are never used: they name the user's own database.

Each test gets an empty database with the core migrations applied. Emptying it requires the
test marker (:mod:`kag_neo4j.store.reset`); the session claims the database once, and refuses
one that holds data without the marker.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from kag_neo4j.builder import write
from kag_neo4j.config import Settings
from kag_neo4j.store import migrations
from kag_neo4j.store.database import Connection, Database
from kag_neo4j.store.reset import claim_database, reset_database

#: the vector dimension integration tests create indexes with (multilingual-e5-small)
TEST_DIMENSION = 384


def anchor_titles(db: Database) -> None:
    """The title anchors (``TITLE_ANCHOR``) of a graph a test wrote in plain Cypher, as the builder writes them."""
    write.anchor_titles(db, [row["id"] for row in db.read("MATCH (c:Chunk) RETURN c.id AS id")],
                        [row["id"] for row in db.read("MATCH (e:Entity) RETURN e.id AS id")])


#: holds True when this session started the server itself (a container or the ``pytest`` instance)
_OWNED_SERVER: list[bool] = []


def _docker_available() -> bool:
    try:
        import docker

        client = docker.from_env(timeout=3)
        client.ping()
        client.close()
        return True
    except Exception:  # noqa: BLE001 - no engine, no socket, no package: all mean "no Docker"
        return False


@pytest.fixture(scope="session")
def neo4j_connection(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Connection]:
    from kag_neo4j.store import server

    uri = os.environ.get("KAG_TEST_NEO4J_URI")
    if uri:
        password = os.environ.get("KAG_TEST_NEO4J_PASSWORD")
        auth = (os.environ.get("KAG_TEST_NEO4J_USERNAME") or "neo4j", password) if password else None
        if auth is None:  # KAG_TEST_NEO4J_URI=$(kag-neo4j server uri): the local instance's own password
            auth = server.auth_for_uri(Settings(neo4j_uri=None), uri)
        yield Connection(uri, os.environ.get("KAG_TEST_NEO4J_DATABASE") or "neo4j", auth)
        return
    _OWNED_SERVER.append(True)  # started below for this session: its data is the tests' own
    if _docker_available():
        from testcontainers.neo4j import Neo4jContainer

        container = (
            Neo4jContainer("neo4j:5.26-community", password="kag-test-password")
            .with_env("NEO4J_PLUGINS", '["apoc", "graph-data-science"]')
            .with_env("NEO4J_dbms_security_procedures_unrestricted", "gds.*,apoc.*")
        )
        with container:
            yield Connection(container.get_connection_url(), "neo4j", ("neo4j", "kag-test-password"))
        return
    local = Settings(server_name="pytest", neo4j_uri=None)
    state, started = server.start(local)
    try:
        yield Connection(state.uri, "neo4j", server.instance_auth(local))
    finally:
        if started and not os.environ.get("KAG_TEST_KEEP_SERVER"):
            server.stop(local)


@pytest.fixture(scope="session")
def _session_db(neo4j_connection: Connection) -> Iterator[Database]:
    database = Database(neo4j_connection)
    database.verify()
    claim_database(database, reason="kag-neo4j integration tests", allow_data=bool(_OWNED_SERVER))
    yield database
    database.close()


@pytest.fixture
def empty_db(_session_db: Database) -> Database:
    """A database with no data, no constraints, no indexes and no GDS graphs."""
    reset_database(_session_db)
    return _session_db


@pytest.fixture
def db(empty_db: Database) -> Database:
    """An empty database with kag-neo4j's core migrations applied."""
    migrations.migrate(empty_db, embedding_dimension=TEST_DIMENSION)
    return empty_db


@pytest.fixture
def test_settings(neo4j_connection: Connection, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """Settings pointing at the test database, with caches in a temporary home."""
    home = tmp_path_factory.mktemp("kag-home")
    auth = neo4j_connection.auth
    return Settings(
        neo4j_uri=neo4j_connection.uri,
        neo4j_database=neo4j_connection.database,
        neo4j_username=auth[0] if auth else "neo4j",
        neo4j_password=auth[1] if auth else None,
        home=home,
        embedding_dimensions=TEST_DIMENSION,
    )

"""The one way kag-neo4j talks to Neo4j: a small wrapper over the official driver.

Reads run in read transactions (question answering never writes facts), writes in write
transactions with automatic retries on transient errors. Every value is a parameter.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import neo4j
from neo4j import GraphDatabase, ManagedTransaction
from neo4j.exceptions import AuthError, ServiceUnavailable, TransientError

from kag_neo4j.config import Settings
from kag_neo4j.errors import Neo4jUnavailableError

T = TypeVar("T")


@dataclass(frozen=True)
class Connection:
    """Where and how to connect."""

    uri: str
    database: str
    auth: tuple[str, str] | None


def connection_for(settings: Settings) -> Connection:
    """The connection named by the settings, or the local server's when none is configured.

    The local server's password comes from its instance (``kag-neo4j server password`` prints it);
    it is also used when ``NEO4J_URI`` names a running local instance and no password is set.
    """
    from kag_neo4j.store import server  # the local server: its recorded port and password

    if settings.neo4j_uri:
        password = settings.neo4j_password.get_secret_value() if settings.neo4j_password else None
        if password is not None:
            return Connection(settings.neo4j_uri, settings.neo4j_database, (settings.neo4j_username, password))
        return Connection(settings.neo4j_uri, settings.neo4j_database, server.auth_for_uri(settings, settings.neo4j_uri))
    state = server.read_state(settings)
    if state is None:
        raise Neo4jUnavailableError(
            "no Neo4j is configured (NEO4J_URI is not set) and the local server is not running; "
            "start it with `kag-neo4j server start`, or set NEO4J_URI to your Neo4j / Aura"
        )
    return Connection(state.uri, settings.neo4j_database, server.instance_auth(settings))


class Database:
    """A driver plus the database name; use as a context manager or call :meth:`close`."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self._driver = GraphDatabase.driver(
            connection.uri, auth=connection.auth, notifications_min_severity="OFF"
        )

    @classmethod
    def connect(cls, settings: Settings, *, verify: bool = True) -> Database:
        db = cls(connection_for(settings))
        if verify:
            db.verify()
        return db

    def verify(self) -> None:
        try:
            self._driver.verify_connectivity()
        except AuthError as exc:
            self.close()
            raise Neo4jUnavailableError(
                f"Neo4j at {self.connection.uri} refused the credentials: set NEO4J_USERNAME / NEO4J_PASSWORD "
                "(for a local kag-neo4j server, `kag-neo4j server password` prints its password)"
            ) from exc
        except (ServiceUnavailable, OSError, ValueError) as exc:
            self.close()
            raise Neo4jUnavailableError(
                f"cannot reach Neo4j at {self.connection.uri} ({exc}); check NEO4J_URI, "
                "or run `kag-neo4j server start` for a local server"
            ) from exc

    @property
    def driver(self) -> neo4j.Driver:
        return self._driver

    @property
    def database(self) -> str:
        return self.connection.database

    def close(self) -> None:
        self._driver.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def session(self, **kwargs: Any) -> Iterator[neo4j.Session]:
        with self._driver.session(database=self.database, **kwargs) as session:
            yield session

    def read(self, cypher: str, **params: Any) -> list[dict[str, Any]]:
        """Run one query in a read transaction and return its records as dicts."""
        with self.session() as session:
            return session.execute_read(lambda tx: tx.run(cypher, params).data())

    def write(self, cypher: str, **params: Any) -> list[dict[str, Any]]:
        """Run one query in a write transaction and return its records as dicts."""
        with self.session() as session:
            return session.execute_write(lambda tx: tx.run(cypher, params).data())

    def read_tx(self, work: Callable[[ManagedTransaction], T]) -> T:
        with self.session() as session:
            return session.execute_read(work)

    def write_tx(self, work: Callable[[ManagedTransaction], T]) -> T:
        with self.session() as session:
            return session.execute_write(work)

    def auto_commit(self, cypher: str, *, retries: int = 0, **params: Any) -> list[dict[str, Any]]:
        """Run a statement outside an explicit transaction (schema DDL, CALL {} IN TRANSACTIONS).

        ``retries`` re-runs it on transient errors; use it only for idempotent statements.
        """
        for attempt in range(retries + 1):
            try:
                with self.session() as session:
                    return session.run(cypher, params).data()
            except TransientError:
                if attempt == retries:
                    raise
                time.sleep(0.2 * (attempt + 1))
        raise AssertionError("unreachable")

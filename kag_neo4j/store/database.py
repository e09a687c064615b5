"""The one way kag-neo4j talks to Neo4j: a small wrapper over the official driver.

Reads run in read transactions (question answering never writes facts), writes in write
transactions. Every value is a parameter.

Faults, in kag-neo4j's own vocabulary (every one a :class:`~kag_neo4j.errors.KagError` naming the
URI and the fix, so the CLI prints one line instead of a traceback):

* **Retried**: every read and write *transaction* (:meth:`Database.read`, :meth:`~Database.write`,
  :meth:`~Database.read_tx`, :meth:`~Database.write_tx`) is re-run by the driver on a transient
  error (deadlock, lock timeout, database restarting), ``ServiceUnavailable`` and
  ``SessionExpired``, for up to ``neo4j_retry_seconds`` (``KAG_NEO4J_RETRY_SECONDS``, 30 s).
  That is safe for writes too: a transaction that failed was rolled back, so re-running it
  cannot apply it twice. Statements outside a transaction (:meth:`~Database.auto_commit`:
  schema DDL, ``CALL {} IN TRANSACTIONS``) are retried only when the caller declares them
  idempotent (``retries=N``), with the same errors.
* **Not retried**: a connection lost *while a commit was in flight* (the write may or may not
  be applied): :class:`~kag_neo4j.errors.Neo4jCommitUnknownError`.
* After the retries: :class:`~kag_neo4j.errors.Neo4jConnectionLostError` (the server stopped
  answering) or :class:`~kag_neo4j.errors.Neo4jTransientError` (the transient error persisted).
  Errors in a query itself (``ClientError``: syntax, constraint) are not translated: they are bugs.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import neo4j
from neo4j import GraphDatabase, ManagedTransaction
from neo4j.exceptions import (
    AuthError,
    IncompleteCommit,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)

from kag_neo4j.config import Settings
from kag_neo4j.errors import (
    KagError,
    Neo4jCommitUnknownError,
    Neo4jConnectionLostError,
    Neo4jTransientError,
    Neo4jUnavailableError,
)
from kag_neo4j.resources import ResourceFolder
from kag_neo4j.store import cypher as cypher_files
from kag_neo4j.store.knowledge_base import KnowledgeBase

#: driver errors that are retried (in transactions always, outside them when idempotent)
RETRIED = (ServiceUnavailable, SessionExpired, TransientError)

T = TypeVar("T")

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Capabilities:
    """What the connected Neo4j offers beyond Cypher, read once per :class:`Database`.

    ``gds``: the GDS procedures kag-neo4j calls are there (Personalized PageRank runs on a GDS
    projection); without them (Aura Free, a plain Neo4j) it runs in plain Cypher
    (``procedures/hybrid_retrieval_local.cypher``) and no projection is kept."""

    gds: bool

    @property
    def warnings(self) -> list[str]:
        """One line for each thing a question loses on this server (shown with answers and searches)."""
        return [] if self.gds else [NO_GDS_WARNING]


#: what a server without GDS changes for retrieval
NO_GDS_WARNING = (
    "this Neo4j has no Graph Data Science plugin: Personalized PageRank runs in plain Cypher over the seeds' "
    "neighbourhood (a few hops, the heaviest nodes kept at each) instead of over the whole graph; install GDS "
    "for exact PageRank"
)


class Transaction(Protocol):
    """What work run by :meth:`Database.read_tx` / :meth:`Database.write_tx` may do: run queries
    (written for the default knowledge base; they are scoped to the Database's KB)."""

    def run(self, query: str, parameters: dict[str, Any] | None = None, **kwparameters: Any) -> neo4j.Result: ...


class _ScopedTransaction:
    """A driver transaction whose queries run in one knowledge base."""

    def __init__(self, tx: ManagedTransaction, kb: KnowledgeBase) -> None:
        self._tx = tx
        self._kb = kb

    def run(self, query: str, parameters: dict[str, Any] | None = None, **kwparameters: Any) -> neo4j.Result:
        text, params = self._kb.scope(query, {**(parameters or {}), **kwparameters})
        return self._tx.run(text, params)


@dataclass(frozen=True)
class Connection:
    """Where and how to connect."""

    uri: str
    database: str
    auth: tuple[str, str] | None
    #: how long transactions are retried on transient errors and lost connections
    retry_seconds: float = 30.0


def connection_for(settings: Settings) -> Connection:
    """The connection named by the settings, or the local server's when none is configured.

    The local server's password comes from its instance (``kag-neo4j server password`` prints it);
    it is also used when ``NEO4J_URI`` names a running local instance and no password is set.
    """
    from kag_neo4j.store import server  # the local server: its recorded port and password

    if settings.neo4j_uri:
        password = settings.neo4j_password.get_secret_value() if settings.neo4j_password else None
        if password is not None:
            auth: tuple[str, str] | None = (settings.neo4j_username, password)
        else:
            auth = server.auth_for_uri(settings, settings.neo4j_uri)
        return Connection(settings.neo4j_uri, settings.neo4j_database, auth, settings.neo4j_retry_seconds)
    state = server.read_state(settings)
    if state is None:
        raise Neo4jUnavailableError(
            "no Neo4j is configured (NEO4J_URI is not set) and the local server is not running; "
            "start it with `kag-neo4j server start`, or set NEO4J_URI to your Neo4j / Aura"
        )
    return Connection(state.uri, settings.neo4j_database, server.instance_auth(settings), settings.neo4j_retry_seconds)


def _reason(exc: BaseException) -> str:
    code = exc.code if isinstance(exc, Neo4jError) else None
    message = " ".join(str(exc).split()) or type(exc).__name__  # the driver's messages span lines
    if len(message) > 300:
        message = message[:299] + "…"
    return f"{type(exc).__name__}: {message}" if not code else f"{code}: {message}"


def translate(exc: BaseException, connection: Connection, *, retried: bool = True) -> KagError | None:
    """The kag-neo4j error for a driver error (``None`` for errors that are not faults of the
    connection or the server, e.g. a Cypher syntax error). ``retried``: it happened after retries."""
    uri = connection.uri
    after = f"after retrying for {connection.retry_seconds:g} s" if retried else "(not retried)"
    if isinstance(exc, IncompleteCommit):
        return Neo4jCommitUnknownError(
            f"lost the connection to Neo4j at {uri} while a write was committing, so it may or may not "
            f"have been applied ({_reason(exc)}); once Neo4j answers again (`kag-neo4j server status`, "
            "`kag-neo4j server start` for the local server) run the same command again: loads and "
            "deletes are idempotent and a load resumes where it stopped"
        )
    if isinstance(exc, (ServiceUnavailable, SessionExpired)):
        return Neo4jConnectionLostError(
            f"Neo4j at {uri} stopped answering ({_reason(exc)}) and did not come back {after}; "
            "check that it runs (`kag-neo4j server status`; start the local server with "
            "`kag-neo4j server start`, or check NEO4J_URI) and run the same command again: "
            "a load resumes where it stopped"
        )
    if isinstance(exc, TransientError):
        return Neo4jTransientError(
            f"Neo4j at {uri} reported a transient error {after} ({_reason(exc)}); run the command "
            "again (a lock conflict means another load or delete is writing the same data: let it "
            "finish first), or raise KAG_NEO4J_RETRY_SECONDS"
        )
    return None


class Database:
    """A driver plus the database name; use as a context manager or call :meth:`close`."""

    def __init__(
        self, connection: Connection, *, driver: neo4j.Driver | None = None, kb: KnowledgeBase | None = None
    ) -> None:
        self.connection = connection
        #: the knowledge base every query runs in (:mod:`kag_neo4j.store.knowledge_base`)
        self.kb = kb or KnowledgeBase()
        #: a driver handed in (:meth:`from_driver`) belongs to its caller: ``close`` leaves it open
        self._owns_driver = driver is None
        self._driver = driver if driver is not None else GraphDatabase.driver(
            connection.uri, auth=connection.auth, notifications_min_severity="OFF",
            max_transaction_retry_time=connection.retry_seconds,
        )
        self._capabilities: Capabilities | None = None
        self._capabilities_lock = threading.Lock()

    @classmethod
    def from_driver(
        cls, driver: neo4j.Driver, database: str | None = None, *, uri: str | None = None, retry_seconds: float = 30.0,
        kb: str | None = None,
    ) -> Database:
        """A Database over an application's own ``neo4j.Driver`` (which :meth:`close` leaves open).

        ``database`` ``None`` means the user's home database, as for the driver itself; its name
        is read once (projections are named after it). ``uri`` only names the server in error
        messages (default: the address the driver reaches). Transactions are retried as that
        driver was configured (``max_transaction_retry_time``).
        """
        if not isinstance(driver, neo4j.Driver):
            raise TypeError(f"Database.from_driver needs a neo4j.Driver, got {type(driver).__name__}")
        if uri is None:
            address = driver.get_server_info().address
            uri = f"{address.host}:{address.port}"
        if database is None:
            records, _, _ = driver.execute_query(cypher_files.query("store/home_database"), routing_=neo4j.RoutingControl.READ)
            database = str(records[0]["name"])
        return cls(Connection(uri, database, None, retry_seconds), driver=driver, kb=KnowledgeBase(kb) if kb else None)

    @classmethod
    def connect(cls, settings: Settings, *, verify: bool = True) -> Database:
        db = cls(connection_for(settings), kb=KnowledgeBase(settings.kb))
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

    @property
    def capabilities(self) -> Capabilities:
        """The server's :class:`Capabilities`, read on first use and kept for this Database."""
        with self._capabilities_lock:
            if self._capabilities is None:
                row = self.read(cypher_files.query("store/capabilities"))[0]
                self._capabilities = Capabilities(gds=bool(row["gds"]))
                for warning in self._capabilities.warnings:  # once per connection
                    log.warning("Neo4j at %s: %s", self.connection.uri, warning)
            return self._capabilities

    def close(self) -> None:
        if self._owns_driver:
            self._driver.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def session(self, **kwargs: Any) -> Iterator[neo4j.Session]:
        """A driver session; a lost connection or a lasting transient error inside it is raised
        as a :class:`~kag_neo4j.errors.KagError` (see the module docs)."""
        try:
            with self._driver.session(database=self.database, **kwargs) as session:
                yield session
        except RETRIED as exc:
            error = translate(exc, self.connection)
            if error is None:  # pragma: no cover - every RETRIED error translates
                raise
            raise error from exc

    def in_kb(self, kb: str) -> Database:
        """This connection, with its queries run in the knowledge base ``kb`` (the driver is shared:
        close the Database it came from, not this one)."""
        view = Database(self.connection, driver=self._driver, kb=KnowledgeBase(kb))
        view._capabilities = self._capabilities
        return view

    def read(self, cypher: str, **params: Any) -> list[dict[str, Any]]:
        """Run one query in a read transaction and return its records as dicts."""
        text, scoped = self.kb.scope(cypher, params)
        with self.session() as session:
            return session.execute_read(lambda tx: tx.run(text, scoped).data())

    def query(self, name: str, folder: ResourceFolder = "cypher", /, **params: Any) -> list[dict[str, Any]]:
        """Run ``<folder>/<name>.cypher`` in a read transaction (the untraced
        :class:`~kag_neo4j.store.runner.QueryRunner`)."""
        return self.read(cypher_files.query(name, folder), **params)

    def write(self, cypher: str, **params: Any) -> list[dict[str, Any]]:
        """Run one query in a write transaction and return its records as dicts."""
        text, scoped = self.kb.scope(cypher, params)
        with self.session() as session:
            return session.execute_write(lambda tx: tx.run(text, scoped).data())

    def read_tx(self, work: Callable[[Transaction], T]) -> T:
        with self.session() as session:
            return session.execute_read(lambda tx: work(_ScopedTransaction(tx, self.kb)))

    def write_tx(self, work: Callable[[Transaction], T]) -> T:
        with self.session() as session:
            return session.execute_write(lambda tx: work(_ScopedTransaction(tx, self.kb)))

    def auto_commit(self, cypher: str, *, retries: int = 0, **params: Any) -> list[dict[str, Any]]:
        """Run a statement outside an explicit transaction (schema DDL, CALL {} IN TRANSACTIONS).

        ``retries`` re-runs it on transient errors and lost connections (within
        ``retry_seconds``); use it only for idempotent statements. Without retries a failure is
        raised at once, as a :class:`~kag_neo4j.errors.KagError`.
        """
        text, scoped = self.kb.scope(cypher, params)
        began = time.monotonic()
        attempt = 0
        while True:
            try:
                with self._driver.session(database=self.database) as session:
                    return session.run(text, scoped).data()
            except RETRIED as exc:
                attempt += 1
                out_of_time = time.monotonic() - began + 0.2 * attempt > self.connection.retry_seconds
                if attempt > retries or out_of_time or isinstance(exc, IncompleteCommit):
                    error = translate(exc, self.connection, retried=retries > 0)
                    if error is None:  # pragma: no cover - every RETRIED error translates
                        raise
                    raise error from exc
                time.sleep(0.2 * attempt)

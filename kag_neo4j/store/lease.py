"""Named leases on lock nodes: one holder at a time, and a killed holder blocks nobody for long.

    with Lease(db, "builder", purpose="kag-neo4j load", seconds=60, wait=120) as lease:
        db.write_tx(lambda tx: (lease.fence(tx), ...))

A lease is the ``(:KagMigrationLock {id})`` node (the node ``kag-neo4j migrate`` has always used,
id ``'migrations'``; loads and deletes use id ``'builder'``): ``holder`` (a random token),
``owner`` (``"kag-neo4j load, pid 123 on host"``) and ``expires_at``. Taking it succeeds when it
is free or expired; a second caller retries every half second for ``wait`` seconds, then gets a
:class:`~kag_neo4j.errors.LeaseError` naming the holder and when its lease runs out. While held,
a daemon thread renews it every ``seconds / 3``; :meth:`Lease.fence` renews it inside a write
transaction and raises :class:`~kag_neo4j.errors.LeaseLostError` (rolling that transaction
back) when the lease expired and another process took the lock meanwhile. A holder killed
with ``kill -9`` stops renewing, so its lease expires after at most ``seconds``.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from types import TracebackType

from kag_neo4j.errors import LeaseError, LeaseLostError
from kag_neo4j.store import cypher
from kag_neo4j.store.database import Database, Transaction

log = logging.getLogger(__name__)


def owner_label(purpose: str) -> str:
    """Who takes a lease, as waiting callers are told: purpose, pid and host."""
    return f"{purpose}, pid {os.getpid()} on {socket.gethostname()}"


class Lease:
    """A renewed lease on the lock ``name`` (see the module docs); a context manager."""

    def __init__(self, db: Database, name: str, *, purpose: str, seconds: float = 60.0, wait: float = 120.0,
                 wait_setting: str | None = None) -> None:
        if seconds < 1:
            raise ValueError(f"a lease lasts at least 1 second, got {seconds}")
        self.db = db
        self.name = name
        self.purpose = purpose
        self.seconds = float(seconds)
        self.wait = max(0.0, float(wait))
        self.wait_setting = wait_setting
        self.token = uuid.uuid4().hex
        self.owner = owner_label(purpose)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.lost = False

    def _params(self) -> dict[str, object]:
        return {"lock": self.name, "token": self.token, "lease_seconds": self.seconds}

    def acquire(self) -> None:
        """Take the lease, waiting up to ``wait`` seconds for another holder to release it or expire."""
        self.db.auto_commit(cypher.query("store/lock_constraint"), retries=5)
        deadline = time.monotonic() + self.wait
        told = False
        while True:
            rows = self.db.write(cypher.query("store/acquire_lock"), owner=self.owner, **self._params())
            if rows:
                break
            holder = self.holder()
            if time.monotonic() >= deadline:
                longer = f" (or wait longer: {self.wait_setting}, now {self.wait:g} s)" if self.wait_setting else ""
                raise LeaseError(
                    f"cannot run {self.purpose}: {holder[0] or 'another process'} holds the {self.name!r} lock "
                    f"(its lease runs until {holder[1] or 'now'}). Wait for it to finish and run again{longer}; "
                    f"the lease of a killed holder expires by itself within {self.seconds:g} s"
                )
            if not told:
                log.warning("waiting up to %g s for the %r lock held by %s", self.wait, self.name, holder[0])
                told = True
            time.sleep(0.5)
        self._stop.clear()
        self._thread = threading.Thread(target=self._heartbeat, name=f"kag-lease-{self.name}", daemon=True)
        self._thread.start()

    def holder(self) -> tuple[str | None, str | None]:
        """(owner, expires_at) of the live holder, or (None, None)."""
        rows = self.db.read(cypher.query("store/lock_holder"), lock=self.name)
        return (rows[0]["owner"], rows[0]["expires_at"]) if rows else (None, None)

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.seconds / 3):
            try:
                if not self.db.write(cypher.query("store/renew_lock"), **self._params()):
                    self.lost = True
                    log.error("the %r lease was lost (another process took the lock)", self.name)
                    return
            except Exception as exc:  # noqa: BLE001 - a failed renewal is retried; fence() decides
                log.warning("could not renew the %r lease: %s", self.name, exc)

    def fence(self, tx: Transaction) -> None:
        """Renew the lease inside ``tx``; raise :class:`LeaseLostError` (the caller's transaction
        then rolls back) when this process no longer holds it."""
        if tx.run(cypher.query("store/renew_lock"), self._params()).single() is None:
            self.lost = True
            raise LeaseLostError(
                f"{self.purpose} lost the {self.name!r} lock: its lease ran out (the process was paused or cut off "
                f"for more than {self.seconds:g} s) and another process took it. This transaction was not "
                "written; run the command again"
            )

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        self.db.write(cypher.query("store/release_lock"), lock=self.name, token=self.token)

    def __enter__(self) -> Lease:
        self.acquire()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        try:
            self.release()
        except Exception as error:  # noqa: BLE001 - do not hide the error that ended the block
            if exc is None:
                raise
            log.warning("could not release the %r lease: %s", self.name, error)

"""The builder lease: one ``kag-neo4j load`` or ``delete`` at a time per database.

Both take the lock ``'builder'`` (:class:`kag_neo4j.store.lease.Lease`, the mechanism
``kag-neo4j migrate`` uses) for their whole run, and fence every write transaction with it. A
second loader waits ``KAG_LOAD_LOCK_WAIT`` seconds (default 120) for the lock, then is refused
with a :class:`~kag_neo4j.errors.LeaseError` naming the holder; the lease of a killed loader runs
out after ``KAG_LOAD_LEASE_SECONDS`` (default 60).
"""

from __future__ import annotations

from kag_neo4j.config import Settings
from kag_neo4j.store.database import Database
from kag_neo4j.store.lease import Lease

#: the id of the lock node loads and deletes share
BUILDER_LOCK = "builder"


def builder_lease(db: Database, purpose: str, settings: Settings | None = None) -> Lease:
    """An unacquired builder lease (use it as a context manager)."""
    fields = Settings.model_fields
    seconds = settings.load_lease_seconds if settings is not None else fields["load_lease_seconds"].default
    wait = settings.load_lock_wait if settings is not None else fields["load_lock_wait"].default
    return Lease(db, BUILDER_LOCK, purpose=purpose, seconds=seconds, wait=wait, wait_setting="KAG_LOAD_LOCK_WAIT")

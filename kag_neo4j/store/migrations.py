"""Ordered, checksummed, idempotent migrations from the ``migrations/`` folder.

Each ``NNNN_name.cypher`` file is applied once and recorded as ``(:KagMigration {version, name,
checksum, applied_at})``. A file changed after it was applied is refused. A lease on a lock node
(:mod:`kag_neo4j.store.lease`, id ``'migrations'``) makes two concurrent runs apply nothing twice. Statements in a file are separated by ``;`` at a line end.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kag_neo4j.errors import IndexDimensionError, LeaseError, MigrationError
from kag_neo4j.resources import resource_dir
from kag_neo4j.store import cypher
from kag_neo4j.store.database import Database
from kag_neo4j.store.lease import Lease

_FILE = re.compile(r"^(\d{4})_([a-z0-9_]+)\.cypher$")
_LEASE_SECONDS = 300
_LOCK_WAIT_SECONDS = 120.0

#: vector indexes the core migration creates, and their label/property
VECTOR_INDEXES = {"chunk_embedding": "Chunk", "entity_embedding": "Entity", "concept_embedding": "Concept"}


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    path: Path
    text: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    @property
    def filename(self) -> str:
        return self.path.name

    def statements(self) -> list[str]:
        return split_statements(self.text)


@dataclass(frozen=True)
class AppliedMigration:
    version: int
    name: str
    checksum: str
    applied_at: str
    statements: int
    ms: int


@dataclass
class MigrationReport:
    applied: list[Migration] = field(default_factory=list)
    already: list[AppliedMigration] = field(default_factory=list)
    pending: list[Migration] = field(default_factory=list)


def split_statements(text: str) -> list[str]:
    """Split a migration into statements: ``;`` at a line end ends one; ``//`` lines are comments."""
    statements: list[str] = []
    current: list[str] = []
    for line in text.splitlines():
        if line.strip().startswith("//"):
            continue
        stripped = line.rstrip()
        if stripped.endswith(";"):
            current.append(stripped[:-1])
            statement = "\n".join(current).strip()
            if statement:
                statements.append(statement)
            current = []
        else:
            current.append(line)
    rest = "\n".join(current).strip()
    if rest:
        statements.append(rest)
    return statements


def discover(folder: Path | None = None) -> list[Migration]:
    """The migration files in order; a misnamed file or a duplicate version is an error."""
    root = folder or resource_dir("migrations")
    found: dict[int, Migration] = {}
    for path in sorted(root.glob("*.cypher")):
        match = _FILE.match(path.name)
        if not match:
            raise MigrationError(
                f"migration file {path} is misnamed: use NNNN_lowercase_name.cypher (e.g. 0002_add_index.cypher)"
            )
        version = int(match.group(1))
        if version in found:
            raise MigrationError(f"migrations {found[version].path.name} and {path.name} share version {version:04d}")
        found[version] = Migration(version, match.group(2), path, path.read_text(encoding="utf-8"))
    return [found[v] for v in sorted(found)]


def applied(db: Database) -> list[AppliedMigration]:
    return [AppliedMigration(**row) for row in db.read(cypher.query("migrations/applied"))]


def _check_unchanged(migrations: Sequence[Migration], done: Sequence[AppliedMigration]) -> None:
    by_version = {m.version: m for m in migrations}
    for record in done:
        current = by_version.get(record.version)
        if current is None:
            continue  # applied by a newer release; nothing to compare
        if current.checksum != record.checksum:
            raise MigrationError(
                f"migration {current.filename} was applied on {record.applied_at} with checksum "
                f"{record.checksum[:12]}… but the file now has {current.checksum[:12]}…. Applied migrations "
                "are immutable: restore the file and put the change in a new migration "
                f"({current.version + 1:04d}_….cypher)"
            )


def check_vector_dimensions(db: Database, dimension: int) -> None:
    """Refuse an existing kag vector index whose dimension differs from the embedder's."""
    for row in db.read(cypher.query("migrations/vector_indexes")):
        if row["name"] in VECTOR_INDEXES and row["dimensions"] is not None and int(row["dimensions"]) != dimension:
            raise IndexDimensionError(
                f"vector index {row['name']} holds {row['dimensions']}-dimensional vectors but the configured "
                f"embedder makes {dimension}. Either configure the embedder the graph was built with "
                "(KAG_EMBEDDER / KAG_EMBEDDING_MODEL), or drop the index and re-embed: "
                f"DROP INDEX {row['name']}; then run `kag-neo4j migrate` and reload your documents"
            )


def plan(db: Database, folder: Path | None = None) -> MigrationReport:
    """What is applied and what is pending, without changing anything."""
    migrations = discover(folder)
    done = applied(db)
    _check_unchanged(migrations, done)
    done_versions = {m.version for m in done}
    return MigrationReport(already=done, pending=[m for m in migrations if m.version not in done_versions])


def migrate(
    db: Database,
    *,
    embedding_dimension: int,
    folder: Path | None = None,
    on_apply: Callable[[Migration], None] | None = None,
) -> MigrationReport:
    """Apply every pending migration once, in order, under the migration lock."""
    check_vector_dimensions(db, embedding_dimension)
    db.auto_commit(cypher.query("migrations/version_constraint"), retries=5)
    lease = Lease(db, "migrations", purpose="`kag-neo4j migrate`", seconds=_LEASE_SECONDS, wait=_LOCK_WAIT_SECONDS)
    try:
        lease.acquire()
    except LeaseError as exc:
        raise MigrationError(str(exc)) from exc
    try:
        report = plan(db, folder)  # re-read under the lock: a concurrent run may have applied some
        for migration in report.pending:
            if on_apply:
                on_apply(migration)
            began = time.perf_counter()
            statements = migration.statements()
            for number, statement in enumerate(statements, start=1):
                try:
                    db.auto_commit(statement, embedding_dimension=embedding_dimension)
                except Exception as exc:
                    raise MigrationError(
                        f"migration {migration.filename} failed at statement {number} of {len(statements)}: {exc}\n"
                        "Statements before it were applied (they are idempotent); fix the file and re-run."
                    ) from exc
            db.write(
                cypher.query("migrations/record"), version=migration.version, name=migration.name,
                checksum=migration.checksum, statements=len(statements),
                ms=int((time.perf_counter() - began) * 1000),
            )
            report.applied.append(migration)
        report.pending = []
    finally:
        lease.release()
    check_vector_dimensions(db, embedding_dimension)
    return report

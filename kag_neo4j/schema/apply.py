"""Apply a validated schema to Neo4j: meta-graph, uniqueness constraints, search indexes.

What ``apply`` creates:

* the meta-graph of the namespace (:mod:`kag_neo4j.schema.metagraph`), in one write transaction,
  and only when it differs from what is stored;
* uniqueness constraints on the meta-graph keys (``kag_schema_*``);
* per type: ``spg_<Label>_id`` — uniqueness of ``id`` on the type's label;
* per type with ``index: Text|TextAndVector`` properties (own or inherited): one fulltext index
  ``spg_<Label>_text`` over all of them (an existing one is widened, never narrowed, so
  namespaces sharing a label do not break each other's index);
* per ``index: Vector|TextAndVector`` property: a cosine vector index
  ``spg_<Label>_<prop>_vector`` on ``<prop>_embedding``, with the configured dimension (an
  existing index with another dimension is an :class:`~kag_neo4j.errors.IndexDimensionError`).

Every statement is rendered (names validated again by :func:`~kag_neo4j.store.cypher.render`)
before anything is written, each DDL statement runs in its own auto-commit transaction (Neo4j
does not allow schema and data changes together), and everything is ``IF NOT EXISTS``: applying
the same schema twice changes nothing and reports so.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from kag_neo4j.errors import ConfigError, IndexDimensionError, SchemaError
from kag_neo4j.schema import naming
from kag_neo4j.schema.metagraph import MetaRows, read_rows, to_rows, write_metagraph
from kag_neo4j.schema.models import ResolvedSchema
from kag_neo4j.store.cypher import query, render
from kag_neo4j.store.database import Database

DdlKind = Literal["meta", "constraint", "fulltext", "vector"]


class DdlAction(str, Enum):
    CREATE = "create"
    EXISTS = "exists"
    REPLACE = "replace"


class DdlStatement(BaseModel):
    """One constraint or index the schema needs, and what apply does about it."""

    model_config = ConfigDict(frozen=True)

    kind: DdlKind
    name: str
    label: str
    properties: tuple[str, ...]
    cypher: str
    params: dict[str, Any] = {}
    action: DdlAction = DdlAction.CREATE
    note: str | None = None

    def describe(self) -> str:
        target = f"(:{self.label} {{{', '.join(self.properties)}}})"
        notes = [f"dimension {self.params['dimensions']}"] if "dimensions" in self.params else []
        notes += [self.note] if self.note else []
        note = f" ({'; '.join(notes)})" if notes else ""
        return f"{self.action.value:7} {self.kind:10} {self.name} on {target}{note}"


class ApplyReport(BaseModel):
    """What ``apply`` did (or, in a dry run, would do)."""

    model_config = ConfigDict(frozen=True)

    namespace: str
    dry_run: bool
    metagraph: Literal["create", "update", "unchanged", "unknown"]
    statements: tuple[DdlStatement, ...]
    warnings: tuple[str, ...] = ()

    def with_action(self, action: DdlAction) -> list[DdlStatement]:
        return [s for s in self.statements if s.action is action]

    @property
    def changed(self) -> bool:
        return self.metagraph != "unchanged" or any(s.action is not DdlAction.EXISTS for s in self.statements)


# --------------------------------------------------------------------------- statements


#: Uniqueness of the meta-graph keys: (constraint name, label, property).
META_CONSTRAINTS: tuple[tuple[str, str, str], ...] = (
    ("kag_schema_namespace_name", "SchemaNamespace", "name"),
    ("kag_schema_type_key", "SchemaType", "key"),
    ("kag_schema_property_key", "SchemaProperty", "key"),
    ("kag_schema_relation_key", "SchemaRelation", "key"),
)


def _unique(kind: DdlKind, name: str, label: str, property_name: str) -> DdlStatement:
    cypher = render("schema/create_constraint", constraint=name, label=label, property=property_name)
    return DdlStatement(kind=kind, name=name, label=label, properties=(property_name,), cypher=cypher)


def meta_statements() -> list[DdlStatement]:
    """The meta-graph key constraints."""
    return [_unique("meta", name, label, prop) for name, label, prop in META_CONSTRAINTS]


def constraint_statement(label: str) -> DdlStatement:
    """Uniqueness of ``id`` on a schema type's label."""
    return _unique("constraint", naming.constraint_name(label), label, "id")


def fulltext_statement(label: str, properties: list[str]) -> DdlStatement:
    if not properties:
        raise ValueError("a fulltext index needs at least one property")
    name = naming.fulltext_index_name(label)
    cypher = render("schema/create_fulltext", index=name, label=label, properties=list(properties))
    return DdlStatement(kind="fulltext", name=name, label=label, properties=tuple(properties), cypher=cypher)


def vector_statement(label: str, property_name: str, vector_property: str, dimensions: int) -> DdlStatement:
    if isinstance(dimensions, bool) or not isinstance(dimensions, int) or not 1 <= dimensions <= 4096:
        raise ConfigError(f"vector dimension {dimensions!r} is invalid; use an integer from 1 to 4096")
    name = naming.vector_index_name(label, property_name)
    cypher = render("schema/create_vector", index=name, label=label, property=vector_property)
    return DdlStatement(kind="vector", name=name, label=label, properties=(vector_property,), cypher=cypher,
                        params={"dimensions": dimensions})


def needs_dimensions(schema: ResolvedSchema) -> bool:
    """Whether the schema declares any vector index."""
    return any(p.index is not None and p.index.vector for t in schema.types for p in t.properties)


def schema_statements(schema: ResolvedSchema, dimensions: int | None) -> list[DdlStatement]:
    """The constraints and indexes ``schema`` asks for (all rendered, i.e. validated)."""
    if needs_dimensions(schema) and dimensions is None:
        raise ConfigError(
            f"schema {schema.namespace} declares vector indexes but no embedding dimension is known; "
            "configure the embedder (KAG_EMBEDDER / KAG_EMBEDDING_DIMENSIONS) or pass --dimensions N"
        )
    statements: list[DdlStatement] = []
    for spg_type in schema.types:
        statements.append(constraint_statement(spg_type.label))
        text = [p.name for p in spg_type.properties if p.index is not None and p.index.fulltext]
        if text:
            statements.append(fulltext_statement(spg_type.label, text))
        for prop in spg_type.properties:
            if prop.index is not None and prop.index.vector:
                assert prop.vector_property is not None and dimensions is not None
                statements.append(vector_statement(spg_type.label, prop.name, prop.vector_property, dimensions))
    return statements


# --------------------------------------------------------------------------- planning


class Existing(BaseModel):
    """Constraints and indexes that exist in the database (from SHOW)."""

    constraints: list[dict[str, Any]] = []
    indexes: list[dict[str, Any]] = []


def read_existing(db: Database) -> Existing:
    return Existing(constraints=db.read(query("schema/show_constraints")),
                    indexes=db.read(query("schema/show_indexes")))


#: How SHOW CONSTRAINTS names a node uniqueness constraint (5.x, and 2025.x).
_UNIQUENESS = ("UNIQUENESS", "NODE_PROPERTY_UNIQUENESS")


def _same_schema(row: dict[str, Any], label: str, properties: tuple[str, ...]) -> bool:
    return row.get("entityType") == "NODE" and list(row.get("labelsOrTypes") or []) == [label] and \
        list(row.get("properties") or []) == list(properties)


def _reconcile(statement: DdlStatement, existing: Existing) -> DdlStatement:
    if statement.kind in ("meta", "constraint"):
        for row in existing.constraints:
            if row["name"] == statement.name and not _same_schema(row, statement.label, statement.properties):
                raise SchemaError(f"constraint {statement.name} exists with another definition "
                                  f"({row.get('labelsOrTypes')} {row.get('properties')}); drop it and apply again")
            if row.get("type") in _UNIQUENESS and _same_schema(row, statement.label, statement.properties):
                note = None if row["name"] == statement.name else f"covered by {row['name']}"
                return statement.model_copy(update={"action": DdlAction.EXISTS, "note": note})
        return statement
    by_name = {row["name"]: row for row in existing.indexes}
    if statement.kind == "fulltext":
        found = by_name.get(statement.name)
        if found is None:
            return statement
        row = found
        labels = list(row.get("labelsOrTypes") or [])
        if row.get("type") != "FULLTEXT" or labels != [statement.label]:
            raise SchemaError(f"index {statement.name} exists with another definition ({row.get('type')} on "
                              f"{labels}); drop it and apply again")
        have = list(row.get("properties") or [])
        missing = [p for p in statement.properties if p not in have]
        if not missing:
            return statement.model_copy(update={"action": DdlAction.EXISTS})
        widened = fulltext_statement(statement.label, have + missing)
        return widened.model_copy(update={"action": DdlAction.REPLACE,
                                          "note": f"widened with {', '.join(missing)}"})
    # vector
    dimensions = statement.params["dimensions"]
    for row in existing.indexes:
        same = row.get("type") == "VECTOR" and _same_schema(row, statement.label, statement.properties)
        if row["name"] == statement.name and not same:
            raise SchemaError(f"index {statement.name} exists with another definition; drop it and apply again")
        if same:
            if row.get("dimensions") != dimensions:
                raise IndexDimensionError(
                    f"vector index {row['name']} on (:{statement.label}).{statement.properties[0]} has dimension "
                    f"{row.get('dimensions')}, but the configured embedder has {dimensions}; drop the index "
                    f"(DROP INDEX {row['name']}) and re-embed, or configure the embedder it was built with"
                )
            note = None if row["name"] == statement.name else f"covered by {row['name']}"
            return statement.model_copy(update={"action": DdlAction.EXISTS, "note": note})
    return statement


def plan_statements(schema: ResolvedSchema, dimensions: int | None, existing: Existing | None) -> list[DdlStatement]:
    """Every statement with its action; with ``existing=None`` everything is planned as created."""
    statements = meta_statements() + schema_statements(schema, dimensions)
    if existing is None:
        return statements
    return [_reconcile(statement, existing) for statement in statements]


def _metagraph_status(stored: MetaRows | None, desired: MetaRows) -> Literal["create", "update", "unchanged"]:
    if stored is None:
        return "create"
    return "unchanged" if stored.same_content(desired) else "update"


# --------------------------------------------------------------------------- apply


def apply_schema(
    db: Database | None,
    schema: ResolvedSchema,
    *,
    dimensions: int | None = None,
    dry_run: bool = False,
    await_seconds: int = 300,
) -> ApplyReport:
    """Write ``schema`` into the database; see the module docstring. Idempotent.

    With ``dry_run`` nothing is written; with ``db=None`` (dry run only) the plan assumes an
    empty database.
    """
    schema = _revalidated(schema)
    desired = to_rows(schema)
    planned = plan_statements(schema, dimensions, None)  # renders (validates) every name first
    if db is None:
        if not dry_run:
            raise ValueError("apply_schema needs a database unless dry_run=True")
        return ApplyReport(namespace=schema.namespace, dry_run=True, metagraph="unknown",
                           statements=tuple(planned), warnings=schema.warnings)
    existing = read_existing(db)
    statements = [_reconcile(statement, existing) for statement in planned]
    status = _metagraph_status(read_rows(db, schema.namespace), desired)
    report = ApplyReport(namespace=schema.namespace, dry_run=dry_run, metagraph=status,
                         statements=tuple(statements), warnings=schema.warnings)
    if dry_run:
        return report
    meta = [s for s in statements if s.kind == "meta"]
    rest = [s for s in statements if s.kind != "meta"]
    _run_ddl(db, meta)
    if status != "unchanged":
        write_metagraph(db, desired)
    _run_ddl(db, rest)
    if any(s.action is not DdlAction.EXISTS and s.kind in ("fulltext", "vector") for s in statements):
        db.auto_commit(query("schema/await_indexes"), timeout=await_seconds)
    return report


def _revalidated(schema: ResolvedSchema) -> ResolvedSchema:
    """Validate the model again, so a hand-built (``model_construct``) schema cannot smuggle names in."""
    try:
        return ResolvedSchema.model_validate(schema.model_dump())
    except ValidationError as exc:
        raise SchemaError(f"schema {getattr(schema, 'namespace', '?')!r} is not a valid schema model; build it "
                          f"with load_schema()/validate_schema():\n{exc}") from exc


def _run_ddl(db: Database, statements: list[DdlStatement]) -> None:
    for statement in statements:
        if statement.action is DdlAction.EXISTS:
            continue
        if statement.action is DdlAction.REPLACE:
            db.auto_commit(render("schema/drop_index", index=statement.name))
        db.auto_commit(statement.cypher, **statement.params)

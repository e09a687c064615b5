"""Validation of names that become Cypher labels, relationship types or property keys.

Values always travel as ``$parameters``. Labels, relationship types and property keys cannot,
so they are checked here (and again by the query builder in ``kag_neo4j.store.cypher``) before
they are ever written into a query. Only letters, digits and underscores are allowed, starting
with a letter; Unicode letters (e.g. Chinese type names) are allowed.
"""

from __future__ import annotations

import re

from kag_neo4j.errors import InvalidIdentifierError

_IDENTIFIER = re.compile(r"^[^\W\d_]\w{0,127}$", re.UNICODE)

#: Labels and relationship types kag-neo4j itself uses; schema types may not take them.
RESERVED_LABELS = frozenset(
    {
        "Document", "Chunk", "Entity", "Concept", "Event", "SchemaType", "SchemaRelation",
        "SchemaProperty", "KagMigration", "KagMigrationLock", "KagRun", "KagStep", "KagMeta", "SchemaNamespace",
    }
)


_EXISTING_NAME = re.compile(r"^[\w.\-]{1,256}$", re.UNICODE)


class ExistingName(str):
    """The name of an index or constraint read back from the database (may start with ``_``)."""


def check_existing_name(name: str, *, what: str = "index or constraint name") -> ExistingName:
    """Accept a schema object's name read from ``SHOW INDEXES``/``SHOW CONSTRAINTS`` for dropping it.

    Wider than :func:`check_identifier` (tools such as neo4j-graphrag create ``__entity__…``
    indexes) but still without backticks, spaces or anything else that could end a quoted name.
    """
    if not isinstance(name, str) or not _EXISTING_NAME.fullmatch(name):
        raise InvalidIdentifierError(f"{what} {name!r} cannot be quoted safely")
    return ExistingName(name)


def check_identifier(name: str, *, what: str = "identifier") -> str:
    """Return ``name`` unchanged when it is a safe Cypher identifier, else raise."""
    if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name):
        raise InvalidIdentifierError(
            f"{what} {name!r} is not allowed: use letters, digits and underscores only, "
            "starting with a letter (at most 128 characters)"
        )
    return name


def quote_identifier(name: str, *, what: str = "identifier") -> str:
    """Validate ``name`` and return it backtick-quoted for use in Cypher."""
    return f"`{check_identifier(name, what=what)}`"

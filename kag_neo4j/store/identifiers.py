"""Validation of names that become Cypher labels, relationship types or property keys.

Values always travel as ``$parameters``. Labels, relationship types and property keys cannot,
so they are checked here (and again by the query builder in ``kag_neo4j.store.cypher``) before
they are ever written into a query, where templates also backtick-quote them. Only letters,
digits and underscores are allowed, starting with a letter; Unicode letters (e.g. Chinese type
names) are allowed, but a name must be in Unicode NFKC form (no full-width ``Ｃｈｕｎｋ``, no
``²``) and the letters of each part between underscores must come from one script (no Cyrillic
``С`` in a Latin ``Сhunk``; Latin mixed with Han, kana or Hangul is fine, and so is
``spg_Москва_id``).

This module also holds the one list of labels and relationship types kag-neo4j uses for its own
graph (:data:`RESERVED_LABELS`, :data:`RESERVED_RELATIONSHIP_TYPES`): the schema validator, the
builder and the solver's vocabulary all ask :func:`is_reserved_label` /
:func:`is_reserved_relationship_type`, which compare NFKC case-folded names.
"""

from __future__ import annotations

import re
import unicodedata

from kag_neo4j.errors import InvalidIdentifierError

_IDENTIFIER = re.compile(r"^[^\W\d_]\w{0,127}$", re.UNICODE)

#: Labels kag-neo4j itself uses; schema types that take one (or a ``Kag…``/``Schema…`` name) are
#: stored under ``Spg<name>``.
RESERVED_LABELS = frozenset(
    {
        "Document", "Chunk", "Entity", "Concept", "Event",
        "SchemaNamespace", "SchemaType", "SchemaRelation", "SchemaProperty",
        "KagMigration", "KagMigrationLock", "KagRun", "KagStep", "KagMeta", "KagTestDatabase",
    }
)

#: Relationship types kag-neo4j itself uses; schema predicates may not take them.
RESERVED_RELATIONSHIP_TYPES = frozenset(
    {
        "PART_OF", "NEXT", "MENTIONED_IN", "TITLE_ANCHOR", "RELATED", "BELONGS_TO",
        "IS_A", "CONTAINS", "SYNONYM", "CAUSES",
        "HAS_STEP", "USED", "DEPENDS_ON", "CITES",
        "DECLARES", "HAS_PROPERTY", "HAS_RELATION", "INHERITS", "RANGE",
    }
)


def fold_name(name: str) -> str:
    """The form reserved names are compared in: NFKC, case-folded (``chunk`` and ``ＣＨＵＮＫ`` are ``chunk``)."""
    return unicodedata.normalize("NFKC", name).casefold()


_RESERVED_LABEL_KEYS = frozenset(fold_name(label) for label in RESERVED_LABELS)
_RESERVED_TYPE_KEYS = frozenset(fold_name(rel_type) for rel_type in RESERVED_RELATIONSHIP_TYPES)


#: label prefixes kept for kag-neo4j's own nodes (``KagRun``, ``SchemaType``; not ``Kagura``)
_RESERVED_LABEL_PREFIX = re.compile(r"^(?:Kag|Schema)[A-Z0-9_]")


def is_reserved_label(name: str) -> bool:
    """Whether ``name`` is (a case or width variant of) a label kag-neo4j uses itself, or has the
    prefix of its own labels (``Kag``/``Schema`` followed by a capital)."""
    return fold_name(name) in _RESERVED_LABEL_KEYS or bool(_RESERVED_LABEL_PREFIX.match(name))


def is_reserved_relationship_type(name: str) -> bool:
    """Whether ``name`` is (a case or width variant of) a relationship type kag-neo4j uses itself."""
    return fold_name(name) in _RESERVED_TYPE_KEYS


#: scripts that may share one name (Japanese, Korean and Chinese writing mix them with Latin)
_SCRIPT_MIXES = (
    frozenset({"Latin", "Han", "Hiragana", "Katakana"}),
    frozenset({"Latin", "Han", "Hangul"}),
    frozenset({"Latin", "Han", "Bopomofo"}),
)


def _script(char: str) -> str | None:
    """The script of one character of a name (``None``: common to all, ``_`` and ASCII digits)."""
    if char == "_" or ("0" <= char <= "9"):
        return None
    name = unicodedata.name(char, "")
    if name.startswith(("CJK ", "IDEOGRAPHIC ")):
        return "Han"
    if name.startswith("KATAKANA-HIRAGANA "):
        return "Katakana"
    return name.split(" ", 1)[0].title() or "Unknown"


def _mixed_scripts(name: str) -> tuple[str, ...]:
    """The scripts of a part of ``name`` between underscores when they may not be mixed (``()``
    when the name is fine; ``spg_Москва_id`` is fine, ``Сhunk`` is not)."""
    for part in name.split("_"):
        scripts = {script for script in map(_script, part) if script is not None}
        if len(scripts) > 1 and not any(scripts <= allowed for allowed in _SCRIPT_MIXES):
            return tuple(sorted(scripts))
    return ()


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


#: what :func:`identifier_problem` says about a name that is not even Cypher-identifier shaped
SYNTAX_RULE = "use letters, digits and underscores only, starting with a letter (at most 128 characters)"


def identifier_problem(name: object) -> str | None:
    """Why ``name`` may not be a label, relationship type or property key (``None``: it may)."""
    if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name):
        return SYNTAX_RULE
    if name.isascii():
        return None
    normal = unicodedata.normalize("NFKC", name)
    if normal != name:
        return f"it has full-width, compatibility or look-alike characters; write it in Unicode NFKC form ({normal!r})"
    mixed = _mixed_scripts(name)
    if mixed:
        return f"it mixes letters of the {' and '.join(mixed)} scripts, which look alike; write it in one script"
    return None


def check_identifier(name: str, *, what: str = "identifier") -> str:
    """Return ``name`` unchanged when it is a safe Cypher identifier, else raise."""
    problem = identifier_problem(name)
    if problem is not None:
        raise InvalidIdentifierError(f"{what} {name!r} is not allowed: {problem}")
    return name


def quote_identifier(name: str, *, what: str = "identifier") -> str:
    """Validate ``name`` and return it backtick-quoted for use in Cypher."""
    return f"`{check_identifier(name, what=what)}`"

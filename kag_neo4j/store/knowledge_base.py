"""Knowledge bases: several graphs in one Neo4j database, kept apart by label namespaces.

A stock Neo4j (Community, Aura Free) has one user database, so a knowledge base (KB) is a namespace
inside it: the default KB (``default``) keeps kag-neo4j's labels as they are (``:Chunk``,
``:Entity``, ``:Person``); a KB named ``legal`` stores the same graph under ``:legal__Chunk``,
``:legal__Entity``, ``:legal__Person``, with its own constraints and indexes (``legal__chunk_embedding``)
and its own GDS projections. Relationships need no namespace: they only join nodes of one KB.

Queries are written once, for the default KB. :func:`scoped` rewrites a query's text for a KB:

* every **node label** (in patterns, label predicates, ``SET``/``REMOVE``) takes the prefix —
  relationship types, property keys, map keys, strings and comments are left alone;
* ``labels(x)`` reads the node's labels *without* the prefix, so comparisons with ``'Entity'`` or
  ``$type`` mean the same in every KB, and ``CALL db.labels() YIELD label`` lists this KB's labels only;
* **index and constraint names** (``CREATE … INDEX name``, ``DROP CONSTRAINT name``, the first argument
  of ``db.index.vector.queryNodes('name', …)`` / ``fulltext``) take the prefix; an unnamed index or
  constraint is refused (it could not be told apart).

``SHOW INDEXES`` / ``SHOW CONSTRAINTS`` queries filter with the ``$kb_prefix`` parameter themselves
(see ``cypher/store/list_indexes.cypher``); :class:`~kag_neo4j.store.database.Database` passes it to
every query that names it. Only identifiers are rewritten: values stay ``$parameters``, and a KB name
is checked against :data:`KB_NAME` before it reaches a query. Queries must reach nodes through a label
(a ``MATCH (n)`` scan would see every KB); ``tests/integration/test_knowledge_bases.py``
checks every query's plan for that.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from kag_neo4j.errors import ConfigError

__all__ = ["DEFAULT_KB", "KB_NAME", "KnowledgeBase", "check_kb_name", "scoped"]

#: the knowledge base that keeps today's labels and data
DEFAULT_KB = "default"

#: what a KB name may be: lower-case letters, digits and single underscores, starting with a letter
KB_NAME = re.compile(r"^[a-z](?:[a-z0-9]|_(?!_)){0,30}$")

#: separates a KB's name from the label or index name it prefixes (never inside a KB name)
SEPARATOR = "__"


def check_kb_name(name: str) -> str:
    """``name`` if it is a valid KB name, else a :class:`ConfigError` that says what is allowed."""
    if not isinstance(name, str) or not KB_NAME.match(name) or name.endswith("_"):
        raise ConfigError(
            f"knowledge base name {name!r} is invalid; use 1-31 lower-case letters, digits and single "
            "underscores, starting with a letter (e.g. `legal`, `risk_2026`)"
        )
    return name


@dataclass(frozen=True)
class KnowledgeBase:
    """One knowledge base: its name and the prefix of its labels and index names."""

    name: str = DEFAULT_KB

    def __post_init__(self) -> None:
        check_kb_name(self.name)

    @property
    def is_default(self) -> bool:
        return self.name == DEFAULT_KB

    @property
    def prefix(self) -> str:
        """What this KB's labels and index names start with (empty for the default KB)."""
        return "" if self.is_default else f"{self.name}{SEPARATOR}"

    def stored(self, name: str) -> str:
        """The name a label or index ``name`` is stored under in this KB."""
        return f"{self.prefix}{name}"

    def owns(self, name: str) -> bool:
        """Whether a stored label or index name belongs to this KB."""
        return name.startswith(self.prefix) and SEPARATOR not in name[len(self.prefix):]

    def bare(self, name: str) -> str:
        """A stored label or index name of this KB without its prefix."""
        return name[len(self.prefix):]

    def rewrite(self, cypher: str) -> str:
        """The query ``cypher`` (written for the default KB) for this KB."""
        return scoped(cypher, self.prefix)

    def scope(self, cypher: str, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """``cypher`` and its ``params`` as they run in this KB: the rewritten text, and ``$kb_prefix``
        added when the text names it."""
        text = self.rewrite(cypher)
        return text, ({**params, "kb_prefix": self.prefix} if "$kb_prefix" in text else params)


_TOKEN = re.compile(
    r"""(?P<comment>//[^\n]*|/\*.*?\*/)
      |(?P<string>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
      |(?P<quoted>`(?:[^`]|``)*`)
      |(?P<param>\$\w+)
      |(?P<word>[^\W\d]\w*)
      |(?P<number>\d[\w.]*)
      |(?P<space>\s+)
      |(?P<punct>::|->|<-|.)""",
    re.S | re.X | re.U,
)

_BLOCK_OPENERS = frozenset({"CALL", "EXISTS", "COUNT", "COLLECT"})
_INDEX_KINDS = frozenset({"FULLTEXT", "VECTOR", "RANGE", "TEXT", "POINT", "LOOKUP"})
_NAMELESS = frozenset({"IF", "FOR", "ON"})
_INDEX_PROCEDURES = ("db.index.vector.queryNodes", "db.index.fulltext.queryNodes")
_DB_LABELS = re.compile(r"CALL\s+db\.labels\(\)\s+YIELD\s+label\b(?!\s+AS\b)")


@dataclass
class _Token:
    kind: str
    text: str

    @property
    def upper(self) -> str:
        return self.text.upper() if self.kind == "word" else ""


def _tokens(cypher: str) -> list[_Token]:
    return [_Token(str(match.lastgroup), match.group()) for match in _TOKEN.finditer(cypher)]


def _prefixed(token: _Token, prefix: str) -> str:
    if token.kind == "quoted":
        return f"`{prefix}{token.text[1:]}"
    return f"{prefix}{token.text}" if token.kind == "word" else token.text


def _quote_prefixed(token: _Token, prefix: str) -> str:
    quote = token.text[0]
    return f"{quote}{prefix}{token.text[1:]}"


@lru_cache(maxsize=4096)
def scoped(cypher: str, prefix: str) -> str:
    """``cypher`` with its labels and index names prefixed by ``prefix`` (see the module docs).

    The default KB (``prefix`` empty) keeps the text but for ``db.labels()``, which lists the
    default KB's labels only (a label with ``__`` belongs to another KB)."""
    tokens = _tokens(cypher)
    significant = [i for i, t in enumerate(tokens) if t.kind not in ("space", "comment")]
    out = [t.text for t in tokens]
    stack: list[str] = []  # "(", "[rel", "[list", "{map", "{block"
    labelled = -2  # the position of the last label prefixed
    for position, index in enumerate(significant):
        token = tokens[index]
        before = tokens[significant[position - 1]] if position > 0 else None
        before2 = tokens[significant[position - 2]] if position > 1 else None
        after = tokens[significant[position + 1]] if position + 1 < len(significant) else None
        if token.text == "(":
            stack.append("(")
        elif token.text == "[":
            stack.append("[rel" if before is not None and before.text in ("-", "<-") else "[list")
        elif token.text == "{":
            block = before is not None and (before.upper in _BLOCK_OPENERS or before.text == ")")
            stack.append("{block" if block else "{map")
        elif token.text in (")", "]", "}"):
            if stack:
                stack.pop()
        if not prefix:
            continue
        inner = stack[-1] if stack else ""
        if token.text == ":" and after is not None and after.kind in ("word", "quoted"):
            map_key = inner == "{map" and before2 is not None and before2.text in ("{", ",")
            if inner != "[rel" and not map_key:
                out[significant[position + 1]] = _prefixed(after, prefix)
                labelled = position + 1
        elif token.text in ("|", "&") and labelled == position - 1 and inner == "(" and after is not None and (
            after.kind in ("word", "quoted")
        ):  # a label expression in a node pattern: (n:Entity|Event)
            out[significant[position + 1]] = _prefixed(after, prefix)
            labelled = position + 1
        elif token.upper in ("CONSTRAINT", "INDEX") and before is not None and (
            before.upper in ("CREATE", "DROP") or (before.upper in _INDEX_KINDS and token.upper == "INDEX")
        ):
            if after is None or after.upper in _NAMELESS or after.kind not in ("word", "quoted"):
                raise ValueError(f"an index or constraint in a knowledge base needs a name: {cypher[:80]!r}")
            out[significant[position + 1]] = _prefixed(after, prefix)
        elif token.kind == "string" and before is not None and before.text == "(" and position > 1:
            called = "".join(tokens[j].text for j in significant[max(0, position - 8):position - 1])
            if called.endswith(_INDEX_PROCEDURES):
                out[index] = _quote_prefixed(token, prefix)
        elif token.text == "labels" and after is not None and after.text == "(" and not (
            before is not None and before.text == "."
        ):
            variable = tokens[significant[position + 2]] if position + 3 < len(significant) else None
            closing = tokens[significant[position + 3]] if position + 3 < len(significant) else None
            if variable is None or variable.kind != "word" or closing is None or closing.text != ")":
                raise ValueError(f"labels() in a knowledge base takes a variable: {cypher[:80]!r}")
            out[index] = (f"[__kb_l IN labels({variable.text}) WHERE __kb_l STARTS WITH $kb_prefix "
                          "| substring(__kb_l, size($kb_prefix))]")
            for j in range(position + 1, position + 4):
                out[significant[j]] = ""
    text = "".join(out)
    return _DB_LABELS.sub(
        "CALL db.labels() YIELD label AS __kb_label WITH * WHERE __kb_label STARTS WITH $kb_prefix AND NOT "
        "substring(__kb_label, size($kb_prefix)) CONTAINS '__' "
        "WITH *, substring(__kb_label, size($kb_prefix)) AS label",
        text,
    )

"""The predicate key: how a plan's predicate or type name is compared with the graph's.

``predicate_key("plays for") == predicate_key("plays_for") == predicate_key("PlaysFor") == "playsfor"``.
Rules: Unicode NFKC (full-width letters, ligatures, no-break and ideographic spaces), then the
characters of :data:`KEY_DROPPED` removed (space, tab, newline, carriage return, ``_``, ``-``),
then lower-cased. Accents and other punctuation are kept.

The same key is computed in Cypher on the stored side - relation types, open-fact predicates
and property keys in ``cypher/solver/one_hop.cypher`` and ``cypher/solver/entity_properties.cypher``::

    toLower(reduce(s = normalize(name, NFKC), c IN [' ', '\\t', '\\n', '\\r', '_', '-'] | replace(s, c, '')))

``tests/integration/test_predicate_key.py`` checks on the real Neo4j that both forms agree on
tricky inputs (case, width, accents, whitespace, punctuation). Entity *names* have their own,
looser key for entity resolution (:func:`kag_neo4j.builder.names.name_key`: articles,
possessives, accents and punctuation dropped); it has no Cypher form.
"""

from __future__ import annotations

import unicodedata

__all__ = ["KEY_DROPPED", "predicate_key"]

#: removed from a name after NFKC (the Cypher form lists the same characters)
KEY_DROPPED = (" ", "\t", "\n", "\r", "_", "-")
_DROP = str.maketrans("", "", "".join(KEY_DROPPED))


def predicate_key(name: str) -> str:
    """The comparison key of a predicate or type name (see the module docs)."""
    return unicodedata.normalize("NFKC", name).translate(_DROP).lower()

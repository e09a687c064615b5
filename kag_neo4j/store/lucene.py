"""Lucene query text for Neo4j's fulltext indexes, built from untrusted text.

A fulltext query string is parsed by Lucene's classic query parser, so free text must be escaped
before it goes in as the ``$parameter`` of ``db.index.fulltext.queryNodes``. One rule set, the
strict one: every character the parser treats specially - ``+ - & | ! ( ) { } [ ] ^ " ~ * ? :
\\ /`` - is escaped on its own with a backslash (``&`` and ``|`` too, not only ``&&`` / ``||``),
so no input can open a group, a range, a regular expression (``/``), a field or a phrase.

* :func:`lucene_terms` - the words of a text, OR-ed: what retrieval and linking search with.
  Boolean operator words (``AND OR NOT TO``) are lower-cased so they stay words.
* :func:`lucene_phrase` - one phrase query on one field (the builder's alias lookup).
"""

from __future__ import annotations

import re

__all__ = ["SPECIAL_CHARACTERS", "escape", "lucene_phrase", "lucene_terms"]

#: every character Lucene's classic query parser gives a meaning to
SPECIAL_CHARACTERS = frozenset('+-&|!(){}[]^"~*?:\\/')
_SPECIAL = re.compile("([" + re.escape("".join(sorted(SPECIAL_CHARACTERS))) + "])")
_WORD = re.compile(r"\w+", re.UNICODE)
_OPERATOR_WORDS = frozenset({"AND", "OR", "NOT", "TO"})


def escape(text: str) -> str:
    """``text`` with every special character backslash-escaped."""
    return _SPECIAL.sub(r"\\\1", text)


def lucene_terms(text: str, max_terms: int = 32) -> str:
    """A safe query for free text: its distinct words (at most ``max_terms``), escaped, OR-ed;
    ``''`` when the text has no word (callers then skip the fulltext call)."""
    terms: list[str] = []
    for word in _WORD.findall(text):
        escaped = escape(word.lower() if word in _OPERATOR_WORDS else word)
        if escaped and escaped not in terms:
            terms.append(escaped)
    return " ".join(terms[:max_terms])


def lucene_phrase(field_name: str, text: str) -> str:
    """A phrase query for ``text`` in ``field_name`` (a field name of the code, not of the input)."""
    return field_name + ':"' + escape(text) + '"'

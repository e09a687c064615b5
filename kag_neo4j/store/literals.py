"""Values written as Cypher literals, for the ``:param`` lines pasted into Neo4j Browser.

Queries themselves never embed values (they are ``$parameters``); these literals exist only
for the commands a person copies into Browser (``kag-neo4j trace --browser``, ``rules explain``).
"""

from __future__ import annotations

__all__ = ["cypher_literal", "cypher_string"]

_ESCAPES = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def cypher_string(value: str) -> str:
    """``value`` as a single-quoted Cypher string literal on one line (quotes, backslashes and
    control characters escaped), safe to paste into a Browser command."""
    out = []
    for char in value:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F or char in "\u2028\u2029\u0085":
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return "'" + "".join(out) + "'"


def cypher_literal(value: object) -> str:
    """A parameter value (null, boolean, number, list or text) written as a Cypher literal."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(cypher_literal(item) for item in value) + "]"
    return cypher_string(str(value))

"""Render the rule templates of ``cypher/rules/``.

A template variable is either an :class:`Ident` (a label, relationship type, property key or
variable that went through :func:`kag_neo4j.store.identifiers.quote_identifier`), a
:class:`Fragment` (Cypher the compiler assembled only from such identifiers, ``$parameter``
names and fixed keywords — never a value), or a list/dict of them. Anything else is refused, so
no value can reach a query's text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache

import jinja2

from kag_neo4j.resources import resource_dir
from kag_neo4j.store.identifiers import quote_identifier


class Ident(str):
    """A backtick-quoted, validated identifier; make one with :func:`ident`."""


class Fragment(str):
    """Cypher assembled by the rule compiler from identifiers, parameter names and keywords."""


def ident(name: str, *, what: str = "identifier") -> Ident:
    return Ident(quote_identifier(name, what=what))


_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=False,
                          trim_blocks=True, lstrip_blocks=True)


@lru_cache(maxsize=None)
def _template(name: str) -> jinja2.Template:
    path = resource_dir("cypher") / "rules" / f"{name}.cypher"
    return _ENV.from_string(path.read_text(encoding="utf-8"))


def _checked(value: object, key: str) -> object:
    if isinstance(value, (Ident, Fragment)) or isinstance(value, bool) or value is None:
        return value
    if isinstance(value, Mapping):
        return {k: _checked(v, key) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [_checked(item, key) for item in value]
    raise TypeError(f"rule template variable {key} must be an Ident or a Fragment, not {type(value).__name__}")


def render(name: str, **variables: object) -> str:
    """``cypher/rules/<name>.cypher`` with ``variables``; comment lines (``//``) are dropped."""
    checked = {key: _checked(value, key) for key, value in variables.items()}
    text = _template(name).render(**checked)
    return "\n".join(line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("//"))

"""Load Cypher from the ``cypher/``, ``procedures/`` and ``migrations/`` folders.

Queries are files. A file may be a jinja2 template, but template variables may only carry
identifiers (labels, relationship types, property keys, index names) and must be passed
through :func:`render`, which validates every one of them again; values always stay
``$parameters``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path

import jinja2

from kag_neo4j.resources import ResourceFolder, resource_dir
from kag_neo4j.store.identifiers import ExistingName, check_identifier


@lru_cache(maxsize=None)
def _read(folder: ResourceFolder, name: str) -> str:
    path = _path(folder, name)
    if not path.is_file():
        raise FileNotFoundError(f"Cypher file {path} does not exist")
    return path.read_text(encoding="utf-8")


def _path(folder: ResourceFolder, name: str) -> Path:
    root = resource_dir(folder)
    path = (root / f"{name}.cypher").resolve()
    if root.resolve() not in path.parents:
        raise ValueError(f"Cypher file name {name!r} escapes {root}")
    return path


def query(name: str, folder: ResourceFolder = "cypher") -> str:
    """The text of ``<folder>/<name>.cypher`` (no template variables allowed)."""
    text = _read(folder, name)
    if "{{" in text or "{%" in text:
        raise ValueError(f"{folder}/{name}.cypher is a template; use render() with identifiers")
    return text


_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True)


def _validated(value: object, key: str) -> object:
    if isinstance(value, ExistingName):  # already checked by check_existing_name
        return value
    if isinstance(value, str):
        return check_identifier(value, what=f"template variable {key}")
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, Sequence):
        return [_validated(item, key) for item in value]
    raise TypeError(f"template variable {key} must be an identifier, a list of them, or a bool")


def render(template: str, folder: ResourceFolder = "cypher", /, **identifiers: object) -> str:
    """Render a Cypher template; every string variable must be a valid identifier."""
    checked: Mapping[str, object] = {key: _validated(value, key) for key, value in identifiers.items()}
    return _ENV.from_string(_read(folder, template)).render(**checked)

"""Locate the folders of Cypher, migrations and schemas that ship with kag-neo4j.

In a source checkout (or an editable install) they are the top-level ``cypher/``,
``procedures/``, ``migrations/`` and ``schema/`` folders; in a wheel they are packaged
under ``kag_neo4j/_resources/``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

ResourceFolder = Literal["cypher", "procedures", "migrations", "schema"]

_PACKAGE_DIR = Path(__file__).resolve().parent


def resource_dir(folder: ResourceFolder) -> Path:
    """Return the directory holding one of the shipped resource folders."""
    for candidate in (_PACKAGE_DIR.parent / folder, _PACKAGE_DIR / "_resources" / folder):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"kag-neo4j resource folder {folder!r} not found next to {_PACKAGE_DIR}; "
        "reinstall the package (pip install kag-neo4j) or run from a full checkout."
    )

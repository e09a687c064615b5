"""Reading KAG's demo CSV tables with the csv module, for the acceptance tests' independent
computations (never through the loader)."""

from __future__ import annotations

import csv
from pathlib import Path

#: the demos' multi-value separators (``、`` occurs inside ids, so it is none)
SEPARATORS = (",", "，")


def table(folder: Path, name: str) -> list[dict[str, str]]:
    """The rows of ``folder/name.csv`` (stripped keys and cells); none when the file is absent."""
    path = folder / f"{name}.csv"
    if not path.exists():
        return []
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return [{k.strip(): (v or "").strip() for k, v in row.items()} for row in csv.DictReader(handle)]


def cell_values(cell: str) -> list[str]:
    """The values of a multi-value cell, in order (``a,b`` or ``a，b``)."""
    for sep in SEPARATORS[1:]:
        cell = cell.replace(sep, SEPARATORS[0])
    return [part.strip() for part in cell.split(SEPARATORS[0]) if part.strip()]

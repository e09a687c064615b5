"""Counters that add up: a dataclass of numbers whose :meth:`Tally.add` sums field by field.

The writer's :class:`~kag_neo4j.builder.write.WriteStats` and the resolver's
:class:`~kag_neo4j.builder.resolution.ResolutionStats` are tallies: a load adds the figures of
each batch to its running total.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Self


@dataclass
class Tally:
    """Subclass it as a ``@dataclass`` whose every field is a number."""

    def add(self, other: Self) -> None:
        """Add ``other``'s figures to these."""
        mine = asdict(self)
        for name, value in asdict(other).items():
            setattr(self, name, mine[name] + value)

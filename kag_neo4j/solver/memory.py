"""The solver's working memory: what each alias is bound to, and the evidence gathered so far.

A :class:`Binding` is a list of :class:`Item`\\ s. An item is a value (``1871``, ``"Kestrel
Bay"``, ``True``) and, when it is an entity of the graph, that entity's id — so the next hop can
start from it. ``key`` remembers which anchor entity an item was found for, so ``Sort(set=s1,
orderby=o2)`` can pair every ``s1`` with its own ``o2``. Steps of one DAG layer run in threads,
so every method takes the lock.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, Field

from kag_neo4j.prompts.context import Known
from kag_neo4j.solver.chunks import RankedChunk
from kag_neo4j.solver.values import render_value

__all__ = ["Binding", "Item", "Memory"]


class Item(BaseModel):
    """One value an alias holds: ``value`` is what Math, Sort and Deduce read (a date or number
    typed by the plan is normalised: ``1874-06-01``, ``21400000000000``); ``written`` keeps the
    words it was read from (``June 1, 1874``, ``$21.4 trillion``), which prompts, the trace and the
    answer show."""

    value: Any
    written: str | None = Field(default=None, description="the text value was normalised from, if it differs")
    entity_id: str | None = None
    key: str | None = Field(default=None, description="id of the anchor entity this item was found for")

    @property
    def text(self) -> str:
        return self.written if self.written is not None else render_value(self.value)


class Binding(BaseModel):
    """What one alias is bound to, by which record, and how it was found."""

    alias: str
    items: list[Item] = Field(default_factory=list)
    source: str = "none"
    record: int | None = None
    question: str = ""

    @property
    def empty(self) -> bool:
        return not any(item.text.strip() for item in self.items)

    @property
    def entity_ids(self) -> list[str]:
        return list(dict.fromkeys(item.entity_id for item in self.items if item.entity_id))

    @property
    def names(self) -> list[str]:
        return list(dict.fromkeys(item.text for item in self.items if item.text.strip()))

    def value(self) -> Any:
        """The value Math and Deduce read: the single value, or the list of values."""
        values = [item.value for item in self.items]
        return values[0] if len(values) == 1 else values

    def text(self) -> str:
        return ", ".join(self.names)


class Memory:
    """Alias bindings and gathered chunks of one run (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._bindings: dict[str, Binding] = {}
        self._chunks: dict[str, RankedChunk] = {}

    # ---- bindings --------------------------------------------------------------------------

    def bind(self, binding: Binding) -> None:
        with self._lock:
            self._bindings[binding.alias] = binding

    def get(self, alias: str) -> Binding | None:
        with self._lock:
            return self._bindings.get(alias)

    def bound(self, alias: str) -> bool:
        binding = self.get(alias)
        return binding is not None and not binding.empty

    def bindings(self) -> dict[str, Binding]:
        with self._lock:
            return dict(self._bindings)

    def values(self) -> dict[str, Any]:
        """alias -> value for every alias bound to something (what Math/Deduce read)."""
        return {alias: binding.value() for alias, binding in self.bindings().items() if not binding.empty}

    def known(self, aliases: Iterable[str] | None = None) -> list[Known]:
        """Bound aliases as prompt lines (all of them, or those named)."""
        bindings = self.bindings()
        names = list(aliases) if aliases is not None else list(bindings)
        out = []
        for alias in names:
            binding = bindings.get(alias)
            if binding is not None and not binding.empty:
                out.append(Known(alias=alias, value=binding.text(), question=binding.question))
        return out

    # ---- evidence ----------------------------------------------------------------------------

    def add_chunks(self, chunks: Iterable[RankedChunk]) -> None:
        with self._lock:
            for chunk in chunks:
                have = self._chunks.get(chunk.chunk_id)
                if have is None or chunk.score > have.score:
                    self._chunks[chunk.chunk_id] = chunk

    def chunk(self, chunk_id: str) -> RankedChunk | None:
        with self._lock:
            return self._chunks.get(chunk_id)

    def chunks(self) -> list[RankedChunk]:
        """Every gathered chunk, best score first."""
        with self._lock:
            return sorted(self._chunks.values(), key=lambda c: (-c.score, c.chunk_id))

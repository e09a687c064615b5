"""The chunks a solver run retrieved, best first: those its answer cites, then the others in order of use.

Each :class:`~kag_neo4j.solver.results.StepRecord` notes the chunks it used (``used``, kind
``Chunk``, with its rank in that step). A run's chunks are those of its records by record index,
each record's by rank, every chunk once (where it was first used) — the question's own search
(the ``Search`` record, first) before what the steps added — with the chunks the answer cites
(the evidence it rests on) moved to the front, in that same order. This is the ranking the
solver's own recall is scored on (``kag-neo4j eval``'s ``ours-solver``) and what
:class:`kag_neo4j.graphrag.KagSolverRetriever` hands to a neo4j-graphrag pipeline.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from kag_neo4j.solver.results import Answer

__all__ = ["UsedChunk", "used_chunks"]


class UsedChunk(BaseModel):
    """A chunk the run used: where first (record index and rank there), by which records, cited or not."""

    chunk_id: str
    step: int = Field(description="index of the first record that used it")
    rank: int = Field(description="its rank in that record")
    score: float
    steps: list[int] = Field(description="indices of every record that used it, in order")
    cited: bool = Field(description="the answer cites it")


def used_chunks(answer: Answer) -> list[UsedChunk]:
    """The chunks ``answer``'s records used, the cited ones first, first use first (see the module docs)."""
    cited = {citation.chunk_id for citation in answer.citations}
    found: dict[str, UsedChunk] = {}
    for record in sorted(answer.steps, key=lambda step: step.index):
        for used in sorted((u for u in record.used if u.kind == "Chunk"), key=lambda u: u.rank):
            chunk = found.get(used.id)
            if chunk is None:
                found[used.id] = UsedChunk(chunk_id=used.id, step=record.index, rank=used.rank, score=used.score,
                                           steps=[record.index], cited=used.id in cited)
            elif chunk.steps[-1] != record.index:
                chunk.steps.append(record.index)
    return sorted(found.values(), key=lambda chunk: not chunk.cited)  # stable: first use first in each group

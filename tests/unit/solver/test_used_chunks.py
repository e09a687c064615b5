"""The run's chunk ranking: cited chunks first, then the rest by record index and rank, each chunk once."""

from __future__ import annotations

from kag_neo4j.solver.results import Answer, Citation, StepRecord, Used
from kag_neo4j.solver.used_chunks import used_chunks


def _record(index: int, op: str, chunks: list[str]) -> StepRecord:
    used = [Used(kind="Entity", id=f"e{index}", rank=1)]
    used += [Used(kind="Chunk", id=cid, rank=rank, score=1 / rank) for rank, cid in enumerate(chunks, start=1)]
    return StepRecord(index=index, op=op, used=used)


def test_cited_chunks_lead_and_the_rest_keep_the_order_of_first_use() -> None:
    # stored out of index order: the ranking follows record indices, not list order
    steps = [_record(2, "Retrieval", ["d", "b", "e"]), _record(0, "Search", ["a", "b", "c"]), _record(1, "Plan", [])]
    answer = Answer(question="q", answer="x", known=True, steps=steps,
                    citations=[Citation(document_id="e", chunk_id="e", text=""),
                               Citation(document_id="b", chunk_id="b", text="")])
    ranking = used_chunks(answer)
    assert [c.chunk_id for c in ranking] == ["b", "e", "a", "c", "d"]
    assert [c.cited for c in ranking] == [True, True, False, False, False]
    b = ranking[0]
    assert (b.step, b.rank, b.steps) == (0, 2, [0, 2]), "where it was first used, and every record that used it"


def test_an_answer_citing_nothing_ranks_by_use_alone() -> None:
    answer = Answer(question="q", answer="I don't know", known=False,
                    steps=[_record(0, "Search", ["a", "b"]), _record(1, "Retrieval", ["c", "a"])])
    assert [c.chunk_id for c in used_chunks(answer)] == ["a", "b", "c"]

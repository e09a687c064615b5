"""A custom ranked list in hybrid retrieval: "the question names this document's title".

A ranked list is a name, an RRF weight and a ``rank`` method that runs its own ``.cypher`` read
(here ``cypher/examples/title_in_question.cypher``) through the runner it is given, so the
step's trace lists it. Its chunk ids go into ``procedures/hybrid_retrieval.cypher`` as
``$extra_lists`` and are fused with dense, fulltext and PPR by the same weighted RRF rules.

    python examples/custom_ranked_list.py "Which club was founded in 1902? (Real Madrid)"

prints the chunks found without and with the list (the configured Neo4j and embedder).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

from kag_neo4j.models.base import Embedder
from kag_neo4j.solver.chunks import RankedChunk
from kag_neo4j.solver.question_search import recipe
from kag_neo4j.solver.retrieval import hybrid_retrieve
from kag_neo4j.store.runner import QueryRunner


@dataclass(frozen=True)
class TitleInQuestion:
    """Chunks of the documents whose title appears in the question."""

    name: str = "title"
    weight: float = 1.0

    def rank(self, runner: QueryRunner, question: str, vector: Sequence[float], k: int) -> list[str]:
        rows = runner.query("examples/title_in_question", question=question, k=k)
        return [str(row["chunk_id"]) for row in rows]


def compare(
    runner: QueryRunner, embedder: Embedder, question: str, *, k: int = 5, recipe_name: str = "hybrid",
    weight: float = 1.0,
) -> tuple[list[RankedChunk], list[RankedChunk]]:
    """The chunks for ``question`` without and with the title list."""
    config = recipe(recipe_name, k)
    without = hybrid_retrieve(runner, embedder, question, config=config)
    with_title = hybrid_retrieve(runner, embedder, question, config=config,
                                 extra_lists=[TitleInQuestion(weight=weight)])
    return without, with_title


def main(argv: list[str]) -> int:
    from kag_neo4j.config import load_settings
    from kag_neo4j.models import build_embedder
    from kag_neo4j.store.database import Database

    question = " ".join(argv) or "Which club was founded in 1902? (Real Madrid)"
    settings = load_settings()
    with Database.connect(settings) as db:
        without, with_title = compare(db, build_embedder(settings), question)
    print("| rank | without | with the title list | its ranks |")
    print("|---:|---|---|---|")
    for rank in range(max(len(without), len(with_title))):
        a = without[rank].chunk_id if rank < len(without) else ""
        b = with_title[rank] if rank < len(with_title) else None
        print(f"| {rank + 1} | {a} | {b.chunk_id if b else ''} | {b.ranks if b else ''} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

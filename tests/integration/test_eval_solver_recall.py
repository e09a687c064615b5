"""``ours-solver``: the solver's own recall (the chunks its run retrieved, cited first), on a real Neo4j."""

from __future__ import annotations

import pytest

from kag_neo4j.errors import EvalError
from kag_neo4j.eval.datasets import GoldPassage, Question
from kag_neo4j.eval.methods import MethodContext, build_methods
from kag_neo4j.eval.runner import evaluate_question
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.store.database import Database
from tests.integration.solver_fixtures import DOCS, chunk_id
from tests.integration.test_solver_ask import YEARS_AFTER, Router, embedder, graph, opening_year  # noqa: F401 - fixtures

UNITS = {doc: doc for doc in DOCS}
QUESTION = Question(id="q-years", answers=["28"], gold=[GoldPassage(title="hvrc"), GoldPassage(title="viaduct")],
                    question="How many years after the Harrow Valley Rail Company was founded did the Millbrook "
                             "Viaduct open?")


def test_the_solver_is_scored_on_the_chunks_its_run_retrieved_cited_first(graph: Database, embedder: HashingEmbedder) -> None:
    router = Router(plan=[YEARS_AFTER], subanswer=[opening_year])
    ctx = MethodContext(db=graph, embedder=embedder, llm_factory=lambda: router.llm)
    (method,) = build_methods(["ours-solver"], ctx, qa=True)
    assert not method.warm_up, "a method that calls the LLM is not run untimed first"
    row = evaluate_question(method, QUESTION, ["hvrc", "viaduct"], UNITS, ctx)
    assert row.error is None, row.error
    assert sorted(router.kinds) == ["plan", "subanswer"], "one solver run serves recall and the answer"
    retrieved = [r.chunk_id for r in row.retrieved]
    # the answer cites the company's chunk (step 1, the founding year, a graph fact) and the viaduct's
    # (step 2's sub-answer): they lead, then the rest of what the question's search and the steps read
    assert retrieved[:2] == [chunk_id("hvrc"), chunk_id("viaduct")]
    assert len(retrieved) == len(set(retrieved)) > 2, "each chunk once, where it was first used"
    assert [r.document_id for r in row.retrieved] == [c.split("#")[0] for c in retrieved], "documents filled in"
    assert row.recall["2"] == 1.0 and row.recall["5"] == 1.0
    assert row.answer == "28" and row.em == 1.0
    assert set(row.cited_chunk_ids) == {chunk_id("hvrc"), chunk_id("viaduct")}


def test_ours_solver_without_an_llm_says_what_to_pass(graph: Database, embedder: HashingEmbedder) -> None:
    with pytest.raises(EvalError, match="--llm"):
        build_methods(["ours-solver"], MethodContext(db=graph, embedder=embedder), qa=False)

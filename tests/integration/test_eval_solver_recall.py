"""``ours-solver``: the solver's own recall (the chunks its run retrieved, cited first), on a real Neo4j."""

from __future__ import annotations

import pytest

from kag_neo4j.cli.solver_options import parse_solver_options
from kag_neo4j.errors import EvalError
from kag_neo4j.eval.datasets import GoldPassage, Question
from kag_neo4j.eval.methods import MethodContext, build_methods
from kag_neo4j.eval.runner import evaluate_question
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.store.database import Database
from tests.integration.solver_fixtures import DOCS, chunk_id
from tests.integration.test_solver_ask import (  # noqa: F401 - fixtures
    YEARS_AFTER,
    Router,
    embedder,
    graph,
    opening_year,
    plan,
)

UNITS = {doc: doc for doc in DOCS}
QUESTION = Question(id="q-years", answers=["28"], gold=[GoldPassage(title="hvrc"), GoldPassage(title="viaduct")],
                    hop_answers=["1871", "1899"],
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
    # two Retrieval steps; the founding year is a stored property (graph), the opening year a sub-answer
    assert row.steps is not None and (row.steps.steps, row.steps.graph, row.steps.graph_gold) == (2, 1, 1)


def test_ours_solver_without_an_llm_says_what_to_pass(graph: Database, embedder: HashingEmbedder) -> None:
    with pytest.raises(EvalError, match="--llm"):
        build_methods(["ours-solver"], MethodContext(db=graph, embedder=embedder), qa=False)


DESIGNER = plan("""\
Step1: Who designed the Millbrook Viaduct?
Action1: Retrieval(s=s1:Person, p=p1:designed, o=o1:Bridge[`Millbrook Viaduct`])
Action2: Output(s1)""")
DESIGNER_QUESTION = Question(id="q-designer", question="Who designed the Millbrook Viaduct?", answers=["Ada Pembroke"],
                             hop_answers=["Ada Pembroke"], gold=[GoldPassage(title="ada")])


@pytest.mark.parametrize(("knobs", "from_graph"), [({}, False), ({"graph_confidence": 0.6}, True)])
def test_the_confidence_policy_decides_whether_an_open_fact_answers_a_step_and_eval_counts_it(
    graph: Database, embedder: HashingEmbedder, knobs: dict[str, float], from_graph: bool,
) -> None:
    # the only support for "Ada designed the viaduct" is an open fact of confidence 0.6: under the default
    # threshold (0.75) the step reads chunks and asks the LLM, at 0.6 the fact answers it
    unknown = {"answer": "", "evidence": []}
    router = Router(plan=[DESIGNER], subanswer=[unknown], answer=[unknown])
    options = [f"{key}={value}" for key, value in {"max_rounds": 0, **knobs}.items()]
    ctx = MethodContext(db=graph, embedder=embedder, llm_factory=lambda: router.llm, solver=parse_solver_options(options))
    (method,) = build_methods(["ours-solver"], ctx, qa=True)
    assert method.config["solver"]["graph_confidence"] == knobs.get("graph_confidence", 0.75)
    row = evaluate_question(method, DESIGNER_QUESTION, ["ada"], UNITS, ctx)
    assert row.error is None, row.error
    assert row.steps is not None and row.steps.steps == 1
    if from_graph:
        assert (row.steps.graph, row.steps.graph_gold) == (1, 1), "the fact bound Ada Pembroke, a gold hop answer"
        assert "subanswer" not in router.kinds and row.em == 1.0
    else:
        assert (row.steps.graph, row.steps.graph_gold) == (0, 0)
        assert "subanswer" in router.kinds

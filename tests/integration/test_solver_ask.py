"""KAG.ask end to end on a real Neo4j: graph-only multi-hop, graph+chunks numeric, PPR seeding,
iterative mode, the trace and its Browser query (the LLM is a scripted test double)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kag_neo4j.api import KAG
from kag_neo4j.models.base import ChatMessage
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.models.scripted import ScriptedLLM
from kag_neo4j.solver.retrieval import RetrievalConfig, RetrievalWeights
from kag_neo4j.solver.runtime import SolverConfig
from kag_neo4j.solver.trace import browser_query
from kag_neo4j.store.database import Database
from tests.integration.conftest import TEST_DIMENSION
from tests.integration.solver_fixtures import (
    chunk_id,
    knowledge_counts,
    write_fixture_graph,
    write_unlinked_document,
)

Reply = str | dict[str, Any] | Callable[[str], dict[str, Any]]


class Router:
    """A scripted LLM that answers by prompt kind (plan, subanswer, judge, answer, next step)."""

    def __init__(self, **replies: list[Reply]) -> None:
        self.replies = {kind: list(items) for kind, items in replies.items()}
        self.kinds: list[str] = []
        self.prompts: list[str] = []
        self.systems: list[str] = []
        self.llm = ScriptedLLM(self)

    @staticmethod
    def kind(messages: list[ChatMessage]) -> str:
        system = messages[0].content
        if "Plan ONE step at a time" in system:
            return "next"
        if "You are the planner" in system:
            return "plan"
        if "You answer one sub-question" in system:
            return "subanswer"
        if "You check whether the evidence" in system:
            return "judge"
        if "Answer the question using only" in system:
            return "answer"
        return "deduce"

    def __call__(self, messages: list[ChatMessage]) -> dict[str, Any] | str:
        kind = self.kind(messages)
        self.kinds.append(kind)
        self.prompts.append(messages[-1].content)
        self.systems.append(messages[0].content)
        queue = self.replies.get(kind)
        if not queue:
            raise AssertionError(f"unexpected {kind} call: {messages[-1].content[:300]}")
        reply = queue.pop(0) if len(queue) > 1 else queue[0]
        return reply(messages[-1].content) if callable(reply) else reply


@pytest.fixture
def embedder() -> HashingEmbedder:
    return HashingEmbedder(dimension=TEST_DIMENSION)


@pytest.fixture
def graph(db: Database, embedder: HashingEmbedder) -> Database:
    write_fixture_graph(db, embedder)
    return db


def plan(text: str) -> dict[str, str]:
    return {"logical_form": text}


FOUNDER_TOWN = plan("""\
Step1: Who founded the Harrow Valley Rail Company?
Action1: Retrieval(s=s1:Person, p=p1:founded, o=o1:Organization[`Harrow Valley Rail Company`])
Step2: In which town was that person born?
Action2: Retrieval(s=s1, p=p2:bornIn, o=o2:Town)
Action3: Output(o2)""")

YEARS_AFTER = plan("""\
Step1: When was the Harrow Valley Rail Company founded?
Action1: Retrieval(s=s1:Organization[`Harrow Valley Rail Company`], p=p1:foundedIn, o=o1:Year)
Step2: When did the Millbrook Viaduct open?
Action2: Retrieval(s=s2:Bridge[`Millbrook Viaduct`], p=p2:openedIn, o=o2:Year)
Step3: How many years after the founding did the viaduct open?
Action3: Math(content=[`o1`, `o2`], target=`o2 - o1`)->m1
Action4: Output(m1)""")


def opening_year(prompt: str) -> dict[str, Any]:
    """A faithful reader: answers only when the viaduct passage is in the prompt."""
    for line in prompt.splitlines():
        if line.startswith("[") and "opened in 1899" in line:
            return {"answer": "1899", "evidence": [int(line[1 : line.index("]")])]}
    return {"answer": "", "evidence": []}


def test_two_hops_from_graph_facts_cost_one_llm_call_and_leave_a_trace(graph: Database, embedder: HashingEmbedder) -> None:
    before = knowledge_counts(graph)
    router = Router(plan=[FOUNDER_TOWN])
    kag = KAG(graph, router.llm, embedder)
    answer = kag.ask("In which town was the founder of the Harrow Valley Rail Company born?")
    assert answer.known and answer.answer == "Kestrel Bay" and answer.plan_origin == "first try"
    assert router.kinds == ["plan"], "graph facts answered both hops: no sub-answer, judge or answer call"
    assert answer.usage["llm_calls"] == 1 and answer.usage["by_stage"]["plan"]["calls"] == 1
    retrievals = [s for s in answer.steps if s.op == "Retrieval"]
    assert [s.source for s in retrievals] == ["graph", "graph"]
    assert retrievals[1].depends_on == [retrievals[0].index]
    assert [(f.subject, f.predicate, f.object) for f in answer.kg_path] == [
        ("Ada Pembroke", "founded", "Harrow Valley Rail Company"), ("Ada Pembroke", "bornIn", "Kestrel Bay")]
    assert {c.chunk_id for c in answer.citations} == {chunk_id("hvrc"), chunk_id("ada")}
    assert all(c.document_id in {"hvrc", "ada"} and c.text for c in answer.citations)
    assert knowledge_counts(graph) == before, "answering never changes the knowledge graph"

    run = graph.read("MATCH (r:KagRun {id: $id})-[:HAS_STEP]->(s:KagStep) RETURN r.answer AS answer, "
                     "r.llm_calls AS calls, collect(s.op) AS ops", id=answer.run_id)[0]
    assert run["answer"] == "Kestrel Bay" and run["calls"] == 1 and sorted(run["ops"]) == [
        "Output", "Plan", "Retrieval", "Retrieval", "Search"]
    step = graph.read("MATCH (s:KagStep {id: $id}) RETURN s.cypher AS cypher, s.params AS params, s.lf AS lf, "
                      "s.source AS source, s.ms AS ms", id=f"{answer.run_id}:{retrievals[1].index}")[0]
    assert "UNWIND $anchor_ids" in step["cypher"] and '"anchor_ids": ["person:ada"]' in step["params"]
    assert step["lf"].startswith("Retrieval(s=s1") and step["source"] == "graph" and step["ms"] > 0
    used = graph.read("MATCH (:KagStep {id: $id})-[u:USED]->(n) RETURN labels(n) AS labels, n.id AS id, u.rank AS rank",
                      id=f"{answer.run_id}:{retrievals[1].index}")
    assert {row["id"] for row in used} >= {"town:kestrel", chunk_id("ada")}
    depends = graph.read("MATCH (a:KagStep {id: $a})-[:DEPENDS_ON]->(b:KagStep) RETURN b.id AS id",
                         a=f"{answer.run_id}:{retrievals[1].index}")
    assert [row["id"] for row in depends] == [f"{answer.run_id}:{retrievals[0].index}"]

    paths = graph.read_tx(lambda tx: list(tx.run(browser_query(), run_id=answer.run_id)))
    kinds = {label for row in paths for node in row["path"].nodes for label in node.labels}
    assert {"KagRun", "KagStep", "Chunk", "Entity", "Document"} <= kinds
    rels = {rel.type for row in paths for rel in row["path"].relationships}
    assert {"HAS_STEP", "USED", "DEPENDS_ON", "founded", "bornIn", "CITES", "PART_OF"} <= rels


def test_numeric_question_fuses_graph_facts_and_chunks(graph: Database, embedder: HashingEmbedder) -> None:
    router = Router(plan=[YEARS_AFTER], subanswer=[opening_year])
    answer = KAG(graph, router.llm, embedder).ask(
        "How many years after the Harrow Valley Rail Company was founded did the Millbrook Viaduct open?")
    assert answer.known and answer.answer == "28"
    assert sorted(router.kinds) == ["plan", "subanswer"]
    founded, opened = (s for s in answer.steps if s.op == "Retrieval")
    assert founded.source == "graph" and founded.facts[0].layer == "property" and founded.outputs["o1"] == "1871"
    assert opened.source in {"chunks", "graph+chunks"} and opened.outputs["o2"] == "1899"
    assert founded.layer == opened.layer == 0, "independent steps share a DAG layer and run concurrently"
    math = next(s for s in answer.steps if s.op == "Math")
    assert math.source == "math" and sorted(math.depends_on) == sorted([founded.index, opened.index])
    assert {c.chunk_id for c in answer.citations} == {chunk_id("hvrc"), chunk_id("viaduct")}


def test_one_step_config_answers_without_a_planning_call(graph: Database, embedder: HashingEmbedder) -> None:
    router = Router(subanswer=[opening_year])  # a planning call would fail the run: no plan is scripted
    kag = KAG(graph, router.llm, embedder, config=SolverConfig(one_step=True))
    answer = kag.ask("When did the Millbrook Viaduct open?", trace=False)
    assert answer.known and answer.answer == "1899" and answer.plan_origin == "one step"
    assert router.kinds == ["subanswer"] and "plan" not in answer.usage["by_stage"]
    (retrieval,) = (s for s in answer.steps if s.op == "Retrieval")
    assert retrieval.question == "When did the Millbrook Viaduct open?" and chunk_id("viaduct") in retrieval.chunk_ids


OPENING_DATE = plan(YEARS_AFTER["logical_form"].replace("o=o2:Year", "o=o2:Date").replace(
    "target=`o2 - o1`)->m1\nAction4: Output(m1)", "target=`year(o2) - o1`)->m1\nAction4: Output(o2)"))


def opening_month(prompt: str) -> dict[str, Any]:
    """A reader that words the date its own way when the viaduct passage is in the prompt."""
    reply = opening_year(prompt)
    return {**reply, "answer": "June 1899"} if reply["answer"] else reply


def test_a_date_is_computed_on_normalised_but_answered_as_written(graph: Database, embedder: HashingEmbedder) -> None:
    assert "o=o2:Date" in OPENING_DATE["logical_form"] and "Output(o2)" in OPENING_DATE["logical_form"]
    router = Router(plan=[OPENING_DATE], subanswer=[opening_month])
    answer = KAG(graph, router.llm, embedder).ask("When did the Millbrook Viaduct open?", trace=False)
    math = next(s for s in answer.steps if s.op == "Math")
    assert math.error is None and math.outputs["m1"] == "28", "Math reads the date the plan typed"
    opened = next(s for s in answer.steps if s.op == "Retrieval" and "o2" in s.outputs)
    assert opened.outputs["o2"] == "June 1899"
    assert answer.known and answer.answer == "June 1899", "the answer is the words read, not 1899-06"


COMPARE_YEARS = plan(YEARS_AFTER["logical_form"].replace(
    "Action3: Math(content=[`o1`, `o2`], target=`o2 - o1`)->m1\nAction4: Output(m1)",
    "Action3: Deduce(op=greater, content=[`o2`, `o1`], target=`later`)->d1\nAction4: Output(d1)"))


def test_a_yes_no_output_answers_a_yes_no_question_but_not_a_choice(graph: Database, embedder: HashingEmbedder) -> None:
    assert "Deduce(op=greater" in COMPARE_YEARS["logical_form"]
    polar = Router(plan=[COMPARE_YEARS], subanswer=[opening_year])
    answer = KAG(graph, polar.llm, embedder).ask(
        "Did the Millbrook Viaduct open after the Harrow Valley Rail Company was founded?")
    assert answer.known and answer.answer == "yes" and sorted(polar.kinds) == ["plan", "subanswer"]
    choice = Router(plan=[COMPARE_YEARS], subanswer=[opening_year],
                    judge=[{"answerable": True, "answer": "the Harrow Valley Rail Company", "evidence": [1]}])
    answer = KAG(graph, choice.llm, embedder).ask(
        "Which came first, the Harrow Valley Rail Company or the Millbrook Viaduct?")
    assert sorted(choice.kinds) == ["judge", "plan", "subanswer"], "a choice is not answered by a yes/no"
    assert answer.known and answer.answer == "the Harrow Valley Rail Company"


HARBOUR = plan("""\
Step1: Where was Ada Pembroke born?
Action1: Retrieval(s=s1:Person[`Ada Pembroke`], p=p1:bornIn, o=o1:Town)
Step2: How many trawlers shelter in its harbour?
Action2: Retrieval(s=o1, p=p2:trawlerCount, o=o2:Integer)
Action3: Output(o2)""")


def counts_trawlers(prompt: str) -> dict[str, Any]:
    """A faithful reader: answers only when the harbour passage is in the prompt."""
    for line in prompt.splitlines():
        if line.startswith("[") and "forty trawlers" in line:
            return {"answer": "forty", "evidence": [int(line[1 : line.index("]")])]}
    return {"answer": ""}


def test_chunk_steps_seed_ppr_with_the_entities_they_read(graph: Database, embedder: HashingEmbedder) -> None:
    router = Router(plan=[HARBOUR], subanswer=[counts_trawlers])
    ppr_only = RetrievalConfig(dense_seeds=0, weights=RetrievalWeights(dense=0, fulltext=0, ppr=1))
    answer = KAG(graph, router.llm, embedder, config=SolverConfig(retrieval=ppr_only, chunk_k=2)).ask(
        "How many trawlers shelter in the harbour of Ada Pembroke's birthplace?", trace=False)
    step = [s for s in answer.steps if s.op == "Retrieval"][1]
    hybrid = next(q for q in step.queries if q.name == "procedures/hybrid_retrieval")
    assert hybrid.params["seed_entity_ids"] == ["town:kestrel"], "the entity bound by step 1 seeds PPR"
    assert chunk_id("kestrel") in step.chunk_ids, "the harbour chunk never names the town; PPR reaches it"
    assert chunk_id("nile") not in step.chunk_ids and len(step.chunk_ids) == 2
    assert answer.answer == "forty"
    assert [c.chunk_id for c in answer.citations] == [chunk_id("ada"), chunk_id("kestrel")], "both hops are cited"


def repeats_what_it_is_given(prompt: str) -> dict[str, Any]:
    """A careless reader: replies with the first known result it was shown (``- o1 = Kestrel Bay (…)``)."""
    known = next(line for line in prompt.splitlines() if line.startswith("- o1 = "))
    return {"answer": known.removeprefix("- o1 = ").split(" (")[0], "evidence": [1]}


def reads_when_told(prompt: str) -> dict[str, Any]:
    """The careless reader, who reads the passages once told that its reply is not the answer."""
    return counts_trawlers(prompt) if "Not the answer:" in prompt else repeats_what_it_is_given(prompt)


def test_a_sub_answer_naming_what_its_step_asks_about_is_asked_again(graph: Database, embedder: HashingEmbedder) -> None:
    router = Router(plan=[HARBOUR], subanswer=[reads_when_told])
    answer = KAG(graph, router.llm, embedder).ask(
        "How many trawlers shelter in the harbour of Ada Pembroke's birthplace?", trace=False)
    assert answer.known and answer.answer == "forty"
    assert router.kinds == ["plan", "subanswer", "subanswer"]
    assert "Not the answer: Kestrel Bay." in router.prompts[2], "the second ask names the step's own input"
    assert answer.usage["by_stage"]["subanswer-again"]["calls"] == 1
    step = [s for s in answer.steps if s.op == "Retrieval"][1]
    assert step.outputs["o2"] == "forty" and "asked again" in step.note


def test_a_reader_that_only_names_what_its_step_asks_about_leaves_it_unanswered(
    graph: Database, embedder: HashingEmbedder
) -> None:
    question = "How many trawlers shelter in the harbour of Ada Pembroke's birthplace?"
    for reask, calls, bound in ((True, 2, None), (False, 1, "Kestrel Bay")):
        router = Router(plan=[HARBOUR], subanswer=[repeats_what_it_is_given], answer=[{"answer": ""}])
        config = SolverConfig(reask_echo=reask, max_rounds=0)
        answer = KAG(graph, router.llm, embedder, config=config).ask(question, trace=False)
        assert router.kinds.count("subanswer") == calls, f"reask_echo={reask}"
        step = [s for s in answer.steps if s.op == "Retrieval"][1]
        assert step.outputs.get("o2") == bound, f"reask_echo={reask}: a town is no count of trawlers"


def test_a_reply_naming_what_the_plan_wrote_is_kept(graph: Database, embedder: HashingEmbedder) -> None:
    who = plan("""\
Step1: Who was Ada Pembroke?
Action1: Retrieval(s=s1:Person, p=p1:relatedTo, o=o1:Person[`Ada Pembroke`])
Action2: Output(s1)""")
    router = Router(plan=[who], subanswer=[{"answer": "Ada Pembroke", "evidence": [1]}])
    answer = KAG(graph, router.llm, embedder).ask("Who was Ada Pembroke?", trace=False)
    assert router.kinds == ["plan", "subanswer"], "only a result read from an earlier step is asked about again"
    assert answer.known and answer.answer == "Ada Pembroke"


def test_a_step_reading_an_earlier_result_asks_with_its_name(graph: Database, embedder: HashingEmbedder) -> None:
    that_town = plan(HARBOUR["logical_form"].replace("in its harbour", "in that town's harbour"))
    question = "How many trawlers shelter in the harbour of Ada Pembroke's birthplace?"
    asked = {}
    for spell in (True, False):
        router = Router(plan=[that_town], subanswer=[{"answer": ""}], answer=[{"answer": ""}])
        config = SolverConfig(spell_out_references=spell, max_rounds=0)
        KAG(graph, router.llm, embedder, config=config).ask(question, trace=False)
        (asked[spell],) = (line for line in router.prompts[1].splitlines() if line.startswith("Sub-question: "))
    assert asked[True] == "Sub-question: How many trawlers shelter in Kestrel Bay's harbour?", "o1, read from the graph"
    assert asked[False] == "Sub-question: How many trawlers shelter in that town's harbour?"


BIRTHPLACE_AS_DATE = plan("""\
Step1: Where was Ada Pembroke born?
Action1: Retrieval(s=s1:Person[`Ada Pembroke`], p=p1:birthDate, o=o1:Date)
Action2: Output(o1)""")


def answers_what_it_is_told_to_expect(prompt: str) -> dict[str, Any]:
    """A reader that follows the type hint over the question: a year when told to expect a date."""
    for line in prompt.splitlines():
        if line.startswith("[") and "born in Kestrel Bay" in line:
            answer = "1839" if "Expected answer: a date" in prompt else "Kestrel Bay"
            return {"answer": answer, "evidence": [int(line[1 : line.index("]")])]}
    return {"answer": ""}


def test_a_step_whose_words_ask_for_a_place_is_answered_with_one_though_the_plan_says_date(
    graph: Database, embedder: HashingEmbedder
) -> None:
    for words, expected in ((True, "Kestrel Bay"), (False, "1839")):
        router = Router(plan=[BIRTHPLACE_AS_DATE], subanswer=[answers_what_it_is_told_to_expect])
        config = SolverConfig(words_over_type=words, max_rounds=0)
        answer = KAG(graph, router.llm, embedder, config=config).ask("Where was Ada Pembroke born?", trace=False)
        hinted = [prompt for kind, prompt in zip(router.kinds, router.prompts, strict=True)
                  if kind == "subanswer" and "Expected answer:" in prompt]
        assert answer.answer == expected, f"words_over_type={words}"
        step = next(s for s in answer.steps if s.op == "Retrieval")
        linked = {u.id for u in step.used if u.kind == "Entity"}
        if words:
            assert not hinted, "the sub-answer is not told to expect a date for a 'where' question"
            assert "town:kestrel" in linked, "the place is linked to the graph's town"
            assert "asks for a place, the plan for a Date" in step.note
        else:
            assert hinted and "Expected answer: a date" in hinted[0]
            assert "town:kestrel" not in linked


def test_a_step_naming_a_document_reads_it_though_no_entity_has_that_name(
    graph: Database, embedder: HashingEmbedder
) -> None:
    # no entity is called Greyfell Mines and its passage names nothing: only its title leads there
    write_unlinked_document(graph, embedder, "greyfell", "Greyfell Mines", "The deepest shaft reaches 412 metres.")
    depth = plan("""\
Step1: How deep is the deepest shaft of the Greyfell Mines?
Action1: Retrieval(s=s1:Mine[`Greyfell Mines`], p=p1:shaftDepth, o=o1:Integer)
Action2: Output(o1)""")
    router = Router(plan=[depth], subanswer=[{"answer": ""}], judge=[{"answerable": False, "query": ""}])
    ppr_only = RetrievalConfig(dense_seeds=0, weights=RetrievalWeights(dense=0, fulltext=0, ppr=1))
    for titles, found in ((True, [chunk_id("greyfell")]), (False, [])):
        config = SolverConfig(retrieval=ppr_only.model_copy(update={"seed_titles": titles}), chunk_k=2)
        answer = KAG(graph, router.llm, embedder, config=config).ask("How deep is the Greyfell Mines' deepest shaft?",
                                                                       trace=False)
        step = next(s for s in answer.steps if s.op == "Retrieval")
        hybrid = next(q for q in step.queries if q.name == "procedures/hybrid_retrieval")
        assert hybrid.params["seed_keys"] == ["greyfell mines"], "the step's anchor is looked up by its key"
        assert step.chunk_ids[:1] == found, f"seed_titles={titles}"


def test_iterative_mode_plans_one_step_at_a_time(graph: Database, embedder: HashingEmbedder) -> None:
    router = Router(next=[
        plan("Step1: Who founded the Harrow Valley Rail Company?\n"
             "Action1: Retrieval(s=s1:Person, p=p1:founded, o=o1:Organization[`Harrow Valley Rail Company`])"),
        plan("Step2: Where was that person born?\nAction2: Retrieval(s=s1, p=p2:bornIn, o=o2:Town)"),
        plan("Action3: Output(o2)"),
    ])
    answer = KAG(graph, router.llm, embedder).ask(
        "In which town was the founder of the Harrow Valley Rail Company born?", mode="iterative")
    assert answer.answer == "Kestrel Bay" and answer.mode == "iterative" and answer.plan_origin is None
    assert router.kinds == ["next", "next", "next"]
    assert "// s1 = Ada Pembroke" in router.prompts[1]
    assert "// o2 = Kestrel Bay" in router.prompts[2]
    assert [s.op for s in answer.steps] == ["Search", "Plan", "Retrieval", "Plan", "Retrieval", "Plan", "Output"]


def test_no_trace_writes_nothing(graph: Database, embedder: HashingEmbedder) -> None:
    router = Router(plan=[FOUNDER_TOWN])
    answer = KAG(graph, router.llm, embedder).ask("Where was the founder born?", trace=False)
    assert answer.run_id is None and answer.known
    assert graph.read("MATCH (n) WHERE n:KagRun OR n:KagStep RETURN count(n) AS n")[0]["n"] == 0


def test_the_planner_sees_the_graph_vocabulary(graph: Database, embedder: HashingEmbedder) -> None:
    router = Router(plan=[FOUNDER_TOWN])
    KAG(graph, router.llm, embedder).ask("Where was the founder born?", trace=False)
    system = router.systems[0]
    assert "Entity types: Bridge, Organization, Person, River, Town" in system
    assert "Relations: bornIn, founded" in system and "Other predicates: designed" in system
    assert "MENTIONED_IN" not in system and "PART_OF" not in system


def test_a_plan_without_names_seeds_ppr_with_entities_the_sub_question_spells_out(
    graph: Database, embedder: HashingEmbedder
) -> None:
    nameless = plan("""\
Step1: How many trawlers shelter in Kestrel Bay?
Action1: Retrieval(s=s1:Town, p=p1:trawlerCount, o=o1:Integer)
Action2: Output(o1)""")
    router = Router(plan=[nameless], subanswer=[{"answer": ""}], judge=[{"answerable": False, "query": ""}])
    ppr_only = RetrievalConfig(dense_seeds=0, weights=RetrievalWeights(dense=0, fulltext=0, ppr=1))
    answer = KAG(graph, router.llm, embedder, config=SolverConfig(retrieval=ppr_only, chunk_k=2)).ask(
        "How many trawlers shelter in Kestrel Bay?", trace=False)
    step = next(s for s in answer.steps if s.op == "Retrieval")
    hybrid = next(q for q in step.queries if q.name == "procedures/hybrid_retrieval")
    assert hybrid.params["seed_entity_ids"] == ["town:kestrel"]
    assert chunk_id("kestrel") in step.chunk_ids

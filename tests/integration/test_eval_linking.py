"""``kag-neo4j eval`` scores what a question's mentions linked to, on a real Neo4j (the solver fixture graph)."""

from __future__ import annotations

from kag_neo4j.builder.names import name_key
from kag_neo4j.eval.datasets import GoldPassage, Question
from kag_neo4j.eval.methods import MethodContext, build_methods
from kag_neo4j.eval.runner import evaluate_question, summarise
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.store.database import Database
from tests.integration.solver_fixtures import DOCS, ENTITIES, MENTIONS
from tests.integration.test_solver_ask import embedder, graph  # noqa: F401 - fixtures

UNITS = {doc: doc for doc in DOCS}
QUESTION = Question(id="q-born", answers=["Kestrel Bay"], gold=[GoldPassage(title="ada"), GoldPassage(title="kestrel")],
                    question="Where was Ada Pembroke, the founder of the Harrow Valley Rail Company, born?")


def _leads_to(entity: str) -> set[str]:
    """The fixture's own account: the documents that mention the entity, and the one its name titles."""
    mentioned = {doc for doc, entities in MENTIONS.items() if entity in entities}
    titled = {doc for doc, (title, _text) in DOCS.items() if name_key(title) == name_key(ENTITIES[entity][0])}
    return mentioned | titled


def test_the_links_of_the_question_are_scored_against_its_gold_passages(
    graph: Database, embedder: HashingEmbedder,  # noqa: F811
) -> None:
    ctx = MethodContext(db=graph, embedder=embedder)
    ours, dense = build_methods(["ours", "dense"], ctx, qa=False)
    row = evaluate_question(ours, QUESTION, ["ada", "kestrel"], UNITS, ctx)
    assert row.error is None, row.error
    seeds = set(row.details["seeds"])
    assert "person:ada" in seeds and seeds <= set(ENTITIES), seeds
    # the mentions also title documents: "Ada Pembroke" titles "ada", the company's name "hvrc"
    titled = {doc for doc, (title, _text) in DOCS.items()
              if name_key(title) in {name_key(mention) for mention in row.details["mentions"]}}
    assert {chunk.split("#")[0] for chunk in row.details["titled"]} == titled and "ada" in titled
    gold = {"ada", "kestrel"}
    expected_gold_seeds = sum(1 for seed in seeds if _leads_to(seed) & gold) + len(titled & gold)
    reached = set().union(*(_leads_to(seed) for seed in seeds), titled) & gold
    assert row.links is not None
    assert (row.links.entities, row.links.titles, row.links.gold_seeds, row.links.gold, row.links.gold_reached) == (
        len(seeds), len(titled), expected_gold_seeds, 2, len(reached))
    assert row.links.mentions >= 1 and 0 < row.links.gold_reached < 2, "Ada's page is reached, Kestrel Bay's is not"
    assert evaluate_question(dense, QUESTION, ["ada", "kestrel"], UNITS, ctx).links is None, "dense links nothing"
    summary = summarise(ours, [row])
    assert summary.seed_precision == expected_gold_seeds / (len(seeds) + len(titled))
    assert summary.gold_reached == len(reached) / 2

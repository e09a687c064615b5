"""``eval --build full`` on a real Neo4j: the evaluation corpus extracted by the LLM through the
builder, a failed passage resumed by the next run, then every retrieval method over that graph.

A scripted model stands in for the LLM (it derives rows from the passage it is shown); what is
checked is the builder's and the evaluation's work: which passages are extracted on each run,
entities merged across passages, facts carrying the chunk they came from, the corpus marker.
"""

from __future__ import annotations

import re

import pytest

from kag_neo4j.errors import EvalError
from kag_neo4j.eval.loading import ensure_corpus_loaded, inventory
from kag_neo4j.eval.methods import DEFAULT_METHODS, MethodContext, build_methods
from kag_neo4j.eval.runner import run_eval
from kag_neo4j.models.base import ChatMessage
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.models.scripted import ScriptedLLM
from kag_neo4j.solver.mentions import capitalised_mentions
from kag_neo4j.store.database import Database
from tests.integration.test_eval_runner import embedder, musique  # noqa: F401  (fixtures)


class _Extractor:
    """Answers extraction prompts with rows built from the passage: its title and the capitalised
    names it mentions as entities, ``(title, mentions, name)`` as relations. Passages whose title is
    in ``broken`` get a reply that is not JSON (every repair too), so their chunk fails."""

    def __init__(self, broken: set[str]) -> None:
        self.broken = broken
        self.titles: list[str] = []

    def __call__(self, messages: list[ChatMessage]) -> str | dict:
        user = next(message.content for message in messages if message.role == "user")
        title = re.search(r"^Title: (.+)$", user, re.MULTILINE)
        text = user.split("Text:\n", 1)[-1]
        assert title is not None, "every evaluation passage is sent with its title"
        if len(messages) == 2:  # the first attempt; repairs append the reply and the problem
            self.titles.append(title.group(1))
        if title.group(1) in self.broken:
            return "the passage is about many things"
        names = [name for name in dict.fromkeys(capitalised_mentions(text)) if name != title.group(1)]
        return {
            "entities": [[title.group(1), "Entity", ""], *[[name, "Entity", ""] for name in names]],
            "relations": [[title.group(1), "mentions", name] for name in names],
            "events": [],
        }


def test_a_full_build_resumes_a_failed_passage_and_is_evaluated(
    db: Database, embedder: HashingEmbedder, musique, test_settings, tmp_path  # noqa: F811
) -> None:
    questions, corpus = musique
    script = _Extractor(broken={"Dunmore"})
    llm = ScriptedLLM(script)

    with pytest.raises(EvalError, match=r"left 1 of 10 passages unwritten"):
        ensure_corpus_loaded(db, corpus, settings=test_settings, embedder=embedder, llm=llm, mode="full")
    first = set(script.titles)
    assert first == {p.title for p in corpus.passages}, "every passage went to the LLM once the first time"
    assert inventory(db, corpus).present == 9

    script.broken.clear()
    script.titles.clear()
    lines: list[str] = []
    status = ensure_corpus_loaded(db, corpus, settings=test_settings, embedder=embedder, llm=llm, mode="full",
                                  replace=True, log=lines.append)
    assert script.titles == ["Dunmore"], "the second run (--replace too) extracts only the passage that failed"
    written = [line for line in lines if line.startswith("loading: ")]
    assert written and written[-1].startswith("loading: 1 chunks written"), "off a terminal the load logs progress"
    assert not status.reused and status.mode == "full" and status.documents == 10
    assert inventory(db, corpus).marker["mode"] == "full"

    again = ensure_corpus_loaded(db, corpus, settings=test_settings, embedder=embedder, llm=llm, mode="full")
    assert again.reused and script.titles == ["Dunmore"], "a complete full build is reused without the LLM"

    # one Ada Pembroke, mentioned in her own passage and in the Harrow Valley Rail's, each fact from its chunk
    ada = db.read(
        "MATCH (e:Entity {name: 'Ada Pembroke'})-[:MENTIONED_IN]->(c:Chunk)-[:PART_OF]->(d:Document) "
        "RETURN count(DISTINCT e) AS entities, collect(DISTINCT d.title) AS titles"
    )[0]
    assert ada["entities"] == 1 and sorted(ada["titles"]) == ["Ada Pembroke", "Harrow Valley Rail"]
    facts = db.read(
        "MATCH (s:Entity {name: 'Harrow Valley Rail'})-[r:RELATED]->(o:Entity {name: 'Ada Pembroke'}) "
        "MATCH (c:Chunk)-[:PART_OF]->(d:Document {title: 'Harrow Valley Rail'}) "
        "RETURN r.predicate AS predicate, r.chunk_ids AS chunk_ids, c.id AS chunk"
    )
    assert len(facts) == 1 and facts[0]["chunk_ids"] == [facts[0]["chunk"]]

    ctx = MethodContext(db=db, embedder=embedder, k=10)
    run = run_eval(questions, corpus, build_methods(list(DEFAULT_METHODS), ctx, qa=False), ctx,
                   cache_root=tmp_path, setup={"build": "full"})
    assert all(row.error is None for row in run.rows), [row.error for row in run.rows if row.error]
    assert {m.method for m in run.methods} == set(DEFAULT_METHODS)
    ours_q1 = next(r for r in run.rows if r.method == "ours" and r.question_id == "2hop__q1")
    assert ours_q1.recall["5"] == 1.0, "the question's Harrow Valley Rail links to the fact that names Ada Pembroke"

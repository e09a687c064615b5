"""The evaluation harness on a real Neo4j: loading checks, every retrieval method, QA, resume."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kag_neo4j.builder.names import name_key
from kag_neo4j.errors import EvalError
from kag_neo4j.eval.datasets import Corpus, QuestionSet, load_corpus, load_questions
from kag_neo4j.eval.loading import MARKER_KEY, ensure_corpus_loaded, inventory
from kag_neo4j.eval.methods import (
    DEFAULT_METHODS,
    QA_FACTORIES,
    EvalMethod,
    MethodContext,
    QAOutput,
    RetrievalOutput,
    build_methods,
)
from kag_neo4j.eval.runner import run_eval
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.models.scripted import ScriptedLLM
from kag_neo4j.models.usage import Usage
from kag_neo4j.solver.mentions import capitalised_mentions
from kag_neo4j.store.database import Database
from tests.integration.conftest import TEST_DIMENSION, anchor_titles

EVAL_FIXTURES = Path(__file__).parent.parent / "fixtures" / "eval"

_LIGHT_GRAPH = """
UNWIND $rows AS row
MERGE (d:Document {id: row.doc}) SET d.title = row.title, d.title_key = row.title_key, d.status = 'complete'
MERGE (c:Chunk {id: row.chunk}) SET c.text = row.text, c.title = row.title, c.embedding = row.embedding
MERGE (c)-[:PART_OF]->(d)
WITH c, row
UNWIND row.entities AS e
MERGE (n:Entity {id: e.id}) SET n.name = e.name, n.name_key = e.key, n.alias_text = e.name, n.embedding = e.embedding
MERGE (n)-[m:MENTIONED_IN]->(c) SET m.count = 1
"""


def _entity_id(name: str) -> str:
    return re.sub(r"\W+", "-", name.casefold()).strip("-")


def write_light_graph(db: Database, corpus: Corpus, embedder: HashingEmbedder, **_: object) -> None:
    """What a light build leaves, written directly: documents, one chunk each, NER-ish entities."""
    rows = []
    for passage in corpus.passages:
        names = capitalised_mentions(f"{passage.title}. {passage.text}")
        rows.append({
            "doc": passage.document_id, "chunk": f"{passage.document_id}#0#0", "title": passage.title,
            "title_key": name_key(passage.title),
            "text": passage.text, "embedding": embedder.embed_documents([passage.text])[0],
            "entities": [{"id": _entity_id(n), "name": n, "key": name_key(n), "embedding": embedder.embed_query(n)}
                         for n in names],
        })
    db.write(_LIGHT_GRAPH, rows=rows)
    anchor_titles(db)
    db.write("MERGE (m:KagMeta {key: 'graph'}) SET m.version = coalesce(m.version, 0) + 1")


@pytest.fixture
def embedder() -> HashingEmbedder:
    return HashingEmbedder(dimension=TEST_DIMENSION)


@pytest.fixture
def musique() -> tuple[QuestionSet, Corpus]:
    return (load_questions(EVAL_FIXTURES / "musique_questions.json", name="mini-musique"),
            load_corpus(EVAL_FIXTURES / "musique_corpus.json"))


@pytest.fixture
def loaded(db: Database, embedder: HashingEmbedder, musique: tuple[QuestionSet, Corpus]) -> Database:
    write_light_graph(db, musique[1], embedder)
    return db


def _no_loader(*_: object, **__: object) -> None:
    raise AssertionError("the corpus was already loaded; the loader must not run")


def test_a_complete_load_is_reused(loaded: Database, embedder: HashingEmbedder, musique, test_settings) -> None:
    status = ensure_corpus_loaded(loaded, musique[1], settings=test_settings, embedder=embedder, loader=_no_loader)
    assert status.reused and status.documents == 10 and status.chunks == 10
    marker = inventory(loaded, musique[1]).marker
    assert marker is not None and marker["embedder"] == embedder.model_id and marker["documents"] == 10
    assert loaded.read("MATCH (m:KagMeta {key: $k}) RETURN count(m) AS n", k=MARKER_KEY)[0]["n"] == 1


def test_an_empty_database_is_loaded_by_the_loader(db: Database, embedder: HashingEmbedder, musique, test_settings) -> None:
    calls: list[int] = []

    def loader(database: Database, corpus: Corpus, **options: object) -> None:
        calls.append(len(corpus.passages))
        assert options["mode"] == "light" and options["embedder"] is embedder
        write_light_graph(database, corpus, embedder)

    status = ensure_corpus_loaded(db, musique[1], settings=test_settings, embedder=embedder, loader=loader)
    assert calls == [10] and not status.reused
    again = ensure_corpus_loaded(db, musique[1], settings=test_settings, embedder=embedder, loader=_no_loader)
    assert again.reused


def test_another_corpus_in_the_database_is_refused_unless_replaced(
    loaded: Database, embedder: HashingEmbedder, musique, test_settings
) -> None:
    loaded.write("CREATE (:Document {id: 'someone-else', title: 'Other', status: 'complete'})")
    with pytest.raises(EvalError, match=r"1 document\(s\) that are not passages.*--replace"):
        ensure_corpus_loaded(loaded, musique[1], settings=test_settings, embedder=embedder, loader=_no_loader)
    status = ensure_corpus_loaded(loaded, musique[1], settings=test_settings, embedder=embedder, replace=True,
                                  loader=lambda db, corpus, **_: write_light_graph(db, corpus, embedder))
    assert not status.reused
    assert loaded.read("MATCH (d:Document {id: 'someone-else'}) RETURN count(d) AS n")[0]["n"] == 0
    assert loaded.read("MATCH (m:KagMigration) RETURN count(m) AS n")[0]["n"] >= 1, "migrations survive --replace"


def test_a_load_with_another_embedder_is_refused(loaded: Database, embedder: HashingEmbedder, musique, test_settings) -> None:
    ensure_corpus_loaded(loaded, musique[1], settings=test_settings, embedder=embedder, loader=_no_loader)
    other = HashingEmbedder(dimension=TEST_DIMENSION)
    other.model_id = "another-embedder"
    with pytest.raises(EvalError, match="embeddings of hashing"):
        ensure_corpus_loaded(loaded, musique[1], settings=test_settings, embedder=other, loader=_no_loader)


def test_every_retrieval_method_runs_on_the_same_graph(loaded: Database, embedder: HashingEmbedder, musique, tmp_path) -> None:
    questions, corpus = musique
    ctx = MethodContext(db=loaded, embedder=embedder, k=10)
    methods = build_methods(list(DEFAULT_METHODS), ctx, qa=False)
    run = run_eval(questions, corpus, methods, ctx, cache_root=tmp_path, setup={"t": 1})
    assert [m.method for m in run.methods] == list(DEFAULT_METHODS)
    assert len(run.rows) == 3 * len(DEFAULT_METHODS)
    assert all(row.error is None for row in run.rows), [row.error for row in run.rows if row.error]
    for summary in run.methods:
        assert set(summary.recall) == {"2", "5"}
        assert 0.0 <= summary.recall["2"] <= summary.recall["5"] <= 1.0
        assert summary.retrieval_ms_p50 is not None and summary.retrieval_ms_p50 > 0
    by = {(row.method, row.question_id): row for row in run.rows}
    for qid in ("2hop__q1", "2hop__q2", "2hop__q3"):
        dense = [r.document_id for r in by[("dense", qid)].retrieved]
        peer = [r.document_id for r in by[("graphrag-vector", qid)].retrieved]
        assert dense[:5] == peer[:5], "our dense Cypher and neo4j-graphrag's VectorRetriever read the same index"
        assert all(r.unit for r in by[("ours", qid)].retrieved), "every retrieved document maps to a corpus passage"
    ours_q1 = by[("ours", "2hop__q1")]
    assert any("Harrow Valley Rail" in mention for mention in ours_q1.details["mentions"])
    assert "harrow-valley-rail" in ours_q1.details["seeds"], "the mention is linked to the entity"
    assert ours_q1.recall["5"] == 1.0, "both gold passages mention the linked Harrow Valley Rail / Ada Pembroke"


def test_the_hand_checked_recall_of_fulltext(loaded: Database, embedder: HashingEmbedder, musique, tmp_path) -> None:
    questions, corpus = musique
    ctx = MethodContext(db=loaded, embedder=embedder, k=10)
    [fulltext] = build_methods(["fulltext"], ctx, qa=False)
    run = run_eval(questions, corpus, [fulltext], ctx, cache_root=tmp_path, setup={})
    row = next(r for r in run.rows if r.question_id == "2hop__q3")
    titles = {p.document_id: p.title for p in corpus.passages}
    top = [titles[r.document_id] for r in row.retrieved]
    gold = {"Ada Pembroke", "Millbrook"}
    # recall@2 recomputed from the titles the graph returned (the two Millbrook paragraphs are distinct units)
    first_two = row.retrieved[:2]
    expected = len({r.unit for r in first_two} & set(row.gold_units)) / 2
    assert row.recall["2"] == expected
    assert gold <= set(top), "both gold passages share words with the question"


def test_an_interrupted_run_resumes_from_the_cache(loaded: Database, embedder: HashingEmbedder, musique, tmp_path) -> None:
    questions, corpus = musique
    ctx = MethodContext(db=loaded, embedder=embedder, k=10)
    calls: list[str] = []
    [dense] = build_methods(["dense"], ctx, qa=False)
    inner = dense.retrieve
    assert inner is not None

    def flaky(question: str) -> RetrievalOutput:
        calls.append(question)
        if "mayor" in question and len(calls) <= 3:
            raise RuntimeError("simulated crash")
        return inner(question)

    method = EvalMethod(name="dense", description="", retrieve=flaky, config=dense.config)
    first = run_eval(questions, corpus, [method], ctx, cache_root=tmp_path, setup={}, warm_up=False)
    assert first.methods[0].errors == 1 and len(calls) == 3
    second = run_eval(questions, corpus, [method], ctx, cache_root=tmp_path, setup={}, warm_up=False)
    assert second.resumed_rows == 2 and len(calls) == 4, "only the failed question runs again"
    assert second.methods[0].errors == 0
    third = run_eval(questions, corpus, [method], ctx, cache_root=tmp_path, setup={}, warm_up=False)
    assert third.resumed_rows == 3 and len(calls) == 4
    assert [r.recall for r in third.rows] == [r.recall for r in second.rows]
    changed = run_eval(questions, corpus, [method], ctx, cache_root=tmp_path, setup={"graph_version": 2}, warm_up=False)
    assert changed.resumed_rows == 0 and len(calls) == 7, "another setup never reuses old results"


def test_naive_rag_answers_with_the_llm_and_counts_its_use(
    loaded: Database, embedder: HashingEmbedder, musique, tmp_path
) -> None:
    questions, corpus = musique
    replies = {"college": "Answer: the port city of Dunmore.", "mayor": "Tomas Reyne was the mayor",
               "engineer": "Answer: Millbrook\nSources: 1"}

    def respond(messages: list) -> str:
        question = messages[-1].content.rsplit("Question:", 1)[1]
        return next(reply for word, reply in replies.items() if word in question)

    usage = Usage()
    llm = ScriptedLLM(respond, usage=usage)
    ctx = MethodContext(db=loaded, embedder=embedder, k=10, answer_k=3, llm_factory=lambda: llm, usage=usage)
    methods = build_methods(["naive"], ctx, qa=True)
    run = run_eval(questions, corpus, methods, ctx, cache_root=tmp_path, setup={})
    naive = {row.question_id: row for row in run.rows if row.method == "naive"}
    assert naive["2hop__q1"].em == 1.0 and naive["2hop__q2"].em == 1.0, "the alias counts"
    assert naive["2hop__q3"].em == 0.0 and naive["2hop__q3"].f1 == pytest.approx(2 * (2 / 4) * 1 / (2 / 4 + 1))
    assert all(row.llm_calls == 1 and row.prompt_tokens > 0 for row in naive.values())
    assert len(naive["2hop__q1"].cited_chunk_ids) == 1 and len(naive["2hop__q2"].cited_chunk_ids) == 3
    prompt = llm.calls[0].messages[-1].content
    assert "[3]" in prompt and "[4]" not in prompt, "answer_k=3 passages go to the LLM"
    summary = {m.method: m for m in run.methods}
    assert summary["naive"].em == pytest.approx(2 / 3) and summary["naive"].llm_calls == 1.0


def test_an_answerer_plugs_in_with_one_line(loaded: Database, embedder: HashingEmbedder, musique, tmp_path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    questions, corpus = musique
    ctx = MethodContext(db=loaded, embedder=embedder, llm_factory=lambda: ScriptedLLM(["unused"]))
    [ours] = build_methods(["ours"], ctx, qa=True)
    assert ours.answer is not None and ours.retrieve is not None, "ours: hybrid retrieval + the solver"
    monkeypatch.setitem(QA_FACTORIES, "ours", lambda _ctx: lambda q, _r: QAOutput(answer="Millbrook", cited_chunk_ids=["c"]))
    [ours] = build_methods(["ours"], ctx, qa=True)
    run = run_eval(questions, corpus, [ours], ctx, cache_root=tmp_path, setup={})
    summary = run.methods[0]
    assert summary.em == pytest.approx(1 / 3) and summary.recall["5"] is not None
    assert summary.llm_calls == 0.0 and all(row.cited_chunk_ids == ["c"] for row in run.rows)
    assert summary.qa_unavailable is None


def test_graphrag_hybrid_survives_a_question_lucene_cannot_read(loaded: Database, embedder: HashingEmbedder) -> None:
    # an unclosed '/' opens a Lucene regex: the server's lexical error, not graphrag's ParseException
    ctx = MethodContext(db=loaded, embedder=embedder, k=10)
    [method] = build_methods(["graphrag-hybrid"], ctx, qa=False)
    assert method.retrieve is not None
    output = method.retrieve("Which singer/guitarist founded the Harrow Valley Rail?")
    assert output.details.get("lucene_escaped") is True and output.chunks

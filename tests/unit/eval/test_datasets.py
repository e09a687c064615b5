"""Question-file format detection, gold passages as recall units, corpus ids, dataset shorthands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kag_neo4j.builder.readers import read_file
from kag_neo4j.errors import EvalError
from kag_neo4j.eval.datasets import (
    detect_format,
    load_corpus,
    load_questions,
    missing_gold,
    paragraph_unit,
    resolve_dataset,
    title_unit,
)

EVAL = Path(__file__).parents[2] / "fixtures" / "eval"


def test_the_three_formats_are_detected_from_their_fields() -> None:
    assert load_questions(EVAL / "musique_questions.json").format == "musique"
    assert load_questions(EVAL / "hotpot_questions.json").format == "hotpotqa"
    assert load_questions(EVAL / "twowiki_questions.json").format == "2wiki"
    # HotpotQA's own 'comparison' type must not make it 2Wiki
    assert detect_format([{"question": "q", "supporting_facts": [], "type": "comparison"}]) == "hotpotqa"
    assert detect_format([{"question": "q", "supporting_facts": [], "evidences": []}]) == "2wiki"
    with pytest.raises(EvalError, match="cannot tell the format"):
        detect_format([{"question": "q", "answer": "a"}])
    with pytest.raises(EvalError, match="is it a corpus"):
        detect_format([{"title": "t", "text": "x"}])


def test_musique_gold_is_the_supporting_paragraphs_with_the_aliases() -> None:
    questions = load_questions(EVAL / "musique_questions.json", limit=2)
    assert questions.recall_unit == "paragraph" and len(questions.questions) == 2
    q1 = questions.questions[0]
    assert q1.id == "2hop__q1" and q1.answers == ["Millbrook", "Millbrook, Wend valley"]
    assert [g.title for g in q1.gold] == ["Harrow Valley Rail", "Ada Pembroke"]
    units = questions.gold_units(q1)
    assert units == [paragraph_unit("Harrow Valley Rail", q1.gold[0].text or ""),
                     paragraph_unit("Ada Pembroke", q1.gold[1].text or "")]


def test_paragraph_units_tell_apart_two_paragraphs_of_one_title() -> None:
    a = paragraph_unit("Millbrook", "Millbrook is a market town on the river Wend.")
    b = paragraph_unit("Millbrook", "Millbrook railway station opened in 1871.")
    assert a != b and a.startswith("millbrook#")
    assert paragraph_unit(" Millbrook ", "Millbrook  is a market\ntown on the river Wend.") == a, "whitespace is not a difference"
    assert title_unit("Lilu (mythology)") == title_unit("lilu  (Mythology)")


def test_hotpot_gold_is_the_distinct_supporting_titles(tmp_path: Path) -> None:
    record = {"_id": "x", "question": "q?", "answer": "yes", "type": "bridge",
              "supporting_facts": [["Alû", 3], ["Lilu (mythology)", 0], ["Alû", 1]]}
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")  # JSON lines work too
    questions = load_questions(path)
    assert questions.recall_unit == "title"
    assert questions.gold_units(questions.questions[0]) == ["alû", "lilu (mythology)"]


def test_corpus_ids_are_the_builder_readers_ids_and_every_gold_passage_is_found() -> None:
    corpus = load_corpus(EVAL / "musique_corpus.json")
    assert corpus.document_ids == [d.id for d in read_file(EVAL / "musique_corpus.json")]
    assert len(set(corpus.document_ids)) == 10
    assert missing_gold(load_questions(EVAL / "musique_questions.json"), corpus) == []
    hotpot = load_corpus(EVAL / "hotpot_corpus.json")
    assert missing_gold(load_questions(EVAL / "hotpot_questions.json"), hotpot) == []
    assert missing_gold(load_questions(EVAL / "twowiki_questions.json"), hotpot) == []


def test_a_gold_passage_outside_the_corpus_is_reported(tmp_path: Path) -> None:
    corpus_file = tmp_path / "corpus.json"
    corpus_file.write_text(json.dumps([{"title": "Ada Pembroke", "text": "Another text."}]), encoding="utf-8")
    lost = missing_gold(load_questions(EVAL / "musique_questions.json"), load_corpus(corpus_file))
    assert ("2hop__q1", "Harrow Valley Rail") in lost and ("2hop__q1", "Ada Pembroke") in lost


def test_bad_question_files_get_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(EvalError, match="does not exist"):
        load_questions(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(EvalError, match="neither JSON nor JSON lines"):
        load_questions(bad)
    empty = tmp_path / "empty.json"
    empty.write_text("[]", encoding="utf-8")
    with pytest.raises(EvalError, match="non-empty list"):
        load_questions(empty)
    noanswer = tmp_path / "noanswer.json"
    noanswer.write_text(json.dumps([{"question": "q", "supporting_facts": [["t", 0]]}]), encoding="utf-8")
    with pytest.raises(EvalError, match="has no answer"):
        load_questions(noanswer)
    with pytest.raises(EvalError, match="--limit"):
        load_questions(EVAL / "musique_questions.json", limit=0)


def test_dataset_shorthands_resolve_in_the_benchmarks_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "bench" / "musique"
    folder.mkdir(parents=True)
    (folder / "questions.dev.json").write_text((EVAL / "musique_questions.json").read_text(), encoding="utf-8")
    (folder / "corpus.json").write_text((EVAL / "musique_corpus.json").read_text(), encoding="utf-8")
    files = resolve_dataset("MuSiQue", data_dir=tmp_path / "bench")
    assert files.questions == folder / "questions.dev.json" and files.corpus == folder / "corpus.json"
    monkeypatch.setenv("KAG_BENCHMARKS_DIR", str(tmp_path / "bench"))
    assert resolve_dataset("musique").name == "musique"
    with pytest.raises(EvalError, match="has no hotpotqa/ folder"):
        resolve_dataset("hotpot")
    with pytest.raises(EvalError, match="unknown dataset 'squad'"):
        resolve_dataset("squad")


def test_a_question_file_needs_its_corpus_and_not_the_other_way_round() -> None:
    with pytest.raises(EvalError, match="--corpus"):
        resolve_dataset(str(EVAL / "musique_questions.json"))
    with pytest.raises(EvalError, match="is a question file, not a corpus"):
        resolve_dataset(str(EVAL / "hotpot_questions.json"), corpus=EVAL / "musique_questions.json")
    files = resolve_dataset(str(EVAL / "musique_questions.json"), corpus=EVAL / "musique_corpus.json")
    assert files.name == "musique_questions"


def test_hop_answers_come_from_musique_decompositions_and_2wiki_evidences(tmp_path: Path) -> None:
    assert load_questions(EVAL / "twowiki_questions.json").questions[0].hop_answers == ["Harrow Valley Rail"]
    musique = {"id": "2hop__1", "question": "Who founded the railway of Millbrook?", "answer": "Ada",
               "paragraphs": [], "question_decomposition": [
                   {"question": "railway of Millbrook", "answer": " Harrow Valley Rail "},
                   {"question": "who founded #1", "answer": "Ada"}, {"question": "broken"}, "not a hop"]}
    hotpot = {"_id": "h", "question": "q?", "answer": "a", "supporting_facts": [["A", 0]], "context": []}
    (tmp_path / "m.json").write_text(json.dumps([musique]), encoding="utf-8")
    (tmp_path / "h.json").write_text(json.dumps([hotpot]), encoding="utf-8")
    assert load_questions(tmp_path / "m.json").questions[0].hop_answers == ["Harrow Valley Rail", "Ada"]
    assert load_questions(tmp_path / "h.json").questions[0].hop_answers == [], "HotpotQA states no hop answers"

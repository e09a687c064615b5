"""benchmarks/step_recall.py: the gold hops it retrieves, read from our own small records."""

from __future__ import annotations

import json
from pathlib import Path

from kag_neo4j.eval.datasets import unit_of
from tests.unit.benchmark_scripts import load_script

step_recall = load_script("step_recall")

MUSIQUE = [{
    "id": "2hop__1_2",
    "paragraphs": [
        {"idx": 0, "title": "Orrin Press", "paragraph_text": "Orrin Press was founded by Ida Venn."},
        {"idx": 1, "title": "Ida Venn", "paragraph_text": "Ida Venn was born in Tallow Cove."},
    ],
    "question_decomposition": [
        {"question": "Who founded Orrin Press?", "answer": "Ida Venn", "paragraph_support_idx": 0},
        {"question": "Where was #1 born?", "answer": "Tallow Cove", "paragraph_support_idx": 1},
    ],
}]
WIKI = [
    {"_id": "chain",
     "evidences": [["Orrin Press", "founded by", "Ida Venn"], ["Ida Venn", "place of birth", "Tallow"]]},
    {"_id": "compare", "evidences": [["Film A", "publication date", "1990"], ["Film B", "publication date", "1991"]]},
]


def test_a_later_musique_hop_is_asked_with_the_earlier_answer_and_seeks_its_own_paragraph(tmp_path: Path) -> None:
    path = tmp_path / "musique.json"
    path.write_text(json.dumps(MUSIQUE), encoding="utf-8")
    first, second = step_recall.musique_hops(path, 10)
    assert (first["hop"], second["hop"]) == (0, 1)
    assert second["text"] == "Where was Ida Venn born?"
    assert second["names"][0] == "Ida Venn", "the answer it builds on is a name of the step"
    assert first["gold"] == unit_of("paragraph", "Orrin Press", MUSIQUE[0]["paragraphs"][0]["paragraph_text"])
    assert second["gold"] == unit_of("paragraph", "Ida Venn", MUSIQUE[0]["paragraphs"][1]["paragraph_text"])


def test_a_2wiki_triple_is_a_later_hop_only_when_it_starts_from_an_earlier_answer(tmp_path: Path) -> None:
    path = tmp_path / "2wiki.json"
    path.write_text(json.dumps(WIKI), encoding="utf-8")
    rows = step_recall.wiki_hops(path, 10)
    hops = [(row["question"], row["hop"]) for row in rows]
    assert hops == [("chain", 0), ("chain", 1), ("compare", 0), ("compare", 0)]
    assert rows[1]["text"] == "What is the place of birth of Ida Venn?"
    assert [row["gold"] for row in rows[:2]] == [unit_of("title", "Orrin Press", ""), unit_of("title", "Ida Venn", "")]
    assert step_recall.wiki_hops(path, 1) == rows[:2], "the limit counts questions"

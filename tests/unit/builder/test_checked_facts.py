"""The hand-checked extraction sample (``tests/fixtures/extraction/checked_facts.json``) is sound.

The fixture holds facts extracted from ``passages.json`` by the full extractor - the keyed format
without the loop guard (``before``), rows from whole chunks (``rows-whole``) and the facts that
extracting the halves of a factless reply added (``rows-halves``) - each with a verdict against its
passage text; ``benchmarks/full_extract_speed.py``
prints the verdict counts. These tests keep it honest: enough facts, known passages and verdicts,
a reason for every fact that is not correct, correct facts that name what their passage names,
and no fact the schema check now drops (a fixture of facts the product no longer keeps would
measure nothing).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kag_neo4j.builder.extract import schema_view
from kag_neo4j.builder.extract.schema_check import schema_check
from kag_neo4j.builder.records import (
    ChunkExtraction,
    ExtractedEntity,
    ExtractedRelation,
)
from kag_neo4j.schema import load_schema

VERDICTS = {"correct", "uninformative", "reversed", "wrong argument", "unsupported"}


@pytest.fixture(scope="module")
def sample(fixtures_dir: Path) -> tuple[dict[str, dict], list[dict]]:
    folder = fixtures_dir / "extraction"
    passages = {p["id"]: p for p in json.loads((folder / "passages.json").read_text(encoding="utf-8"))}
    facts = json.loads((folder / "checked_facts.json").read_text(encoding="utf-8"))
    return passages, facts


def _words(text: str) -> set[str]:
    return {word for word in re.findall(r"\w+", text.lower()) if len(word) > 2}


def test_enough_facts_of_both_formats_with_known_passages_and_verdicts(sample) -> None:
    passages, facts = sample
    assert len(facts) >= 40
    assert {fact["variant"] for fact in facts} == {"before", "rows-whole", "rows-halves"}
    for fact in facts:
        assert fact["passage"] in passages, fact
        assert fact["verdict"] in VERDICTS, fact
        assert all(fact[key].strip() for key in ("subject", "predicate", "object")), fact
        if fact["verdict"] != "correct":
            assert fact["note"].strip(), f"a {fact['verdict']} fact needs a note saying why: {fact}"


def test_correct_facts_name_what_their_passage_names(sample) -> None:
    passages, facts = sample
    for fact in facts:
        if fact["verdict"] == "correct":
            text = passages[fact["passage"]]["text"].lower()
            for argument in (fact["subject"], fact["object"]):
                assert any(word in text for word in _words(argument)), fact


def test_the_schema_check_keeps_every_checked_fact(sample, fixtures_dir: Path) -> None:
    _, facts = sample
    schema = schema_view(load_schema(fixtures_dir / "schemas" / "MuSiQue.schema"))
    for fact in facts:
        extraction = ChunkExtraction(
            chunk_id=fact["passage"],
            entities=[ExtractedEntity(name=fact["subject"], type="Entity")],
            relations=[ExtractedRelation(subject=fact["subject"], predicate=fact["predicate"], object=fact["object"])],
        )
        assert len(schema_check(extraction, schema).relations) == 1, fact

"""Light extraction with the real offline models: spaCy (English) and jiagu (Chinese)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kag_neo4j.builder.extract import LightExtractor, cjk_ratio, detect_language, schema_view
from kag_neo4j.builder.records import ChunkRecord
from kag_neo4j.schema import load_schema

ENGLISH = "Cristiano Ronaldo played for Real Madrid from 2009 to 2018. Madrid is the capital of Spain."
CHINESE = "皇家马德里足球俱乐部于1902年在马德里成立。姚明1980年9月12日出生于上海市徐汇区。"


def chunk(text: str, chunk_id: str = "d#0#0") -> ChunkRecord:
    return ChunkRecord(id=chunk_id, document_id="d", text=text, position=0, paragraph=0, index=0)


def triples(extraction) -> set[tuple[str, str, str]]:
    return {(r.subject, r.predicate, r.object) for r in extraction.relations}


def test_language_detection_by_cjk_share() -> None:
    assert detect_language(ENGLISH) == "en"
    assert detect_language(CHINESE) == "zh"
    assert detect_language("The club 皇家马德里 was founded in Madrid in the year 1902 by fans.") == "en"
    assert cjk_ratio("") == 0.0


def test_english_entities_and_cooccurrence_relations() -> None:
    (result,) = LightExtractor().extract_many([chunk(ENGLISH)]).extractions
    types = {e.name: e.type for e in result.entities}
    assert types["Cristiano Ronaldo"] == "Person"
    assert types["Real Madrid"] == "Organization"
    assert types["Spain"] == "Location"
    assert types["2009"] == "Date"
    found = triples(result)
    assert ("Cristiano Ronaldo", "play for", "Real Madrid") in found
    assert ("Madrid", "be", "Spain") in found
    assert ("Cristiano Ronaldo", "play from", "2009") in found  # subject -> date of its sentence
    play = next(r for r in result.relations if r.object == "Real Madrid")
    assert play.properties["date"] == "2009" or play.properties.get("start") == "2009"
    assert all(0 < r.confidence < 1 for r in result.relations)
    assert result.mode == "light"
    # pairs never cross sentences
    assert not any({r.subject, r.object} == {"Cristiano Ronaldo", "Spain"} for r in result.relations)


def test_english_chunks_are_batched_and_keep_their_order() -> None:
    chunks = [
        chunk("Barack Obama was born in Hawaii.", "a#0#0"),
        chunk("Paris is in France.", "p#0#0"),
        chunk("Apple hired Tim Cook.", "b#0#0"),
    ]
    results = LightExtractor(batch_size=2).extract_many(chunks).extractions
    assert [r.chunk_id for r in results] == ["a#0#0", "p#0#0", "b#0#0"]
    assert "Barack Obama" in {e.name for e in results[0].entities}
    assert "Tim Cook" in {e.name for e in results[2].entities}


def test_names_are_the_things_extract_finds_without_the_literals() -> None:
    questions = [
        ENGLISH,
        "Who was born first, the director of Chinatown or the wife of Barack Obama?",
        "When did the mother of Queen Victoria die, and where did she live in 1819?",
        "Which company hired Tim Cook in March 1998 for 2 million dollars?",
    ]
    extractor = LightExtractor()
    for question in questions:
        (result,) = extractor.extract_many([chunk(question)]).extractions
        things = [e.name for e in result.entities if e.type not in {"Date", "Number"}]
        assert extractor.names(question) == things
    assert extractor.names(ENGLISH) == ["Cristiano Ronaldo", "Real Madrid", "Madrid", "Spain"]


@pytest.mark.slow  # loads jiagu's segmentation, POS, NER and relation models (about 6 s)
def test_chinese_entities_dates_and_relations() -> None:
    english, result = LightExtractor().extract_many([chunk(ENGLISH, "e#0#0"), chunk(CHINESE)]).extractions
    assert (english.chunk_id, result.chunk_id) == ("e#0#0", "d#0#0")  # mixed languages keep order
    types = {e.name: e.type for e in result.entities}
    assert types["皇家马德里足球俱乐部"] == "Organization"
    assert types["马德里"] == "Location"
    assert types["姚明"] == "Person"
    assert types["1902年"] == "Date" and types["1980年9月12日"] == "Date"
    date = next(e for e in result.entities if e.name == "1980年9月12日")
    assert date.properties["value"] == "1980-09-12"
    found = triples(result)
    assert ("皇家马德里足球俱乐部", "成立", "1902年") in found  # the verb after the date
    assert ("姚明", "出生于", "上海市") in found
    assert ("姚明", "出生日期", "1980年9月12日") in found  # from jiagu's relation model
    assert all(r.confidence < 1 for r in result.relations)


def test_schema_maps_light_types_onto_schema_types(fixtures_dir: Path) -> None:
    schema = schema_view(load_schema(fixtures_dir / "schemas" / "MuSiQue.schema"))
    (result,) = LightExtractor(schema=schema).extract_many([chunk(ENGLISH)]).extractions
    types = {e.name: e.type for e in result.entities}
    assert types["Spain"] == "GeographicLocation"
    assert types["Cristiano Ronaldo"] == "Person"
    assert types["2009"] == "Date"
    assert any("kept as open facts" in issue for issue in result.issues)

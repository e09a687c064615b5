"""Schema fill: the relations of the entity a chunk is about, asked as a form (scripted LLM)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from kag_neo4j.builder.extract import FullExtractor, schema_view
from kag_neo4j.builder.extract.schema_view import SchemaView
from kag_neo4j.builder.records import ChunkRecord
from kag_neo4j.errors import TransientModelError
from kag_neo4j.models.scripted import ScriptedLLM
from kag_neo4j.schema import load_schema

TEXT = "甲状腺结节是甲状腺内的肿块。治疗可用左甲状腺素钠片，也可用丙基硫氧嘧啶。常见症状为颈部肿块和吞咽困难。"
#: the main call's rows: the disease typed by its display name, a treatment fact in the model's own
#: words with an untyped object, and a symptom typed otherwise than the form will say
ROWS = {
    "entities": [["甲状腺结节", "疾病", "甲状腺内的肿块"], ["左甲状腺素钠片", "Entity", "一种药"],
                 ["吞咽困难", "医学指征", "症状"]],
    "relations": [["甲状腺结节", "治疗", "左甲状腺素钠片"]],
}


def chunk(title: str = "甲状腺结节", text: str = TEXT) -> ChunkRecord:
    return ChunkRecord(id="d#0#0", document_id="d", text=text, title=title, position=0, paragraph=0, index=0)


@pytest.fixture
def medicine(fixtures_dir: Path) -> SchemaView:
    return schema_view(load_schema(fixtures_dir / "schemas" / "Medicine.schema"))


def test_the_form_asks_the_entity_ranged_relations_of_the_title_entity_s_type(medicine: SchemaView) -> None:
    llm = ScriptedLLM([ROWS, {}])
    FullExtractor(llm, schema=medicine).extract(chunk())
    assert len(llm.calls) == 2
    fill = llm.calls[1]
    schema = fill.schema_
    assert schema is not None
    keys = set(schema["properties"])
    assert set(schema["required"]) == keys, "every relation is written, so the model decides only the values"
    # Disease's relations to entity types, by display name (the chunk is Chinese); the concept-ranged
    # hospitalDepartment (就诊科室) and diseaseSite (发病部位) are left to the concept graph
    assert keys == {"并发症", "常见症状", "适用药品", "异常指征"}
    assert "甲状腺结节" in fill.messages[-1].content and "药品" in fill.messages[-1].content


def test_filled_names_become_schema_relations_typed_by_their_range(medicine: SchemaView) -> None:
    reply = {"适用药品": ["左甲状腺素钠片", "丙基硫氧嘧啶", "卡比马唑"], "常见症状": ["颈部 肿块", "吞咽困难"],
             "并发症": ["甲状腺结节"], "异常指征": []}
    extraction = FullExtractor(ScriptedLLM([ROWS, reply]), schema=medicine).extract(chunk())
    typed = {(r.predicate, r.object, r.object_type) for r in extraction.relations if r.subject == "甲状腺结节"}
    assert ("applicableMedicine", "左甲状腺素钠片", "Medicine") in typed
    assert ("applicableMedicine", "丙基硫氧嘧啶", "Medicine") in typed
    assert ("commonSymptom", "颈部 肿块", "Symptom") in typed, "spaces aside, the name is written in the chunk"
    assert ("治疗", "左甲状腺素钠片", "Medicine") in {(r.predicate, r.object, r.object_type) for r in extraction.relations}
    objects = {r.object for r in extraction.relations}
    assert "卡比马唑" not in objects, "a name the chunk does not write is dropped"
    assert not any(r.object == r.subject for r in extraction.relations), "the entity is not its own complication"
    types = {e.name: e.type for e in extraction.entities}
    assert types["左甲状腺素钠片"] == "Medicine", "the untyped entity takes the relation's range"
    assert types["丙基硫氧嘧啶"] == "Medicine"
    assert types["吞咽困难"] == "Indicator", "an entity the main call typed keeps its type"
    assert any("dropped" in issue and "卡比马唑" in issue for issue in extraction.issues)


def test_an_open_predicate_sharing_objects_with_one_filled_relation_is_read_as_it(medicine: SchemaView) -> None:
    rows = {
        "entities": [["甲状腺结节", "疾病", "肿块"]],
        "relations": [["甲状腺结节", "治疗", "左甲状腺素钠片"], ["甲状腺结节", "治疗", "甲巯咪唑"],
                      ["甲状腺结节", "有", "丙基硫氧嘧啶"], ["甲状腺结节", "有", "颈部肿块"],
                      ["甲状腺结节", "诊断", "吞咽困难"]],
    }
    reply = {"适用药品": ["左甲状腺素钠片", "丙基硫氧嘧啶"], "常见症状": ["颈部肿块"]}
    extraction = FullExtractor(ScriptedLLM([rows, reply]), schema=medicine).extract(chunk())
    medicines = {r.object for r in extraction.relations if r.predicate == "applicableMedicine"}
    # 治疗 shares 左甲状腺素钠片 with the form's 适用药品 only: its other object 甲巯咪唑 is a medicine too;
    # 有 shares names with two relations and 诊断 with none: neither is read as a schema relation
    assert medicines == {"左甲状腺素钠片", "丙基硫氧嘧啶", "甲巯咪唑"}
    assert {e.name: e.type for e in extraction.entities}["甲巯咪唑"] == "Medicine"
    assert {r.object for r in extraction.relations if r.predicate == "commonSymptom"} == {"颈部肿块"}
    assert any("'治疗'" in issue and "applicableMedicine" in issue for issue in extraction.issues)
    assert not any("'有'" in issue or "'诊断'" in issue for issue in extraction.issues)


def test_a_chunk_whose_title_names_no_typed_entity_costs_no_second_call(medicine: SchemaView) -> None:
    llm = ScriptedLLM([ROWS])
    extraction = FullExtractor(llm, schema=medicine).extract(chunk(title="内分泌科的常见病"))
    assert len(llm.calls) == 1 and extraction.entities
    llm = ScriptedLLM([ROWS])
    FullExtractor(llm, schema=medicine, schema_fill=False).extract(chunk())
    assert len(llm.calls) == 1


def test_a_failed_fill_leaves_the_chunk_s_facts_and_says_so(medicine: SchemaView) -> None:
    llm = ScriptedLLM([ROWS, *[TransientModelError("endpoint gone")] * 5])
    extraction = FullExtractor(llm, schema=medicine).extract(chunk())
    assert [(r.predicate, r.object) for r in extraction.relations] == [("治疗", "左甲状腺素钠片")]
    assert any("schema fill" in issue and "failed" in issue for issue in extraction.issues)


def test_an_english_chunk_is_asked_by_relation_names(medicine: SchemaView) -> None:
    rows = {"entities": [["Goitre", "Disease", "an enlarged thyroid"]], "relations": []}
    llm = ScriptedLLM([rows, {"applicableMedicine": ["levothyroxine"], "commonSymptom": "neck swelling"}])
    text = "Goitre is an enlarged thyroid. It is treated with levothyroxine; neck swelling is common."
    extraction = FullExtractor(llm, schema=medicine).extract(chunk(title="Goitre", text=text))
    schema = llm.calls[1].schema_
    assert schema is not None and "applicableMedicine" in schema["properties"]
    assert {(r.predicate, r.object) for r in extraction.relations} == {
        ("applicableMedicine", "levothyroxine"), ("commonSymptom", "neck swelling")}


def test_the_async_path_fills_too(medicine: SchemaView) -> None:
    reply = json.dumps({"适用药品": ["丙基硫氧嘧啶"]}, ensure_ascii=False)
    extraction = asyncio.run(FullExtractor(ScriptedLLM([ROWS, reply]), schema=medicine).aextract(chunk()))
    assert ("applicableMedicine", "丙基硫氧嘧啶") in {(r.predicate, r.object) for r in extraction.relations}

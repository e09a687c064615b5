"""Schema fill through a full load into Neo4j, and the question KAG's medicine demo asks of it.

The passages (tests/fixtures/builder/schema_fill/diseases.csv, our own text in the layout of the
demo's ``Disease.csv``) are loaded in full mode with ``Medicine.schema``. The scripted model answers
the main extraction with each disease typed by its display name and one treatment fact in its own
words, and fills every form with the same list of drug names: which of them the graph ties to which
disease, with which types and which source chunk, is the pipeline's doing, and is computed here
from the passages' text.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from kag_neo4j.api import KAG
from kag_neo4j.builder.pipeline import LoadOptions, load, with_schema_types
from kag_neo4j.builder.readers.common import ReadOptions
from kag_neo4j.builder.readers.mapping import MappingFile, TableMapping
from kag_neo4j.config import Settings
from kag_neo4j.models.base import ChatMessage
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.models.scripted import ScriptedLLM
from kag_neo4j.schema.validate import load_schema
from kag_neo4j.store.database import Database
from tests.integration.conftest import TEST_DIMENSION

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FOLDER = FIXTURES / "builder" / "schema_fill"
#: every form is filled with all of these; each disease's text writes only some (one, none)
DRUGS = ("左甲状腺素钠片", "丙基硫氧嘧啶", "甲巯咪唑", "硫酸亚铁片", "卡比马唑")


def _diseases() -> list[dict[str, str]]:
    with (FOLDER / "diseases.csv").open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _model(messages: list[ChatMessage]) -> dict[str, object]:
    text = messages[-1].content
    (title,) = [row["title"] for row in _diseases() if row["title"] in text.split("正文")[0]]
    if "填写关系" in messages[0].content:
        return {"适用药品": list(DRUGS), "常见症状": [], "并发症": [], "异常指征": []}
    return {"entities": [[title, "疾病", "一种疾病"]], "relations": [[title, "治疗", DRUGS[0]]]}


@pytest.fixture
def medicine(db: Database, test_settings: Settings) -> tuple[Database, ScriptedLLM]:
    schema = load_schema(str(FIXTURES / "schemas" / "Medicine.schema"))
    llm = ScriptedLLM(_model)
    mapping = MappingFile(files={"diseases.csv": TableMapping(mode="passages")})
    summary = load([FOLDER / "diseases.csv"], db, test_settings, LoadOptions(mode="full", spg_schema=schema, similarity=None),
                   embedder=HashingEmbedder(TEST_DIMENSION), llm=llm,
                   read_options=with_schema_types(ReadOptions(mapping=mapping), schema))
    assert summary.extraction_failures == 0 and not summary.read_failures
    return db, llm


def test_filled_relations_are_typed_facts_of_the_chunk_that_writes_them(medicine: tuple[Database, ScriptedLLM]) -> None:
    db, llm = medicine
    rows = db.read("""
        MATCH (d:Disease)-[r:applicableMedicine]->(m:Medicine)
        MATCH (c:Chunk) WHERE c.id IN r.chunk_ids
        RETURN d.name AS disease, m.name AS drug, collect(c.text) AS texts""")
    want = {(row["title"], drug) for row in _diseases() for drug in DRUGS if drug in row["text"]}
    assert {(r["disease"], r["drug"]) for r in rows} == want
    assert all(r["disease"] in text and r["drug"] in text for r in rows for text in r["texts"])
    unwritten = [drug for drug in DRUGS if not any(drug in row["text"] for row in _diseases())]
    assert unwritten and not db.read("MATCH (n) WHERE n.name IN $names RETURN n", names=unwritten)
    fills = [call for call in llm.calls if "填写关系" in call.messages[0].content]
    assert len(fills) == len(_diseases()), "one form per chunk about a typed entity"


def test_the_medicines_of_a_disease_come_from_the_filled_facts_with_their_passage(
    medicine: tuple[Database, ScriptedLLM],
) -> None:
    db, _ = medicine
    (row,) = [r for r in _diseases() if r["title"] == "甲状腺结节"]
    plan = ("Step1: 甲状腺结节可以吃什么药？\n"
            "Action1: Retrieval(s=s1:Disease[`甲状腺结节`], p=p1:applicableMedicine, o=o1:Medicine)\nAction2: Output(o1)")
    answer = KAG(db, ScriptedLLM([{"logical_form": plan}]), HashingEmbedder(TEST_DIMENSION)).ask("甲状腺结节可以吃什么药？")
    (step,) = [s for s in answer.steps if s.op == "Retrieval"]
    assert step.source == "graph" and step.llm_calls == 0
    assert set(answer.answer.split("、")) == {drug for drug in DRUGS if drug in row["text"]}
    assert answer.citations and all(c.title == "甲状腺结节" for c in answer.citations)

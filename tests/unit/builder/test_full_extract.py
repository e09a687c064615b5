"""Full extraction with the scripted LLM: prompts, parsing, retries, failures, schema handling."""

from __future__ import annotations

from pathlib import Path

import pytest

from kag_neo4j.builder.extract import Extraction, ExtractionFailure, FullExtractor, schema_check, schema_view
from kag_neo4j.builder.records import ChunkExtraction, ChunkRecord, ExtractedEntity, ExtractedRelation
from kag_neo4j.errors import ConfigError, ModelUnavailableError, TransientModelError
from kag_neo4j.models.scripted import ScriptedLLM, prompts_of
from kag_neo4j.prompts.extract import ExtractionResponse
from kag_neo4j.prompts.extract_rows import RowsExtractionResponse
from kag_neo4j.resources import resource_dir
from kag_neo4j.schema import load_schema

RONALDO = {
    "entities": [
        {"name": "Cristiano Ronaldo", "type": "Person", "description": "a footballer", "aliases": "CR7"},
        {"name": "Real Madrid", "type": "Organization", "properties": {"founded": "6 March 1902", "nickname": None}},
        {"name": "Madrid", "type": "City"},
    ],
    "events": [{"name": "Ronaldo transfer", "type": "Transfer", "roles": {"player": "Cristiano Ronaldo"}}],
    "relations": [
        {
            "subject": "Cristiano Ronaldo",
            "predicate": "played for",
            "object": "Real Madrid",
            "properties": {"start": "2009", "end": "2018"},
        },
        {"head": "Real Madrid", "relation": "located in", "tail": "Madrid"},
        {"subject": "", "predicate": "x", "object": "Madrid"},
    ],
}


def chunk(
    text: str = "Cristiano Ronaldo played for Real Madrid from 2009 to 2018.", chunk_id: str = "d#0#0"
) -> ChunkRecord:
    return ChunkRecord(
        id=chunk_id,
        document_id="d",
        text=text,
        title="Cristiano Ronaldo",
        title_path=["Career"],
        position=0,
        paragraph=0,
        index=0,
    )


@pytest.fixture
def schema(fixtures_dir: Path):
    return schema_view(load_schema(fixtures_dir / "schemas" / "MuSiQue.schema"))


def test_one_call_per_chunk_and_the_response_becomes_an_extraction() -> None:
    llm = ScriptedLLM([RONALDO])
    result = FullExtractor(llm).extract(chunk())
    assert len(llm.calls) == 1
    assert llm.usage.by_stage()["extract"].calls == 1
    assert [e.name for e in result.entities] == ["Cristiano Ronaldo", "Real Madrid", "Madrid"]
    assert result.entities[0].aliases == ["CR7"]
    assert result.entities[1].properties == {"founded": "6 March 1902"}  # null dropped
    assert [(r.subject, r.predicate, r.object) for r in result.relations] == [
        ("Cristiano Ronaldo", "played for", "Real Madrid"),
        ("Real Madrid", "located in", "Madrid"),
    ]
    assert result.relations[0].subject_type == "Person" and result.relations[0].object_type == "Organization"
    assert result.relations[0].properties == {"start": "2009", "end": "2018"}
    assert result.events[0].roles == {"player": "Cristiano Ronaldo"}
    assert result.mode == "full"
    assert any("incomplete relation" in issue for issue in result.issues)


def test_schema_free_prompt_is_english_and_carries_title_and_path() -> None:
    llm = ScriptedLLM([{}])
    FullExtractor(llm).extract(chunk())
    system = llm.calls[0].messages[0].content
    user = prompts_of(llm.calls)[0]
    assert "knowledge graph" in system and "Schema:" not in system
    assert user.startswith("Title: Cristiano Ronaldo\nSection: Career\nText:\n")
    assert llm.calls[0].schema_ == RowsExtractionResponse.model_json_schema()
    assert "every item a row" in system


def test_rows_replies_become_the_same_extraction_as_keyed_ones() -> None:
    rows = {
        "entities": [
            ["Cristiano Ronaldo", "Person", "a footballer"],
            ["Real Madrid", "Organization", "", {"founded": "6 March 1902"}],
            ["Madrid", "City", ""],
            ["Madrid", "City", ""],  # repeated: kept once
            ["Lisbon"],  # too short: dropped and reported
        ],
        "events": [["Ronaldo transfer", "Transfer", "", {"player": "Cristiano Ronaldo"}]],
        "relations": [
            ["Cristiano Ronaldo", "played for", "Real Madrid", {"start": "2009", "end": "2018"}],
            ["Real Madrid", "located in", "Madrid"],
            ["", "x", "Madrid"],
        ],
    }
    from_rows = FullExtractor(ScriptedLLM([rows])).extract(chunk())
    from_objects = FullExtractor(ScriptedLLM([RONALDO]), reply_format="objects").extract(chunk())
    fields = lambda e: ([(x.name, x.type, x.properties) for x in e.entities],  # noqa: E731
                        [(r.subject, r.predicate, r.object, r.subject_type, r.object_type, r.properties) for r in e.relations],
                        [(v.name, v.roles) for v in e.events])
    assert fields(from_rows) == fields(from_objects)
    assert "dropped 1 row(s) with fewer than three cells" in from_rows.issues
    assert any("incomplete relation" in issue for issue in from_rows.issues)


def test_the_keyed_reply_format_sends_its_own_prompt_and_schema() -> None:
    llm = ScriptedLLM([RONALDO])
    FullExtractor(llm, reply_format="objects").extract(chunk())
    assert llm.calls[0].schema_ == ExtractionResponse.model_json_schema()
    assert "every item a row" not in llm.calls[0].messages[0].content
    with pytest.raises(ConfigError, match="unknown extraction reply format 'csv'; choose one of rows, objects"):
        FullExtractor(llm, reply_format="csv")  # type: ignore[arg-type]


def test_chinese_chunk_gets_the_chinese_prompt() -> None:
    llm = ScriptedLLM([{"entities": [{"name": "皇家马德里", "type": "组织机构"}]}])
    result = FullExtractor(llm).extract(chunk("皇家马德里足球俱乐部于1902年在马德里成立。"))
    assert "知识图谱" in llm.calls[0].messages[0].content
    assert prompts_of(llm.calls)[0].startswith("标题:")
    assert result.entities[0].name == "皇家马德里"


def test_schema_listing_is_injected_when_a_schema_is_given(schema) -> None:
    llm = ScriptedLLM([{}])
    FullExtractor(llm, schema=schema).extract(chunk())
    system = llm.calls[0].messages[0].content
    assert "Schema:" in system
    assert "GeographicLocation(地理位置) [entity]" in system
    assert "most types: rels semanticType->SemanticConcept" in system


def test_the_listing_gives_relations_their_display_names_so_a_model_may_use_either() -> None:
    finance = load_schema(resource_dir("schema") / "CompanyFinance.schema")
    llm = ScriptedLLM([{}])
    FullExtractor(llm, schema=finance).extract(chunk())
    system = llm.calls[0].messages[0].content
    assert "worksFor(Works for)->Company" in system
    assert "subsidiaryOf(Subsidiary of)->Company" in system


def test_invalid_json_is_repaired_on_retry() -> None:
    llm = ScriptedLLM(['{"entities": [{"name": "Real Madrid",', RONALDO])
    result = FullExtractor(llm).extract(chunk())
    assert len(llm.calls) == 2
    assert "That reply is invalid" in llm.calls[1].messages[-1].content
    assert len(result.entities) == 3


def test_output_still_invalid_after_retries_is_recorded_and_the_load_goes_on() -> None:
    llm = ScriptedLLM(["not json", "still not json", '{"entities": "nope"}', RONALDO])
    batch = FullExtractor(llm).extract_many([chunk(chunk_id="d#0#0"), chunk(chunk_id="d#1#0")])
    assert [e.chunk_id for e in batch.extractions] == ["d#1#0"]
    assert len(batch.failures) == 1
    failure = batch.failures[0]
    assert isinstance(failure, ExtractionFailure) and failure.chunk_id == "d#0#0"
    assert "no valid RowsExtractionResponse in 3 attempt(s)" in failure.reason
    assert len(llm.calls) == 4


def test_transient_errors_are_retried_then_recorded() -> None:
    flaky = ScriptedLLM([TransientModelError("connection reset"), RONALDO])
    assert len(FullExtractor(flaky).extract(chunk()).entities) == 3
    down = ScriptedLLM([TransientModelError("down")] * 4)
    batch = FullExtractor(down).extract_many([chunk()])
    assert batch.extractions == [] and "failed on 4 attempt(s)" in batch.failures[0].reason


def test_a_missing_model_stops_the_load() -> None:
    llm = ScriptedLLM([ModelUnavailableError("no weights; run kag-neo4j models install")])
    with pytest.raises(ModelUnavailableError):
        FullExtractor(llm).extract_many([chunk()])


def test_an_unreachable_endpoint_stops_the_load_after_its_retries() -> None:
    from kag_neo4j.errors import ModelConnectionError, ModelEndpointError
    from kag_neo4j.models.chat import RetryPolicy

    llm = ScriptedLLM([ModelConnectionError("http://127.0.0.1:1/v1: cannot connect")] * 2 + [RONALDO],
                      retry=RetryPolicy(max_retries=1, base_delay=0.0))
    with pytest.raises(ModelEndpointError, match=r"127\.0\.0\.1:1/v1: cannot connect.*tried 2 times"):
        FullExtractor(llm).extract_many([chunk(chunk_id="d#0#0"), chunk(chunk_id="d#1#0")])
    assert len(llm.calls) == 2  # the second chunk is not tried


def test_a_refused_key_stops_the_load_at_once() -> None:
    from kag_neo4j.errors import ModelEndpointError

    llm = ScriptedLLM([ModelEndpointError("refused the API key; set KAG_LLM_API_KEY"), RONALDO])
    with pytest.raises(ModelEndpointError, match="KAG_LLM_API_KEY"):
        FullExtractor(llm).extract_many([chunk(chunk_id="d#0#0"), chunk(chunk_id="d#1#0")])
    assert len(llm.calls) == 1


def test_async_extraction_keeps_order_and_records_failures() -> None:
    import asyncio

    def respond(messages):
        text = next(m.content for m in messages if m.role == "user")  # repairs append more messages
        return "garbage" if "bad" in text else {"entities": [{"name": text.rsplit(" ", 1)[-1], "type": "Thing"}]}

    llm = ScriptedLLM(respond, concurrency=2)
    chunks = [chunk("Text about Alpha", "a#0#0"), chunk("bad one", "b#0#0"), chunk("Text about Gamma", "c#0#0")]
    batch = asyncio.run(FullExtractor(llm).aextract_many(chunks))
    assert [e.chunk_id for e in batch.extractions] == ["a#0#0", "c#0#0"]
    assert [e.entities[0].name for e in batch.extractions] == ["Alpha", "Gamma"]
    assert [f.chunk_id for f in batch.failures] == ["b#0#0"]


def test_schema_constrained_output_keeps_schema_types_and_reports_the_rest(schema) -> None:
    llm = ScriptedLLM([RONALDO])
    result = FullExtractor(llm, schema=schema).extract(chunk())
    types = {e.name: e.type for e in result.entities}
    assert types["Cristiano Ronaldo"] == "Person" and types["Real Madrid"] == "Organization"
    # "City" is not in the MuSiQue schema: generic Entity, proposed type kept, issue recorded
    assert types["Madrid"] == "Entity"
    madrid = next(e for e in result.entities if e.name == "Madrid")
    assert madrid.properties["semantic_type"] == "City"
    assert any("'City' is not in schema MuSiQue" in issue for issue in result.issues)
    # off-schema predicates are kept as written (open facts), never relabelled
    assert [r.predicate for r in result.relations] == ["played for", "located in"]
    assert any("2 relation(s) kept as open facts" in issue for issue in result.issues)
    assert result.events[0].type == "Event" and result.events[0].properties["semantic_type"] == "Transfer"


def test_schema_check_spells_schema_names_and_moves_literal_properties(fixtures_dir: Path) -> None:
    schema = schema_view(load_schema(fixtures_dir / "schemas" / "SupplyChain.schema"))
    extraction = ChunkExtraction(
        chunk_id="c#0#0",
        entities=[
            ExtractedEntity(name="Acme", type="企业"),  # the display name of Company
            ExtractedEntity(name="Zed", type="person", properties={"Age": "40", "hobby": "golf"}),
            ExtractedEntity(name="Anvil", type="Product"),
            ExtractedEntity(name="Bob", type="Entity"),
        ],
        relations=[
            ExtractedRelation(subject="Acme", predicate="经营产品", object="Anvil"),  # display name of product
            ExtractedRelation(subject="Zed", predicate="legalRepresentative", object="Anvil"),  # wrong range
            ExtractedRelation(subject="Zed", predicate="age", object="41"),  # a literal property
            ExtractedRelation(subject="Acme", predicate="sues", object="Bob"),
        ],
    )
    checked = schema_check(extraction, schema)
    assert [e.type for e in checked.entities] == ["Company", "Person", "Product", "Entity"]
    zed = checked.entities[1]
    assert zed.properties == {"age": "40", "hobby": "golf"}  # Age spelled the schema's way; age=41 not overwriting
    assert [(r.subject, r.predicate, r.object) for r in checked.relations] == [
        ("Acme", "product", "Anvil"),
        ("Zed", "legalRepresentative", "Anvil"),
        ("Acme", "sues", "Bob"),
    ]
    assert checked.relations[0].subject_type == "Company" and checked.relations[0].object_type == "Product"
    issues = "\n".join(checked.issues)
    assert "object type Product is not Company" in issues
    assert "properties not in schema type Person: hobby" in issues
    assert "1 relation(s) kept as open facts (predicates not in schema: sues)" in issues
    assert schema_check(extraction, None) is extraction


def test_schema_check_drops_relations_that_only_state_a_type_or_join_an_entity_to_itself(fixtures_dir: Path) -> None:
    schema = schema_view(load_schema(fixtures_dir / "schemas" / "SupplyChain.schema"))
    extraction = ChunkExtraction(
        chunk_id="c#0#0",
        entities=[ExtractedEntity(name="Acme", type="Company"), ExtractedEntity(name="Product", type="Entity")],
        relations=[
            ExtractedRelation(subject="Acme", predicate="isA", object="Company"),
            ExtractedRelation(subject="Acme", predicate="is a", object="企业"),  # the display name of Company
            ExtractedRelation(subject="company", predicate="isA", object="Acme"),  # the same, reversed
            ExtractedRelation(subject="Entity", predicate="isA", object="Acme"),  # a generic class word
            ExtractedRelation(subject="Acme", predicate="isA->Company", object="ACME"),  # itself
            ExtractedRelation(subject="Acme", predicate="makes", object="Product"),  # an entity of the chunk
            ExtractedRelation(subject="Acme", predicate="isA", object="Conglomerate"),  # no schema type
        ],
    )
    checked = schema_check(extraction, schema)
    assert [(r.predicate, r.object) for r in checked.relations] == [("makes", "Product"), ("isA", "Conglomerate")]
    assert "5 relation(s) dropped: they name a type, not an entity, or join an entity to itself" in checked.issues


def test_extraction_stage_normalises_and_needs_an_llm_for_full_mode() -> None:
    from kag_neo4j.errors import ConfigError

    with pytest.raises(ConfigError, match="needs an LLM"):
        Extraction(mode="full")
    stage = Extraction(mode="full", llm=ScriptedLLM([RONALDO]))
    batch = stage.extract_chunks([chunk()])
    real = next(e for e in batch.extractions[0].entities if e.name == "Real Madrid")
    assert real.properties["founded"] == "1902-03-06"


LONG_CHUNK = "Alpha founded Beta in 1901. Gamma joined Beta in 1920. Delta left Gamma in 1950. Epsilon bought Delta."


def _names_of(text: str) -> list[str]:
    return [word for word in text.replace(".", "").split() if word[0].isupper()]


def _cut_off_when_long(limit: int):
    """A responder whose reply for a chunk text longer than ``limit`` characters runs past max_tokens."""

    def respond(messages):
        prompt = next(m.content for m in messages if m.role == "user")
        shown = [s for s in LONG_CHUNK.split(". ") if s.rstrip(".") in prompt]
        if sum(len(s) for s in shown) > limit:
            return {"entities": [{"name": "x" * 40, "type": "Thing"}] * 200}  # far beyond max_tokens
        return {"entities": [{"name": name, "type": "Thing"} for s in shown for name in _names_of(s)]}

    return respond


def test_halves_cut_at_the_sentence_end_nearest_the_middle() -> None:
    from kag_neo4j.builder.extract.full import halves

    assert halves("One two. Three four. Five six. Seven eight.") == ("One two. Three four.", "Five six. Seven eight.")
    assert halves("甲公司成立于1901年。乙公司成立于1920年。") == ("甲公司成立于1901年。", "乙公司成立于1920年。")
    assert halves("no sentence end but words") is not None
    assert halves("unsplittable") is None


def test_a_reply_cut_off_at_max_tokens_is_extracted_again_in_halves_and_merged() -> None:
    llm = ScriptedLLM(_cut_off_when_long(60))
    result = FullExtractor(llm, max_tokens=200).extract(chunk(LONG_CHUNK, "d#0#0"))
    assert result.chunk_id == "d#0#0"
    assert sorted({e.name for e in result.entities}) == ["Alpha", "Beta", "Delta", "Epsilon", "Gamma"]
    assert len(llm.calls) == 3  # the whole chunk (cut off, not repaired), then its two halves
    assert all("That reply is invalid" not in c.messages[-1].content for c in llm.calls)


def test_a_chunk_still_cut_off_after_max_splits_is_recorded_as_failed() -> None:
    import asyncio

    llm = ScriptedLLM(_cut_off_when_long(0))
    batch = FullExtractor(llm, max_tokens=200, max_splits=1).extract_many([chunk(LONG_CHUNK, "d#0#0")])
    assert batch.extractions == [] and batch.failures[0].chunk_id == "d#0#0"
    assert "cut off at max_tokens=200" in batch.failures[0].reason
    assert len(llm.calls) == 2  # whole chunk, first half; no repair of a cut-off reply
    never = ScriptedLLM(_cut_off_when_long(60))
    assert FullExtractor(never, max_tokens=200, max_splits=0).extract_many([chunk(LONG_CHUNK)]).failures
    assert len(never.calls) == 1
    again = ScriptedLLM(_cut_off_when_long(60))
    merged = asyncio.run(FullExtractor(again, max_tokens=200).aextract_many([chunk(LONG_CHUNK, "d#0#0")]))
    assert sorted({e.name for e in merged.extractions[0].entities}) == ["Alpha", "Beta", "Delta", "Epsilon", "Gamma"]


FACTLESS_CHUNK = (
    "Mara Vell founded the Orrin Press in Tallow. "
    "The press later moved to Brisk, where Jon Aster ran it until 1950."
)
FACTLESS_ROWS = {"entities": [["Mara Vell", "Person", ""], ["Orrin Press", "Organization", ""], ["Tallow", "City", ""],
                              ["Brisk", "City", ""], ["Jon Aster", "Person", ""]], "relations": []}


def _facts_of_halves(messages) -> dict:  # type: ignore[no-untyped-def]
    """The whole chunk gets a factless reply; each half gets the facts its own text states."""
    prompt = messages[-1].content
    if "Tallow" in prompt and "Brisk" in prompt:
        return FACTLESS_ROWS
    if "Tallow" in prompt:
        return {"entities": [["Mara Vell", "Person", ""], ["Orrin Press", "Organization", ""]],
                "relations": [["Mara Vell", "founded", "Orrin Press"]]}
    return {"entities": [["Jon Aster", "Person", ""], ["Brisk", "City", ""]], "relations": [["Jon Aster", "lived in", "Brisk"]]}


def test_a_reply_with_entities_and_no_fact_is_extracted_again_in_halves() -> None:
    import asyncio

    llm = ScriptedLLM(_facts_of_halves)
    result = FullExtractor(llm).extract(chunk(FACTLESS_CHUNK))
    assert len(llm.calls) == 3
    halves_asked = [call.messages[-1].content for call in llm.calls[1:]]
    assert "Tallow" in halves_asked[0] and "Brisk" not in halves_asked[0]
    assert "Brisk" in halves_asked[1] and "Tallow" not in halves_asked[1]
    assert {(r.subject, r.predicate, r.object) for r in result.relations} == {
        ("Mara Vell", "founded", "Orrin Press"), ("Jon Aster", "lived in", "Brisk")}
    assert {"Tallow", "Brisk"} <= {e.name for e in result.entities}  # the whole reply's entities stay
    assert any("halves were extracted again and added 2" in issue for issue in result.issues)
    again = asyncio.run(FullExtractor(ScriptedLLM(_facts_of_halves)).aextract_many([chunk(FACTLESS_CHUNK)]))
    assert len(again.extractions[0].relations) == 2


def test_a_factless_reply_is_kept_when_splitting_is_off_has_few_entities_or_its_halves_fail() -> None:
    off = ScriptedLLM(_facts_of_halves)
    assert FullExtractor(off, split_factless=False).extract(chunk(FACTLESS_CHUNK)).relations == []
    assert len(off.calls) == 1
    few = ScriptedLLM([{"entities": [["Mara Vell", "Person", ""], ["Tallow", "City", ""]], "relations": []}])
    assert len(FullExtractor(few).extract(chunk(FACTLESS_CHUNK)).entities) == 2
    assert len(few.calls) == 1
    failing = ScriptedLLM([FACTLESS_ROWS, "not json", "not json", "not json"])
    kept = FullExtractor(failing).extract(chunk(FACTLESS_CHUNK))
    assert len(kept.entities) == 5 and kept.relations == []
    assert len(failing.calls) == 4  # the whole chunk, then the first half and its two repairs

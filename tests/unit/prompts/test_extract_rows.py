"""The compact extraction reply: rows read into the keyed response, leniently, and its JSON schema."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from kag_neo4j.models.structured import json_schema_of, parse_object
from kag_neo4j.prompts.extract_rows import (
    DESCRIPTION_CHARS,
    RowsExtractionResponse,
    build_extract_rows_messages,
    rows_system_prompt,
)

REPLY = {
    "entities": [
        ["Real Madrid", "Organization", "a football club", {"founded": "6 March 1902"}],
        ["Cristiano Ronaldo", "Person", "a footballer"],
    ],
    "relations": [["Cristiano Ronaldo", "played for", "Real Madrid", {"start": "2009", "end": "2018"}]],
    "events": [["2009 transfer", "Transfer", "a record fee", {"player": "Cristiano Ronaldo", "buyer": "Real Madrid"}]],
}


def test_rows_become_the_keyed_response_cell_by_cell() -> None:
    keyed = RowsExtractionResponse.model_validate(REPLY).expanded()
    club, player = keyed.entities
    assert (club.name, club.type, club.description, club.properties) == (
        "Real Madrid", "Organization", "a football club", {"founded": "6 March 1902"},
    )
    assert (player.name, player.properties) == ("Cristiano Ronaldo", {})
    (fact,) = keyed.relations
    assert (fact.subject, fact.predicate, fact.object, fact.properties) == (
        "Cristiano Ronaldo", "played for", "Real Madrid", {"start": "2009", "end": "2018"},
    )
    (event,) = keyed.events
    assert event.roles == {"player": "Cristiano Ronaldo", "buyer": "Real Madrid"} and event.properties == {}


def test_short_rows_are_counted_and_left_out_repeated_rows_kept_once() -> None:
    reply = RowsExtractionResponse.model_validate({
        "entities": [["Hall", "Person", "a psychologist"]] * 5 + [["Hall"], ["Erikson", "Person"]],
        "relations": [["Hall", "president of"], ["Hall", "president of", "APA", {"since": "1892"}, "junk"]],
    })
    assert reply.short_rows == 3
    keyed = reply.expanded()
    assert [entity.name for entity in keyed.entities] == ["Hall"]
    assert [(r.subject, r.object, r.properties) for r in keyed.relations] == [("Hall", "APA", {"since": "1892"})]


def test_cells_are_text_and_a_fourth_cell_that_is_not_a_map_is_ignored() -> None:
    keyed = RowsExtractionResponse.model_validate(
        {"entities": [["Oslo", None, 1624, "not a map"]], "relations": [[1905, "independence of", "Norway"]]}
    ).expanded()
    assert (keyed.entities[0].type, keyed.entities[0].description, keyed.entities[0].properties) == ("Entity", "1624", {})
    assert keyed.relations[0].subject == "1905"


def test_keyed_items_where_rows_belong_are_read_like_the_keyed_form() -> None:
    keyed = RowsExtractionResponse.model_validate({
        "entities": [{"name": "Madrid", "type": "City", "aliases": "the capital"}, ["Spain", "Country", ""]],
        "relations": [{"head": "Madrid", "relation": "capital of", "tail": "Spain"}],
    }).expanded()
    assert [(e.name, e.aliases) for e in keyed.entities] == [("Madrid", ["the capital"]), ("Spain", [])]
    assert [(r.subject, r.predicate, r.object) for r in keyed.relations] == [("Madrid", "capital of", "Spain")]


@pytest.mark.parametrize("reply", [{"entities": "Real Madrid"}, {"relations": {"s": "a"}}])
def test_a_list_that_is_not_a_list_is_invalid_so_the_model_is_asked_again(reply: dict) -> None:
    with pytest.raises(ValidationError):
        RowsExtractionResponse.model_validate(reply)


def test_missing_or_null_lists_are_empty() -> None:
    reply = parse_object('{"entities": null}', RowsExtractionResponse)
    assert reply.expanded().entities == [] and reply.short_rows == 0


def test_the_schema_offers_three_or_four_cells_and_caps_descriptions_not_fact_objects() -> None:
    schema = json_schema_of(RowsExtractionResponse)
    item = schema["properties"]["entities"]["items"]
    fact = schema["properties"]["relations"]["items"]
    assert [len(option["prefixItems"]) for option in item["anyOf"]] == [3, 4]
    assert item["anyOf"][0]["prefixItems"][2] == {"type": "string", "maxLength": DESCRIPTION_CHARS}
    assert fact["anyOf"][0]["prefixItems"][2] == {"type": "string"}
    assert item["anyOf"][1]["prefixItems"][3]["additionalProperties"] == {"type": "string"}
    json.dumps(schema)  # plain JSON, as providers receive it


def test_the_llama_grammar_does_not_force_a_property_map_onto_every_row() -> None:
    llama_grammar = pytest.importorskip("llama_cpp.llama_grammar", reason="the offline LLM is not installed")
    grammar = llama_grammar.LlamaGrammar.from_json_schema(json.dumps(json_schema_of(RowsExtractionResponse)), verbose=False)
    rules = {line.split(" ::= ")[0]: line.split(" ::= ")[1] for line in grammar._grammar.splitlines() if " ::= " in line}
    three = [body for body in rules.values() if body.count("string") == 3 and "tuple-3" not in body]
    assert three, "no alternative with three cells"


@pytest.mark.parametrize("language, marker", [("en", "every item a row"), ("zh", "每一项是一行数组")])
def test_the_prompt_is_in_the_chunks_language_and_carries_the_schema(language: str, marker: str) -> None:
    system, user = build_extract_rows_messages(
        "Alice founded Acme.", title="Acme", language=language, schema_listing="Person [entity]"
    )
    assert marker in system.content and "Person [entity]" in system.content
    assert "Alice founded Acme." in user.content and "Acme" in user.content.splitlines()[0]
    assert "Person [entity]" not in rows_system_prompt(language)

"""The domain_kg taxonomy loader, concept ids, and dictionary mention finding."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kag_neo4j.builder.concepts import (
    Taxonomy,
    concept_id,
    inject_mentions,
    load_taxonomy,
)
from kag_neo4j.builder.records import ChunkExtraction, ExtractedEntity
from kag_neo4j.errors import TaxonomyError

DOMAIN_KG = Path(__file__).resolve().parents[2] / "fixtures" / "builder" / "domain_kg"


def test_domain_kg_demo_loads_with_repeated_nodes_merged() -> None:
    taxonomy = load_taxonomy(DOMAIN_KG)
    assert len(taxonomy.concepts) == 25 and len(taxonomy.edges) == 19
    assert {e.rel_type for e in taxonomy.edges} == {"IS_A"}
    acth = taxonomy.get("acth")
    assert acth is not None and acth.id == concept_id("ACTH") == "concept:acth"
    concepts, edges = taxonomy.rows()
    assert len(concepts) == 25 and list(edges) == ["IS_A"]


def test_a_nodes_file_path_finds_its_edges(tmp_path: Path) -> None:
    (tmp_path / "nodes.json").write_text(json.dumps([{"id": "a", "name": "Apple"}, {"id": "f", "name": "Fruit"}]))
    (tmp_path / "edges.json").write_text(json.dumps([{"from": "a", "to": "f", "label": "isA"}]))
    taxonomy = load_taxonomy(tmp_path / "nodes.json")
    assert [(e.source, e.rel_type, e.target) for e in taxonomy.edges] == [("concept:apple", "IS_A", "concept:fruit")]


@pytest.mark.parametrize(
    ("nodes", "edges", "message"),
    [
        ("{}", "[]", "must hold a JSON list"),
        ("[1]", "[]", "node 0 is not an object"),
        ('[{"label": "Concept"}]', "[]", "neither 'name' nor 'id'"),
        ('[{"id": "a"}]', '[{"from": "a", "to": "a", "label": "likes"}]', "not a concept relation"),
        ('[{"id": "a"}]', '[{"to": "a", "label": "isA"}]', "has no 'from'"),
        ("[oops", "[]", "not valid UTF-8 JSON"),
    ],
)
def test_bad_taxonomies_are_named_with_the_fix(tmp_path: Path, nodes: str, edges: str, message: str) -> None:
    (tmp_path / "nodes.json").write_text(nodes)
    (tmp_path / "edges.json").write_text(edges)
    with pytest.raises(TaxonomyError, match=message):
        load_taxonomy(tmp_path)


def test_missing_taxonomy_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(TaxonomyError, match="does not exist"):
        load_taxonomy(tmp_path / "nowhere")
    with pytest.raises(TaxonomyError, match="no nodes.json"):
        load_taxonomy(tmp_path)


def test_find_mentions_prefers_the_longest_name_and_respects_word_boundaries() -> None:
    taxonomy = Taxonomy.from_records(
        [{"id": "生长激素", "name": "生长激素"}, {"id": "人生长激素", "name": "人生长激素"},
         {"id": "ACE", "name": "ACE", "properties": {"aliases": ["angiotensin converting enzyme"]}}], [])
    found = taxonomy.find_mentions("人生长激素不是生长激素。ACE inhibitors; PLACE; angiotensin converting enzyme")
    assert found["concept:人生长激素"][2] == 1 and found["concept:生长激素"][2] == 1
    assert found["concept:ace"][2] == 2  # "ACE" and its alias; not the "ace" inside PLACE


def test_inject_mentions_adds_only_new_terms() -> None:
    taxonomy = Taxonomy.from_records([{"id": "ACTH", "name": "ACTH"}, {"id": "HGH", "name": "HGH"}], [])
    extraction = ChunkExtraction(chunk_id="c", entities=[ExtractedEntity(name="acth", type="Hormone")])
    injected = inject_mentions(extraction, "ACTH and HGH", taxonomy)
    assert [e.name for e in injected.entities] == ["acth", "HGH"]
    assert extraction.entities == [ExtractedEntity(name="acth", type="Hormone")]  # input untouched
    assert inject_mentions(extraction, "nothing here", taxonomy) is extraction

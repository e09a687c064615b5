"""Title anchors (``TITLE_ANCHOR``): what the builder keeps equals their definition, whatever the order of
loads, deletes and reloads, and migration 0003 makes them for a graph written before it."""

from __future__ import annotations

import hashlib
import itertools
import shutil
from pathlib import Path

import pytest

from kag_neo4j.api import KAG
from kag_neo4j.builder.delete import delete_document
from kag_neo4j.builder.pipeline import LoadOptions, load
from kag_neo4j.builder.records import SourceDocument
from kag_neo4j.config import Settings
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.models.scripted import ScriptedLLM
from kag_neo4j.resources import resource_dir
from kag_neo4j.store import migrations
from kag_neo4j.store.database import Database
from kag_neo4j.store.reset import reset_database
from tests.integration.builder_support import capitalised_extractor
from tests.integration.conftest import TEST_DIMENSION

# titles that other documents mention; each page has a chunk that does not name its own subject
DOCS = {
    "Charles Babbage": "Charles Babbage designed the Analytical Engine. He lived in London for many years.",
    "Ada Lovelace": "Ada Lovelace wrote notes on the engine of Charles Babbage. Her notes came out in London.",
    "London": "It is a large city on the Thames. Charles Babbage and Ada Lovelace met there.",
}

# the definition (procedures/project_graph.cypher v2 computed it at query time): an entity whose name_key
# is a document's title_key, and that document's chunks that do not mention it
_DEFINED = """
MATCH (d:Document) WHERE d.title_key <> ''
MATCH (e:Entity {name_key: d.title_key})
MATCH (c:Chunk)-[:PART_OF]->(d) WHERE NOT (e)-[:MENTIONED_IN]->(c)
RETURN e.name AS entity, c.id AS chunk
"""
_KEPT = "MATCH (e:Entity)-[:TITLE_ANCHOR]->(c:Chunk) RETURN e.name AS entity, c.id AS chunk"


def _doc(title: str, text: str) -> SourceDocument:
    return SourceDocument(id=title.casefold().replace(" ", "-"), title=title, source=f"test:{title}", text=text,
                          sha256=hashlib.sha256(text.encode()).hexdigest())


def _load(db: Database, settings: Settings, docs: dict[str, str]) -> None:
    load([], db, settings, LoadOptions(max_chars=60, overlap=0), documents=[_doc(t, x) for t, x in docs.items()],
         extractor=capitalised_extractor, embedder=HashingEmbedder(TEST_DIMENSION))


def _pairs(db: Database, text: str) -> set[tuple[str, str]]:
    return {(row["entity"], row["chunk"]) for row in db.read(text)}


def _fresh(db: Database) -> None:
    reset_database(db)
    migrations.migrate(db, embedding_dimension=TEST_DIMENSION)


def test_anchors_are_their_definition_in_any_load_order(db: Database, test_settings: Settings) -> None:
    seen = []
    for order in itertools.permutations(DOCS):
        _fresh(db)
        for title in order:  # one document per load: each finds the others already written
            _load(db, test_settings, {title: DOCS[title]})
        kept = _pairs(db, _KEPT)
        assert kept == _pairs(db, _DEFINED), order
        seen.append(kept)
    assert seen[0], "the documents must hold anchors"
    assert all(kept == seen[0] for kept in seen)
    assert {entity for entity, _ in seen[0]} == set(DOCS), "each title names an entity another page mentions"


def test_delete_and_reload_keep_the_anchors_equal_to_their_definition(db: Database, test_settings: Settings) -> None:
    _load(db, test_settings, DOCS)
    before = _pairs(db, _KEPT)
    page = {entity_chunk for entity_chunk in before if entity_chunk[1].startswith("charles-babbage")}
    assert page, "Babbage's page has a chunk that does not name him"
    delete_document(db, "charles-babbage")
    assert _pairs(db, _KEPT) == _pairs(db, _DEFINED) == before - page
    # reloaded so that every chunk names him: a mention replaces each anchor into the page
    _load(db, test_settings, {"Charles Babbage": "Charles Babbage designed engines. Charles Babbage lived in London."})
    kept = _pairs(db, _KEPT)
    assert kept == _pairs(db, _DEFINED)
    assert not {pair for pair in kept if pair[1].startswith("charles-babbage")}


def test_migration_0003_anchors_a_graph_written_before_it(db: Database, tmp_path: Path) -> None:
    reset_database(db)
    older = tmp_path / "migrations"
    older.mkdir()
    for name in ("0001_core.cypher", "0002_name_keys.cypher"):
        shutil.copy(resource_dir("migrations") / name, older / name)
    migrations.migrate(db, embedding_dimension=TEST_DIMENSION, folder=older)
    db.write("""
        UNWIND $docs AS doc
        CREATE (d:Document {id: doc[0], title: doc[1], title_key: toLower(doc[1])})
        WITH d, doc UNWIND range(0, 1) AS i
        CREATE (:Chunk {id: doc[0] + '#' + toString(i), text: doc[1]})-[:PART_OF]->(d)
        """, docs=[["paris", "Paris"], ["rome", "Rome"]])
    db.write("""
        UNWIND ['paris', 'rome'] AS key CREATE (:Entity {id: key, name: key, name_key: key})
        WITH 1 AS one MATCH (e:Entity {id: 'paris'}), (c:Chunk {id: 'paris#0'}) CREATE (e)-[:MENTIONED_IN]->(c)
        MERGE (m:KagMeta {key: 'graph'}) SET m.version = 4
        """)
    assert _pairs(db, _KEPT) == set()
    embedder = HashingEmbedder(TEST_DIMENSION)
    behind = KAG(db, ScriptedLLM([]), embedder).search("Where is Paris?", recipe="dense")
    assert [w for w in behind.warnings if "0003_title_anchors.cypher" in w and "kag-neo4j migrate" in w]
    report = migrations.migrate(db, embedding_dimension=TEST_DIMENSION)
    assert [m.filename for m in report.applied] == ["0003_title_anchors.cypher"]
    assert KAG(db, ScriptedLLM([]), embedder).search("Where is Paris?", recipe="dense").warnings == []
    assert _pairs(db, _KEPT) == _pairs(db, _DEFINED) == {("paris", "paris#1"), ("rome", "rome#0"), ("rome", "rome#1")}
    assert db.read("MATCH (m:KagMeta {key: 'graph'}) RETURN m.version AS v")[0]["v"] == 5, \
        "the graph version moves, so no GDS projection of the graph without anchors is reused"


@pytest.mark.parametrize("hostile", ["x`]->(n) DETACH DELETE n //", "Robert'); DROP"])
def test_a_title_that_looks_like_cypher_is_a_value(db: Database, test_settings: Settings, hostile: str) -> None:
    _load(db, test_settings, {hostile: "Nothing here is capitalised at all. nor here."})
    _load(db, test_settings, DOCS)
    assert _pairs(db, _KEPT) == _pairs(db, _DEFINED)
    assert db.read("MATCH (d:Document) RETURN count(d) AS n")[0]["n"] == len(DOCS) + 1

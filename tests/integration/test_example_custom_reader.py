"""examples/custom_reader.py: a ``.srt`` reader registered with one call, then loaded through the
real ``load`` path (light mode) into the test database."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from kag_neo4j.builder import readers
from kag_neo4j.builder.pipeline import LoadOptions, load
from kag_neo4j.config import Settings
from kag_neo4j.errors import ConfigError
from kag_neo4j.models.hashing import HashingEmbedder
from kag_neo4j.store.database import Database
from tests.integration.conftest import TEST_DIMENSION

ROOT = Path(__file__).resolve().parents[2]
LECTURE = ROOT / "tests" / "fixtures" / "examples" / "babbage_lecture.srt"


@pytest.fixture
def example(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The example module, with the reader registry restored after the test."""
    monkeypatch.setattr(readers, "READERS", dict(readers.READERS))
    monkeypatch.setattr(readers, "_KNOWN_UNSUPPORTED", dict(readers._KNOWN_UNSUPPORTED))
    spec = importlib.util.spec_from_file_location("custom_reader_example", ROOT / "examples" / "custom_reader.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.register()
    return module


def test_a_registered_srt_reader_loads_subtitles_as_paragraphs(example: ModuleType, db: Database,
                                                               test_settings: Settings) -> None:
    summary = load([LECTURE.parent], db, test_settings, LoadOptions(mode="light", max_chars=120, overlap=0),
                   embedder=HashingEmbedder(TEST_DIMENSION))
    assert summary.read_skipped == [] and summary.read_failures == []
    assert summary.documents_loaded == 1
    [document] = db.read("MATCH (d:Document) RETURN d.title AS title, d.media_type AS media, d.status AS status, "
                         "d.metadata_json AS metadata, d.chunk_count AS chunks")
    assert document["title"] == "babbage lecture" and document["media"] == "application/x-subrip"
    assert document["status"] == "complete" and '"cues": 5' in document["metadata"]
    chunks = [row["text"] for row in db.read(
        "MATCH (d:Document)<-[:PART_OF]-(c:Chunk) RETURN c.text AS text ORDER BY c.position")]
    # a pause of more than two seconds starts a paragraph; timing lines and markup are gone
    assert chunks == [
        "Good evening. Tonight we talk about Charles Babbage and his engines. "
        "Babbage designed the Difference Engine in London.",
        "Ada Lovelace wrote the first program for the Analytical Engine. She published her notes in 1843.",
        "Thank you for listening.",
    ]
    assert document["chunks"] == 3
    names = {row["name"] for row in db.read("MATCH (e:Entity)-[:MENTIONED_IN]->(:Chunk) RETURN e.name AS name")}
    assert "Ada Lovelace" in names  # light extraction ran on the subtitles' text


def test_a_taken_suffix_or_a_bad_one_is_refused(example: ModuleType) -> None:
    with pytest.raises(ConfigError, match="already have a reader"):
        readers.register_reader([".md"], example.read_srt_file)
    with pytest.raises(ConfigError, match="not a file suffix"):
        readers.register_reader(["srt"], example.read_srt_file)
    readers.register_reader([".SRT"], example.read_srt_file)  # the same reader again: fine
    readers.register_reader([".rtf"], example.read_srt_file)  # an unsupported suffix becomes supported
    assert readers.reader_for(Path("notes.rtf")) is example.read_srt_file


def test_a_file_without_cues_is_a_read_error_and_stray_blocks_a_warning(example: ModuleType, tmp_path: Path) -> None:
    empty = tmp_path / "empty.srt"
    empty.write_text("just some words\n", encoding="utf-8")
    report = readers.ReadReport()
    assert readers.read_file(empty, report=report) == []
    assert "no subtitle cues" in report.failures[0].reason
    mixed = tmp_path / "mixed.srt"
    mixed.write_text(LECTURE.read_text(encoding="utf-8") + "\nnot a cue\n", encoding="utf-8")
    [document] = readers.read_file(mixed, report=report)
    assert document.metadata["cues"] == 5
    assert report.warnings == [f"{mixed}: 1 block(s) without a timing line were left out"]

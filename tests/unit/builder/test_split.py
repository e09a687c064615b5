"""Splitter: determinism, ids, overlap, heading paths, sentence boundaries, Chinese, records."""

from __future__ import annotations

from pathlib import Path

import pytest

from kag_neo4j.builder.readers import read_file
from kag_neo4j.builder.records import SourceDocument
from kag_neo4j.builder.split import split_document, split_sentences


def document(text: str, media_type: str = "text/plain", **extra: object) -> SourceDocument:
    return SourceDocument(id="doc", title="Doc", source="test", text=text, sha256="0", media_type=media_type, **extra)


LONG = " ".join(f"Sentence {i} says something about the history of the firm." for i in range(30))


def test_short_paragraphs_are_packed_whole_into_one_chunk() -> None:
    chunks = split_document(document("First paragraph.\n\nSecond paragraph."))
    assert len(chunks) == 1
    assert chunks[0].id == "doc#0#0"
    assert chunks[0].text == "First paragraph.\n\nSecond paragraph."
    assert (chunks[0].position, chunks[0].paragraph, chunks[0].index) == (0, 0, 0)


def test_paragraphs_that_do_not_fit_start_new_chunks_with_ids_from_their_paragraph() -> None:
    paragraphs = [f"Paragraph {i} " + "x" * 80 + "." for i in range(5)]
    chunks = split_document(document("\n\n".join(paragraphs)), max_chars=200, overlap=0)
    assert [c.id for c in chunks] == ["doc#0#0", "doc#2#0", "doc#4#0"]
    assert all(len(c.text) <= 200 for c in chunks)
    assert [c.position for c in chunks] == [0, 1, 2]


def test_long_paragraph_is_cut_at_sentence_boundaries_with_overlap() -> None:
    chunks = split_document(document(LONG), max_chars=300, overlap=80)
    assert len(chunks) > 3
    assert all(len(c.text) <= 300 for c in chunks)
    assert [c.id for c in chunks] == [f"doc#0#{i}" for i in range(len(chunks))]
    for chunk in chunks:
        assert chunk.text.startswith("Sentence ") and chunk.text.endswith("firm.")
    for previous, current in zip(chunks, chunks[1:]):
        last_sentence = split_sentences(previous.text)[-1]
        assert current.text.startswith(last_sentence)  # whole trailing sentence repeated


def test_overlap_zero_gives_disjoint_chunks_covering_the_text() -> None:
    chunks = split_document(document(LONG), max_chars=300, overlap=0)
    assert " ".join(c.text for c in chunks) == LONG


def test_same_input_gives_the_same_chunks() -> None:
    text = "# A\n\n" + LONG + "\n\n## B\n\nTail."
    first = split_document(document(text, "text/markdown"), max_chars=250, overlap=60)
    second = split_document(document(text, "text/markdown"), max_chars=250, overlap=60)
    assert [c.model_dump() for c in first] == [c.model_dump() for c in second]


def test_markdown_headings_give_title_paths_and_outline_chunks(fixtures_dir: Path) -> None:
    (doc,) = read_file(fixtures_dir / "docs" / "guide.md")
    chunks = split_document(doc)
    assert [c.title_path for c in chunks] == [
        ["Acme Field Guide"],
        ["Acme Field Guide", "History"],
        ["Acme Field Guide", "History", "Later years"],
        ["Acme Field Guide", "Products"],
    ]
    assert chunks[0].text.startswith("Acme Corporation makes anvils.")
    assert "# not a heading inside a code fence" in chunks[1].text  # fenced code is kept whole
    assert all(not c.text.startswith("#") for c in chunks)
    assert [c.id for c in chunks] == [f"{doc.id}#0#0", f"{doc.id}#1#0", f"{doc.id}#3#0", f"{doc.id}#4#0"]


def test_length_mode_packs_across_headings_but_keeps_the_start_path() -> None:
    text = "# Top\n\nIntro.\n\n## Sub\n\nBody."
    outline = split_document(document(text, "text/markdown"), mode="outline")
    length = split_document(document(text, "text/markdown"), mode="length")
    assert len(outline) == 2 and outline[1].title_path == ["Top", "Sub"]
    assert len(length) == 1
    assert length[0].text == "Top\n\nIntro.\n\nSub\n\nBody."
    assert length[0].title_path == ["Top"]


def test_auto_mode_uses_outline_only_where_headings_are_marked() -> None:
    text = "# Not a heading in plain text\n\nBody."
    assert len(split_document(document(text))) == 1
    assert len(split_document(document(text, metadata={"outline": "markdown"}))) == 1
    marked = split_document(document(text, metadata={"outline": "markdown"}))
    assert marked[0].title_path == ["Not a heading in plain text"]
    assert split_document(document(text))[0].title_path == []


def test_setext_headings_are_recognised() -> None:
    chunks = split_document(document("Title\n=====\n\nIntro.\n\nPart\n----\n\nBody.", "text/markdown"))
    assert [c.title_path for c in chunks] == [["Title"], ["Title", "Part"]]


def test_sentence_splitting_handles_abbreviations_and_chinese() -> None:
    text = (
        "Dr. J. Smith met Mr. Jones at 5 p.m. on Monday. They talked! 皇家马德里成立于1902年。C罗效力于皇家马德里！好的"
    )
    assert split_sentences(text) == [
        "Dr. J. Smith met Mr. Jones at 5 p.m. on Monday.",
        "They talked!",
        "皇家马德里成立于1902年。",
        "C罗效力于皇家马德里！",
        "好的",
    ]


def test_chinese_text_is_cut_at_chinese_punctuation_without_spaces() -> None:
    sentence = "皇家马德里足球俱乐部于一九〇二年在马德里成立，是西班牙最成功的球会之一。"
    text = sentence * 12
    chunks = split_document(document(text), max_chars=120, overlap=40)
    assert len(chunks) > 3
    assert all(len(c.text) <= 120 for c in chunks)
    assert all(c.text.endswith("。") for c in chunks)
    assert all(" " not in c.text for c in chunks)
    assert chunks[1].text.startswith(sentence)  # overlap: the last sentence again


def test_a_sentence_longer_than_the_limit_is_cut_at_spaces() -> None:
    words = " ".join(f"word{i}" for i in range(200))
    chunks = split_document(document(words), max_chars=100, overlap=0)
    assert all(len(c.text) <= 100 for c in chunks)
    assert " ".join(c.text for c in chunks) == words


def test_records_give_one_chunk_per_row() -> None:
    doc = document(
        "", records=[{"id": "C1", "name": "Acme"}, {"id": "", "name": None}, {"id": "C2"}], record_type="Company"
    )
    chunks = split_document(doc)
    assert [c.id for c in chunks] == ["doc#0#0", "doc#2#0"]
    assert chunks[0].text == "id: C1; name: Acme"
    assert chunks[0].title_path == ["Company"]


def test_empty_document_gives_no_chunks() -> None:
    assert split_document(document("   \n\n ")) == []


@pytest.mark.parametrize(("max_chars", "overlap"), [(10, 0), (200, 150), (200, -1)])
def test_bad_sizes_are_rejected(max_chars: int, overlap: int) -> None:
    with pytest.raises(ValueError, match="max_chars|overlap"):
        split_document(document("text"), max_chars=max_chars, overlap=overlap)

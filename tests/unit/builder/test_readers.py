"""Readers: every format on tiny fixtures, corpus shapes, encodings and bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kag_neo4j.builder.readers import ReadOptions, ReadReport, read_file, read_path, read_paths
from kag_neo4j.builder.readers.common import decode_bytes, slug, stable_id
from kag_neo4j.errors import ReadError


@pytest.fixture
def docs(fixtures_dir: Path) -> Path:
    return fixtures_dir / "docs"


def one(path: Path, **options: object) -> object:
    documents = read_file(path, options=ReadOptions(**options) if options else None)
    assert len(documents) == 1
    return documents[0]


def test_text_file_keeps_text_and_derives_a_stable_id(docs: Path, tmp_path: Path) -> None:
    target = tmp_path / "note.txt"
    target.write_text("Line one.\r\n\r\n\r\n\r\nLine two.  \n", encoding="utf-8")
    doc = one(target)
    assert doc.text == "Line one.\n\nLine two."
    assert doc.title == "note"
    assert doc.media_type == "text/plain"
    assert doc.id.startswith("note-") and doc.id == one(target).id
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    shutil.copy(target, moved / "note.txt")
    assert one(moved / "note.txt").id == doc.id  # the id does not depend on where the file sits
    assert len(doc.sha256) == 64


def test_markdown_reader_takes_front_matter_title_and_keeps_headings(docs: Path) -> None:
    doc = one(docs / "guide.md")
    assert doc.media_type == "text/markdown"
    assert doc.title == "Acme Field Guide"
    assert doc.metadata["front_matter"]["author"] == "Test"
    assert not doc.text.startswith("---")
    assert "## History" in doc.text and "### Later years" in doc.text


def test_pdf_reader_reads_text_layer_and_bookmarks_as_headings(docs: Path) -> None:
    doc = one(docs / "sample.pdf")
    assert doc.media_type == "application/pdf"
    assert doc.title == "Acme Annual Report"
    assert doc.metadata == {"pages": 2, "outline": "markdown"}
    assert "# Annual Report" in doc.text and "# Products" in doc.text
    # wrapped lines of one paragraph are joined
    assert "Acme Corporation was founded in 1902 in Springfield. Its revenue grew" in doc.text


def test_docx_reader_maps_heading_styles_and_tables(tmp_path: Path) -> None:
    import docx

    document = docx.Document()
    document.core_properties.title = "Quarterly Memo"
    document.add_heading("Overview", level=1)
    document.add_paragraph("Acme opened a plant in Ohio.")
    document.add_heading("Numbers", level=2)
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "Year", "Revenue"
    table.cell(1, 0).text, table.cell(1, 1).text = "2023", "3.5 million"
    document.add_paragraph("Closing words.")
    path = tmp_path / "memo.docx"
    document.save(str(path))
    doc = one(path)
    assert doc.title == "Quarterly Memo"
    assert doc.metadata["outline"] == "markdown"
    assert doc.text.split("\n\n") == [
        "# Overview",
        "Acme opened a plant in Ohio.",
        "## Numbers",
        "Year | Revenue\n2023 | 3.5 million",
        "Closing words.",
    ]


def test_corrupt_docx_is_reported_with_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "broken.docx"
    path.write_bytes(b"PK\x03\x04 this is not really a zip archive" * 10)
    with pytest.raises(ReadError, match=r"broken\.docx.*re-save"):
        read_file(path)


def test_html_reader_keeps_headings_and_drops_scripts(docs: Path) -> None:
    doc = one(docs / "page.html")
    assert doc.title == "Madrid Clubs"
    assert doc.metadata["outline"] == "markdown"
    assert "var ignored" not in doc.text and "color: red" not in doc.text and "Home | About" not in doc.text
    blocks = doc.text.split("\n\n")
    assert blocks[0] == "# Real Madrid"
    assert blocks[1] == "Real Madrid was founded on 6 March 1902 in Madrid."
    assert blocks[2] == "## Players"
    assert blocks[3] == "- Cristiano Ronaldo played for the club from 2009 to 2018.\n- Raúl González"
    assert "Season | Titles" in doc.text and "Café & more." in doc.text


def test_hotpotqa_corpus_gives_one_document_per_title(docs: Path) -> None:
    documents = read_file(docs / "hotpot_corpus.json")
    assert [d.title for d in documents] == ["Glimmer Dice", "Ona Reyes"]
    assert (
        documents[0].text
        == "Glimmer Dice is a dice game designed by Ona Reyes. In it, each player builds a tower of 9 dice."
    )
    assert documents[0].source.endswith("hotpot_corpus.json#0")
    assert documents[0].metadata["sentences"] == 2
    assert documents[0].id == stable_id("Glimmer Dice", documents[0].text)


def test_musique_corpus_disambiguates_duplicate_titles_deterministically(docs: Path) -> None:
    report = ReadReport()
    documents = read_file(docs / "musique_corpus.json", report=report)
    ids = [d.id for d in documents]
    assert len(documents) == 4  # the empty passage is skipped and reported
    assert len(set(ids)) == 4
    springfield = [d for d in documents if d.title == "Springfield"]
    assert springfield[0].id != springfield[1].id  # same title, other text: other hash
    assert springfield[2].id == springfield[0].id + "~2"  # exact duplicate: numbered
    assert ids == [d.id for d in read_file(docs / "musique_corpus.json")]
    assert any("Empty one" in w and "no text" in w for w in report.warnings)


def test_jsonl_skips_bad_lines_and_uses_record_ids(docs: Path) -> None:
    report = ReadReport()
    documents = read_file(docs / "passages.jsonl", report=report)
    assert [d.id for d in documents] == ["p1", "p2"]
    assert documents[1].source.endswith("passages.jsonl#3")
    assert report.warnings == [f"{docs / 'passages.jsonl'}: 1 line(s) are not valid JSON and were skipped (line 2)"]


def test_generic_json_records_become_a_structured_document(tmp_path: Path) -> None:
    path = tmp_path / "nodes.json"
    path.write_text(json.dumps([{"id": "a", "name": "A", "label": "Concept"}, {"id": "b", "name": "B"}]))
    doc = one(path)
    assert doc.text == "" and doc.record_type == "nodes" and len(doc.records) == 2
    assert one(path, record_type="Concept").record_type == "Concept"


def test_json_wrapper_and_single_object(tmp_path: Path) -> None:
    wrapped = tmp_path / "wrapped.json"
    wrapped.write_text(json.dumps({"data": [{"title": "T", "content": "Body text here."}]}))
    assert one(wrapped).text == "Body text here."
    single = tmp_path / "single.json"
    single.write_text(json.dumps({"id": "x1", "title": "Solo", "text": "Only one."}))
    assert one(single).id == "x1"


def test_invalid_json_names_the_position(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"a": [1, 2,, 3]}')
    with pytest.raises(ReadError, match=r"bad\.json: is not valid JSON .*line 1 column"):
        read_file(path)


def test_csv_rows_become_records_typed_by_stem_or_option(docs: Path) -> None:
    doc = one(docs / "Company.csv")
    assert doc.record_type == "Company"
    assert doc.records[0] == {"id": "C1", "name": "Acme Corporation", "product": "Anvil,Rocket", "age": "120"}
    assert one(docs / "Company.csv", record_type="Firm").record_type == "Firm"


def test_csv_as_text_and_as_passages(docs: Path, tmp_path: Path) -> None:
    text = one(docs / "Company.csv", csv_mode="text")
    assert text.text.splitlines()[0] == "id: C1; name: Acme Corporation; product: Anvil,Rocket; age: 120"
    assert text.records == []
    passages = tmp_path / "Disease.csv"
    passages.write_text('idx,title,text\n1,Flu,"Influenza is a viral infection."\n2,Cold,"A mild illness."\n')
    documents = read_file(passages)
    assert [d.title for d in documents] == ["Flu", "Cold"]
    assert [d.id for d in documents] == ["1", "2"]


def test_latin1_file_is_decoded_and_reported(docs: Path) -> None:
    report = ReadReport()
    (doc,) = read_file(docs / "latin1.txt", report=report)
    assert doc.text.startswith("Café crème, naïve résumé – a latin-1")
    assert doc.metadata["encoding"] == "cp1252"
    assert "CP1252" in report.warnings[0] and "latin1.txt" in report.warnings[0]


def test_gb18030_file_is_decoded(docs: Path) -> None:
    doc = one(docs / "gbk.txt")
    assert doc.text == "皇家马德里足球俱乐部于1902年在马德里成立。"
    assert doc.metadata["encoding"] == "gb18030"


def test_decode_prefers_bom_and_declared_charset() -> None:
    assert decode_bytes("\ufeffhello".encode("utf-8"), "x").encoding == "utf-8-sig"
    assert decode_bytes("hé".encode("utf-16"), "x").text == "hé"
    declared = '<meta charset="iso-8859-2"><p>\u0141\u00f3d\u017a</p>'.encode("iso-8859-2")
    decoded = decode_bytes(declared, "x")
    assert decoded.encoding == "iso-8859-2" and "Łódź" in decoded.text


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("empty.txt", "is empty"),
        ("junk.bin", "binary"),
        ("missing.txt", "does not exist"),
    ],
)
def test_bad_files_raise_read_error_naming_the_file(docs: Path, name: str, reason: str) -> None:
    with pytest.raises(ReadError) as caught:
        read_file(docs / name)
    assert caught.value.path.endswith(name)
    assert reason in caught.value.reason


def test_unsupported_office_formats_name_the_conversion(tmp_path: Path) -> None:
    path = tmp_path / "sheet.xlsx"
    path.write_bytes(b"PK\x03\x04")
    with pytest.raises(ReadError, match="export the sheet as .csv"):
        read_file(path)


def test_unknown_suffix_is_read_by_content(tmp_path: Path, docs: Path) -> None:
    html = tmp_path / "page.download"
    html.write_text("<html><body><h1>T</h1><p>Body.</p></body></html>")
    assert one(html).media_type == "text/html"
    pdf = tmp_path / "report.bin"
    shutil.copy(docs / "sample.pdf", pdf)
    assert one(pdf).media_type == "application/pdf"
    with pytest.raises(ReadError, match="binary"):
        read_file(docs / "junk.dat")


def test_folder_read_reports_bad_files_and_completes(docs: Path) -> None:
    report = ReadReport()
    documents = list(read_path(docs, report=report))
    assert [f.path for f in report.failures] == [str(docs / "empty.txt")]
    assert {Path(s.path).name for s in report.skipped} == {"junk.bin", "junk.dat", "make_pdf.py"}
    titles = {d.title for d in documents}
    assert {"Acme Field Guide", "Acme Annual Report", "Madrid Clubs", "Glimmer Dice", "Company"} <= titles
    assert report.documents == len(documents)
    assert len({d.id for d in documents}) == len(documents)


def test_folder_read_without_report_raises_on_the_first_bad_file(docs: Path) -> None:
    with pytest.raises(ReadError, match="empty.txt"):
        list(read_path(docs))


def test_read_paths_refuses_repeated_ids(docs: Path) -> None:
    report = ReadReport()
    documents = list(read_paths([docs / "passages.jsonl", docs / "passages.jsonl"], report=report))
    assert [d.id for d in documents] == ["p1", "p2"]
    assert any("repeats" in warning for warning in report.warnings)


def test_slug_keeps_unicode_letters_and_never_hash_marks() -> None:
    assert slug("Real Madrid C.F.") == "real-madrid-c-f"
    assert slug("皇家马德里 #1") == "皇家马德里-1"
    assert slug("###") == "doc"

"""Generators of bad input files (and a few good ones) for reader-failure tests and benchmarks.

    from tests.badfiles import BAD_FILES, write_bad_files, write_good_files
    expected = write_bad_files(folder)            # {file name: BadFile}
    good = write_good_files(folder)               # {file name: a word its text contains}

Every file is generated (nothing third-party, nothing downloaded). ``BadFile.outcome`` says what a
load must do with it: ``"refused"`` (a :class:`~kag_neo4j.errors.ReadError` naming it; ``reason``
is a fragment of that message), ``"warned"`` (loaded, with a warning naming it) or ``"skipped"``
(a folder load leaves the file out, saying why). ``huge_line_mb`` sizes the one-long-line file
(the benchmark uses 50 MB; unit tests something small, since the limit is on characters per line).
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

GOOD_TEXT = (
    "The Harrow Valley Railway opened in 1902. Its first engineer was Ada Pembroke, who later "
    "founded the Millbrook Institute. The line carried coal and passengers until 1961."
)


@dataclass(frozen=True)
class BadFile:
    make: Callable[[int], bytes]
    outcome: Literal["refused", "warned", "skipped"]
    reason: str  # a fragment of the message naming the file


def _pdf(text: str | None = None, *, password: str | None = None) -> bytes:
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    page = writer.add_blank_page(width=612, height=792)
    if text is not None:
        font = writer._add_object(DictionaryObject({
            NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        }))
        stream = DecodedStreamObject()
        escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        stream.set_data(f"BT /F1 12 Tf 72 720 Td ({escaped}) Tj ET".encode("latin-1"))
        page[NameObject("/Contents")] = writer._add_object(stream)
        page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})})
    if password is not None:
        writer.encrypt(user_password=password, owner_password=password, algorithm="AES-256")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _zip(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


def _docx(paragraph: str) -> bytes:
    import docx

    document = docx.Document()
    document.add_heading("Harrow Valley", level=1)
    document.add_paragraph(paragraph)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _docx_with_broken_xml() -> bytes:
    """A real .docx whose main part is cut off in the middle of a tag."""
    with zipfile.ZipFile(io.BytesIO(_docx(GOOD_TEXT))) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    members["word/document.xml"] = members["word/document.xml"][:300]
    return _zip(members)


def _binary(size: int = 4096) -> bytes:
    return bytes((i * 131 + 7) % 256 for i in range(size))


def _huge_line(mb: int) -> bytes:
    words = b"railway engineer coal passengers valley "
    return (words * (mb * 1024 * 1024 // len(words) + 1))[: mb * 1024 * 1024]


BAD_FILES: dict[str, BadFile] = {
    "corrupt.pdf": BadFile(lambda mb: b"%PDF-1.7\n" + _binary(2048), "refused", "not a readable PDF"),
    "truncated.pdf": BadFile(lambda mb: _pdf(GOOD_TEXT)[:400], "refused", "not a readable PDF"),
    "encrypted.pdf": BadFile(lambda mb: _pdf(GOOD_TEXT, password="s3cret"), "refused", "encrypted with a password"),
    "scanned.pdf": BadFile(lambda mb: _pdf(None), "refused", "no text layer"),
    "binary.txt": BadFile(lambda mb: _binary(), "refused", "binary file"),
    "empty.txt": BadFile(lambda mb: b"", "refused", "is empty"),
    "blank.md": BadFile(lambda mb: b"\n\n   \n\t\n", "refused", "is empty"),
    "front-matter-only.md": BadFile(lambda mb: b"---\ntitle: Nothing\n---\n", "refused", "no text"),
    "one-huge-line.txt": BadFile(_huge_line, "refused", "without a line break"),
    "bad-utf16.txt": BadFile(lambda mb: b"\xff\xfe" + b"\x00\xd8" + b"a", "refused", "not valid UTF-16"),
    "invalid-utf8.txt": BadFile(lambda mb: GOOD_TEXT.encode() + b" caf\xe9 \xff\xfe ok.", "warned", "not UTF-8"),
    "gbk.txt": BadFile(lambda mb: "哈罗谷铁路于一九〇二年通车，第一位工程师是艾达。".encode("gbk"), "warned", "GB18030"),
    "broken.json": BadFile(lambda mb: b'[{"title": "A", "text": "unterminated', "refused", "not valid JSON"),
    "deeply-nested.json": BadFile(lambda mb: b"[" * 100_000 + b"]" * 100_000, "refused", "RecursionError"),
    "scalar.json": BadFile(lambda mb: b"42", "refused", "holds a JSON int"),
    "empty-list.json": BadFile(lambda mb: b"[]", "refused", "empty JSON list"),
    "nul-bytes.json": BadFile(lambda mb: b'{"text": "a\x00\x00\x00b"}', "refused", "binary file"),
    "broken.jsonl": BadFile(lambda mb: b'{"text": "a"\n{"text": \n}}}\n', "refused", "no valid JSON line"),
    "unclosed-quote.csv": BadFile(lambda mb: b'id,text\n1,"The railway opened\n2,Coal\n3,Ada\n', "refused", "not valid CSV"),
    "header-only.csv": BadFile(lambda mb: b"id,name,text\n", "refused", "no data rows"),
    "repeated-columns.csv": BadFile(lambda mb: b"id,name,name\n1,a,b\n", "refused", "repeats the column"),
    "not-a-zip.docx": BadFile(lambda mb: b"this is not a word document\n" * 20, "refused", "not a readable .docx"),
    "zip-without-document.docx": BadFile(lambda mb: _zip({"hello.txt": b"hi"}), "refused", "not a readable .docx"),
    "broken-xml.docx": BadFile(lambda mb: _docx_with_broken_xml(), "refused", "not a readable .docx"),
    "script-only.html": BadFile(lambda mb: b"<html><head><script>var a = 1;</script></head><body></body></html>",
                                "refused", "no visible text"),
    "binary.html": BadFile(lambda mb: b"<html>" + _binary(), "refused", "binary file"),
    "legacy.doc": BadFile(lambda mb: b"\xd0\xcf\x11\xe0" + _binary(512), "refused", "save it as .docx"),
    "archive.zip": BadFile(lambda mb: _zip({"a.txt": b"a"}), "refused", "unpack it"),
    "notes.xyz": BadFile(lambda mb: b"an unknown format", "skipped", "no reader for .xyz"),
}


def _good_files() -> dict[str, tuple[bytes, str]]:
    passages = [{"title": "Harrow Valley Railway", "text": GOOD_TEXT},
                {"title": "Millbrook Institute", "text": "The Millbrook Institute was founded by Ada Pembroke in 1921."}]
    return {
        "good.txt": (GOOD_TEXT.encode(), "Harrow"),
        "good.md": (b"# Millbrook\n\nThe Millbrook Institute studies railway history.\n", "Millbrook"),
        "good.html": (b"<html><head><title>Coal</title></head><body><h1>Coal</h1><p>Coal trains ran at night.</p>"
                      b"<p>Unclosed <b>bold <div>and stray tags</body>", "Coal"),
        "good.json": (json.dumps(passages).encode(), "Pembroke"),
        "good.csv": (b"id,title,text\n1,Signals,The signal box stood at Millbrook.\n", "signal"),
        "good.pdf": (_pdf("Ada Pembroke drew the viaduct at Harrow."), "viaduct"),
        "good.docx": (_docx("Passengers crossed the viaduct daily."), "viaduct"),
    }


def write_bad_files(folder: Path, *, huge_line_mb: int = 2) -> dict[str, BadFile]:
    """Write every bad file into ``folder``; returns what is expected of each (by file name)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, bad in BAD_FILES.items():
        (folder / name).write_bytes(bad.make(huge_line_mb))
    return dict(BAD_FILES)


def write_good_files(folder: Path) -> dict[str, str]:
    """Write a few good files (one per format) into ``folder``; returns a word each one's text holds."""
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, (data, word) in _good_files().items():
        (folder / name).write_bytes(data)
        out[name] = word
    return out

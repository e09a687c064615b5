"""A custom reader: SubRip subtitles (``.srt``) as documents, registered with one call.

A reader is a function ``(path, ctx) -> list[SourceDocument]``. This one reads the cues of a
``.srt`` file (index line, ``00:00:01,000 --> 00:00:04,200`` timing line, text lines), drops the
timing and markup, and joins the cues into paragraphs: a pause of more than
:data:`PAUSE_SECONDS` between two cues starts a new paragraph, so the splitter cuts the
subtitles where the speech pauses. :func:`register` makes every later read and load
(``kag-neo4j load`` in this process, :func:`kag_neo4j.builder.pipeline.load`, a folder walk)
read ``.srt`` files with it.

    python examples/custom_reader.py talk.srt           # the document and its chunks
    python examples/custom_reader.py talk.srt --load    # and load it (light mode) into the configured Neo4j
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from kag_neo4j.builder.readers import ReadContext, clean_text, make_document, read_text, register_reader
from kag_neo4j.builder.records import SourceDocument
from kag_neo4j.errors import ReadError

#: a pause longer than this (seconds) between two cues starts a new paragraph
PAUSE_SECONDS = 2.0
MEDIA_TYPE = "application/x-subrip"

_TIMING = re.compile(
    r"^(\d{1,2}):(\d{2}):(\d{2})[,.](\d{1,3})\s*-->\s*(\d{1,2}):(\d{2}):(\d{2})[,.](\d{1,3})"
)
_MARKUP = re.compile(r"<[^>]{1,40}>|\{\\[^}]{1,40}\}")  # <i>, </font>, {\an8}


def _seconds(hours: str, minutes: str, seconds: str, millis: str) -> float:
    return int(hours) * 3600 + int(minutes) * 60 + int(seconds) + int(millis.ljust(3, "0")) / 1000


def parse_cues(text: str) -> tuple[list[tuple[float, float, str]], int]:
    """``(start, end, text)`` of every cue, and how many blocks were not cues."""
    cues: list[tuple[float, float, str]] = []
    skipped = 0
    for block in re.split(r"\n\s*\n", text):
        lines = [line.strip() for line in block.strip().split("\n") if line.strip()]
        if lines and lines[0].isdigit():
            lines = lines[1:]
        timing = _TIMING.match(lines[0]) if lines else None
        if timing is None:
            skipped += bool(lines)
            continue
        words = " ".join(_MARKUP.sub("", line) for line in lines[1:]).split()
        if words:
            cues.append((_seconds(*timing.groups()[:4]), _seconds(*timing.groups()[4:]), " ".join(words)))
    return cues, skipped


def read_srt_file(path: Path, ctx: ReadContext) -> list[SourceDocument]:
    """One document per ``.srt`` file: the cues' text, a paragraph per stretch of speech."""
    decoded = read_text(path)
    cues, skipped = parse_cues(clean_text(decoded.text))
    if not cues:
        raise ReadError(path, "has no subtitle cues (a number, a '00:00:01,000 --> 00:00:02,000' line, text); "
                              "check that it is a SubRip file")
    if skipped:
        ctx.warn(f"{path}: {skipped} block(s) without a timing line were left out")
    paragraphs: list[list[str]] = [[]]
    previous_end = cues[0][0]
    for start, end, words in cues:
        if paragraphs[-1] and start - previous_end > PAUSE_SECONDS:
            paragraphs.append([])
        paragraphs[-1].append(words)
        previous_end = end
    text = "\n\n".join(" ".join(paragraph) for paragraph in paragraphs)
    metadata = {"encoding": decoded.encoding, "cues": len(cues), "duration_seconds": cues[-1][1]}
    return [make_document(path, text=text, media_type=MEDIA_TYPE, title=path.stem.replace("_", " "),
                          metadata=metadata, id_key=ctx.id_key)]


def register() -> None:
    """Read ``.srt`` files with :func:`read_srt_file` from now on."""
    register_reader([".srt"], read_srt_file)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", type=Path, help="a .srt file (or a folder with some)")
    parser.add_argument("--load", action="store_true", help="load it into the configured Neo4j (light mode)")
    args = parser.parse_args(argv)
    register()
    from kag_neo4j.builder.readers import read_path
    from kag_neo4j.builder.split import split_document

    for document in read_path(args.path):
        print(f"{document.id}  {document.title!r}  {document.metadata['cues']} cues")
        for chunk in split_document(document):
            print(f"  {chunk.id}: {chunk.text[:70]}")
    if args.load:
        from kag_neo4j.builder.pipeline import LoadOptions, load
        from kag_neo4j.config import load_settings
        from kag_neo4j.store.database import Database

        settings = load_settings()
        with Database.connect(settings) as db:
            summary = load([args.path], db, settings, LoadOptions(mode="light"))
        print(f"loaded {summary.documents_loaded} document(s), {summary.chunks} chunks")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Markdown files: the text is kept as Markdown so the splitter can follow its headings."""

from __future__ import annotations

import re
from pathlib import Path

from kag_neo4j.builder.records import SourceDocument
from kag_neo4j.errors import ReadError

from .common import ReadContext, check_line_length, clean_text, encoding_metadata, make_document, read_text

_FRONT_MATTER = re.compile(r"\A---\n(.*?)\n(?:---|\.\.\.)(?:\n|\Z)", re.DOTALL)
_H1 = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.MULTILINE)


def split_front_matter(text: str) -> tuple[dict[str, str], str]:
    """YAML-style front matter (``---`` block) as flat ``key: value`` pairs, and the rest."""
    match = _FRONT_MATTER.match(text)
    if not match:
        return {}, text
    meta: dict[str, str] = {}
    for line in match.group(1).splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() and not key.startswith((" ", "\t")):
            meta[key.strip()] = value.strip().strip("\"'")
    return meta, text[match.end() :]


def markdown_title(text: str) -> str | None:
    """The first level-1 ATX heading, if any."""
    match = _H1.search(text)
    return match.group(1).strip() if match else None


def read_markdown_file(path: Path, ctx: ReadContext) -> list[SourceDocument]:
    decoded = read_text(path)
    check_line_length(path, decoded.text, ctx)
    front, body = split_front_matter(clean_text(decoded.text))
    body = body.strip()
    if not body:
        raise ReadError(path, "has no text (only front matter or blank lines); give it content")
    metadata = encoding_metadata(decoded)
    if front:
        metadata["front_matter"] = front
    title = front.get("title") or markdown_title(body) or path.stem
    return [
        make_document(path, text=body, media_type="text/markdown", title=title, metadata=metadata, id_key=ctx.id_key)
    ]

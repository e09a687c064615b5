"""HTML files with the standard library's ``html.parser``: headings kept as Markdown headings."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

from kag_neo4j.builder.records import SourceDocument
from kag_neo4j.errors import ReadError

from .common import ReadContext, check_line_length, clean_text, encoding_metadata, make_document, read_text

_SKIP = frozenset({"script", "style", "noscript", "template", "svg", "head", "nav", "footer", "iframe", "object"})
_BLOCK = frozenset(
    {
        "p",
        "div",
        "section",
        "article",
        "main",
        "header",
        "aside",
        "blockquote",
        "pre",
        "ul",
        "ol",
        "table",
        "tr",
        "dl",
        "dt",
        "dd",
        "figure",
        "figcaption",
        "form",
        "fieldset",
        "address",
        "hr",
        "caption",
        "details",
        "summary",
    }
)
_HEADINGS = {f"h{level}": level for level in range(1, 7)}
_VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "embed", "source", "wbr"})


class _TextExtractor(HTMLParser):
    """Collects visible text as blocks; ``<h1>``..``<h6>`` become ``#`` headings."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[str] = []
        self.title = ""
        self._buffer: list[str] = []
        self._skip_depth = 0
        self._in_title = False
        self._heading: int | None = None
        self._pre = 0

    def _flush(self) -> None:
        raw = "".join(self._buffer)
        self._buffer = []
        if self._pre:
            text = raw.strip("\n")
        else:
            text = re.sub(r"[ \t\r\f\v]*\n[ \t\r\f\v]*", "\n", re.sub(r"[ \t\r\f\v]+", " ", raw)).strip()
        if not text:
            return
        if self._heading is not None:
            text = "#" * self._heading + " " + re.sub(r"\s+", " ", text)
        elif text.startswith("- ") and self.blocks and self.blocks[-1].split("\n")[-1].startswith("- "):
            self.blocks[-1] += "\n" + text  # consecutive list items stay one block
            return
        self.blocks.append(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
            return
        if tag in _SKIP and tag not in _VOID:
            self._skip_depth += 1
            return
        if self._skip_depth:
            return
        if tag in _HEADINGS:
            self._flush()
            self._heading = _HEADINGS[tag]
        elif tag == "br":
            self._buffer.append("\n")
        elif tag == "li":
            self._flush()
            self._buffer.append("- ")
        elif tag in ("td", "th"):
            self._buffer.append(" | " if self._buffer and "".join(self._buffer).strip() else "")
        elif tag in _BLOCK:
            if tag == "pre":
                self._flush()
                self._pre += 1
            else:
                self._flush()

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
            return
        if tag in _SKIP:
            self._skip_depth = max(0, self._skip_depth - 1)
            return
        if self._skip_depth:
            return
        if tag in _HEADINGS:
            self._flush()
            self._heading = None
        elif tag == "pre":
            self._flush()
            self._pre = max(0, self._pre - 1)
        elif tag in _BLOCK or tag == "li":
            self._flush()

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not self._skip_depth:
            self._buffer.append(data)

    def close(self) -> None:
        super().close()
        self._flush()


def html_to_text(markup: str) -> tuple[str, str]:
    """``(title, text)`` of an HTML page; headings as ``#`` lines, blocks separated by blank lines."""
    parser = _TextExtractor()
    parser.feed(markup)
    parser.close()
    return re.sub(r"\s+", " ", parser.title).strip(), clean_text("\n\n".join(parser.blocks))


def read_html_file(path: Path, ctx: ReadContext) -> list[SourceDocument]:
    decoded = read_text(path)
    title, text = html_to_text(decoded.text)
    check_line_length(path, text, ctx)
    if not text:
        raise ReadError(path, "has no visible text (only markup or scripts); leave it out of the load")
    if not title:
        first = next((line for line in text.split("\n") if line.startswith("# ")), "")
        title = first[2:].strip()
    metadata = encoding_metadata(decoded)
    if any(line.startswith("#") for line in text.split("\n")):
        metadata["outline"] = "markdown"
    return [
        make_document(
            path, text=text, media_type="text/html", title=title or None, metadata=metadata, id_key=ctx.id_key
        )
    ]

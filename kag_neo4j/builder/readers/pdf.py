"""PDF files via ``pypdf``: the text layer page by page; bookmarks (the outline) become headings."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

from kag_neo4j.builder.records import SourceDocument
from kag_neo4j.errors import ReadError

from .common import ReadContext, clean_text, make_document, read_bytes

_SENTENCE_END = re.compile(r"[.!?:;。！？：；\"'”’)\]]$")
_CJK_CHAR = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def _outline_entries(reader: Any) -> list[tuple[int, int, str]]:
    """``(page index, level, title)`` for every bookmark, in order."""
    from pypdf.generic import Destination

    entries: list[tuple[int, int, str]] = []

    def walk(items: list[Any], level: int) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item, level + 1)
                continue
            title = str(item.title or "").strip() if isinstance(item, Destination) else ""  # pypdf 6: Destination | list
            try:
                page = reader.get_destination_page_number(item)
            except Exception:  # a broken bookmark must not stop the read
                page = None
            if title and page is not None and page >= 0:
                entries.append((page, min(level, 6), title))

    try:
        walk(list(reader.outline), 1)
    except Exception:
        return []
    return entries


def _key(line: str) -> str:
    return re.sub(r"\s+", " ", line).strip().casefold()


def _reflow(page_text: str) -> str:
    """Join wrapped lines into paragraphs (a blank line or a short line ending a sentence breaks)."""
    lines = [line.strip() for line in page_text.replace("\r", "\n").split("\n")]
    width = max((len(line) for line in lines), default=0)
    paragraphs: list[str] = []
    current = ""
    for line in lines:
        if not line:
            if current:
                paragraphs.append(current)
                current = ""
            continue
        if line.startswith("#"):
            if current:
                paragraphs.append(current)
            paragraphs.append(line)
            current = ""
            continue
        if not current:
            current = line
        elif current.endswith("-") and line[:1].islower():
            current = current[:-1] + line
        elif _CJK_CHAR.search(current[-1:]) and _CJK_CHAR.search(line[:1]):
            current += line
        else:
            current += " " + line
        if _SENTENCE_END.search(line) and len(line) < 0.8 * width:
            paragraphs.append(current)
            current = ""
    if current:
        paragraphs.append(current)
    return "\n\n".join(paragraphs)


def _with_headings(text: str, headings: list[tuple[int, str]]) -> str:
    """Mark each bookmark title as a Markdown heading where it appears on its page (else on top)."""
    lines = text.split("\n")
    on_top: list[str] = []
    for level, title in headings:
        marker = "#" * level + " " + title
        for index, line in enumerate(lines):
            if _key(line) == _key(title):
                lines[index] = marker
                break
        else:
            on_top.append(marker)
    return "\n".join([*on_top, *lines])


def read_pdf_file(path: Path, ctx: ReadContext) -> list[SourceDocument]:
    try:
        from pypdf import PdfReader
        from pypdf.errors import PdfReadError
    except ImportError as exc:  # pragma: no cover - pypdf is a dependency
        raise ReadError(path, "reading PDF needs pypdf: pip install 'pypdf>=5,<7'") from exc
    data = read_bytes(path)
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise ReadError(path, "is encrypted with a password; decrypt it first (e.g. qpdf --decrypt)")
        outline = _outline_entries(reader)
        pages: list[str] = []
        for number, page in enumerate(reader.pages):
            raw = page.extract_text() or ""
            headings = [(level, title) for page_no, level, title in outline if page_no == number]
            raw = _with_headings(raw, headings) if headings else raw
            pages.append(_reflow(raw))
        title = str(reader.metadata.get("/Title") or "").strip() if reader.metadata else ""
    except ReadError:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, OSError, AttributeError) as exc:
        raise ReadError(path, f"is not a readable PDF ({exc}); re-export it or convert it to text") from exc
    text = clean_text("\n\n".join(page for page in pages if page.strip()))
    if not text:
        raise ReadError(
            path,
            "has no text layer (a scanned PDF?); run OCR on it first (e.g. ocrmypdf) or convert it to text",
        )
    metadata: dict[str, Any] = {"pages": len(pages)}
    if outline:
        metadata["outline"] = "markdown"
    return [
        make_document(
            path, text=text, media_type="application/pdf", title=title or None, metadata=metadata, id_key=ctx.id_key
        )
    ]

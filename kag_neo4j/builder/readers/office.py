"""Word ``.docx`` files via ``python-docx``: heading styles become Markdown headings, tables rows."""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path
from typing import Any

from kag_neo4j.builder.records import SourceDocument
from kag_neo4j.errors import ReadError

from .common import ReadContext, clean_text, make_document, read_bytes

_HEADING_STYLE = re.compile(r"^(?:heading|标题)\s*(\d)$", re.IGNORECASE)


def _heading_level(style_name: str) -> int | None:
    name = style_name.strip()
    if name.casefold() == "title":
        return 1
    match = _HEADING_STYLE.match(name)
    if match:
        return min(max(int(match.group(1)), 1), 6)
    return None


def _paragraph_text(paragraph: Any) -> str:
    text = re.sub(r"[ \t]+", " ", paragraph.text).strip()
    if not text:
        return ""
    level = _heading_level(paragraph.style.name if paragraph.style is not None else "")
    if level is not None:
        return "#" * level + " " + text.replace("\n", " ")
    style = (paragraph.style.name if paragraph.style is not None else "").casefold()
    if style.startswith("list"):
        return "- " + text
    return text


def _table_text(table: Any) -> str:
    rows = []
    for row in table.rows:
        cells: list[str] = []
        for cell in row.cells:
            value = re.sub(r"\s+", " ", cell.text).strip()
            if not cells or cells[-1] != value:  # merged cells repeat their text
                cells.append(value)
        if any(cells):
            rows.append(" | ".join(cells))
    return "\n".join(rows)


def read_docx_file(path: Path, ctx: ReadContext) -> list[SourceDocument]:
    try:
        import docx
        from docx.table import Table
        from docx.text.paragraph import Paragraph
    except ImportError as exc:
        raise ReadError(path, "reading .docx needs python-docx: pip install 'python-docx>=1.1,<2'") from exc
    data = read_bytes(path)
    try:
        document = docx.Document(io.BytesIO(data))
    except (zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise ReadError(path, f"is not a readable .docx ({exc}); re-save it from Word/LibreOffice as .docx") from exc
    except Exception as exc:  # python-docx raises assorted errors on corrupt packages
        raise ReadError(path, f"is not a readable .docx ({type(exc).__name__}: {exc}); re-save it as .docx") from exc
    blocks: list[str] = []
    has_headings = False
    body = document.element.body
    for child in body.iterchildren():
        tag = child.tag.rsplit("}", 1)[-1]
        if tag == "p":
            text = _paragraph_text(Paragraph(child, document))
            has_headings = has_headings or text.startswith("#")
        elif tag == "tbl":
            text = _table_text(Table(child, document))
        else:
            continue
        if text:
            blocks.append(text)
    text = clean_text("\n\n".join(blocks))
    if not text:
        raise ReadError(path, "has no text; give it content or leave it out of the load")
    title = (document.core_properties.title or "").strip()
    if not title:
        first = next((block for block in blocks if block.startswith("# ")), None)
        title = first[2:].strip() if first else ""
    metadata: dict[str, Any] = {}
    if has_headings:
        metadata["outline"] = "markdown"
    return [
        make_document(
            path,
            text=text,
            media_type="application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            title=title or None,
            metadata=metadata,
            id_key=ctx.id_key,
        )
    ]

"""Plain text files (``.txt`` and anything else that decodes as text)."""

from __future__ import annotations

from pathlib import Path

from kag_neo4j.builder.records import SourceDocument
from kag_neo4j.errors import ReadError

from .common import ReadContext, check_line_length, clean_text, encoding_metadata, make_document, read_text


def read_text_file(path: Path, ctx: ReadContext) -> list[SourceDocument]:
    decoded = read_text(path)
    check_line_length(path, decoded.text, ctx)
    text = clean_text(decoded.text)
    if not text:
        raise ReadError(path, "has no text after decoding; remove it from the load or give it content")
    return [
        make_document(path, text=text, media_type="text/plain", metadata=encoding_metadata(decoded), id_key=ctx.id_key)
    ]

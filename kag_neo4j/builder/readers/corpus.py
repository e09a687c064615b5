"""JSON and JSON-lines files: passage corpora (one document per passage) or structured records.

Shapes recognised (checked in this order):

* HotpotQA: ``{title: [sentence, ...]}`` (or ``{title: text}``) - one passage per title;
* a wrapper ``{"data"|"documents"|"passages"|"corpus"|"records"|...: [...]}`` - its list is read;
* MuSiQue / 2Wiki / generic passages: ``[{title, text}, ...]`` - any object with a text field
  (``text``, ``content``, ``body``, ``paragraph_text``, ``passage``, ``contents``);
* a list of strings - one passage each;
* any other list of objects - structured records (one document holding ``records``), e.g. KAG's
  ``nodes.json`` ``[{id, name, label, properties}]`` and ``edges.json`` ``[{from, to, label}]``.

JSON lines: each line is one object, then the same rules apply to the list of lines; a line that
is not valid JSON is reported by number and skipped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kag_neo4j.builder.records import SourceDocument
from kag_neo4j.errors import ReadError

from .common import IdAllocator, ReadContext, clean_text, encoding_metadata, make_document, read_text, slug, stable_id

TEXT_FIELDS: tuple[str, ...] = ("text", "content", "body", "paragraph_text", "passage", "contents", "document")
TITLE_FIELDS: tuple[str, ...] = ("title", "name", "heading", "subject")
ID_FIELDS: tuple[str, ...] = ("id", "_id", "doc_id", "docid", "passage_id", "idx")
WRAPPER_FIELDS: tuple[str, ...] = ("data", "documents", "docs", "passages", "corpus", "records", "items", "rows")


def _first(record: dict[str, Any], fields: tuple[str, ...]) -> str | None:
    lowered = {str(key).casefold(): key for key in record}
    for name in fields:
        key = lowered.get(name)
        if key is not None and record[key] is not None and not isinstance(record[key], (dict, list)):
            value = str(record[key]).strip()
            if value:
                return value
    return None


def _text_field(record: dict[str, Any]) -> str | None:
    lowered = {str(key).casefold(): key for key in record}
    for name in TEXT_FIELDS:
        key = lowered.get(name)
        if key is None:
            continue
        value = record[key]
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            return join_sentences(value)
        if isinstance(value, str):
            return value
    return None


def join_sentences(sentences: list[str]) -> str:
    """Join HotpotQA-style sentences (which carry their own leading spaces) into one text."""
    parts: list[str] = []
    for sentence in sentences:
        if not parts or sentence[:1].isspace() or not sentence:
            parts.append(sentence)
        else:
            parts.append(" " + sentence)
    return "".join(parts).strip()


def _is_hotpot(value: Any) -> bool:
    """``{title: [sentences]}``, or ``{title: text}`` with passage-sized texts and no field names."""
    if not isinstance(value, dict) or not value:
        return False
    if all(isinstance(item, list) and item and all(isinstance(s, str) for s in item) for item in value.values()):
        return True
    known = {*TEXT_FIELDS, *TITLE_FIELDS, *ID_FIELDS, *WRAPPER_FIELDS}
    if not all(isinstance(item, str) for item in value.values()):
        return False
    if any(str(key).casefold() in known for key in value):
        return False
    return sum(len(item) for item in value.values()) / len(value) >= 20


def _unwrap(value: Any) -> Any:
    if isinstance(value, dict):
        for key in value:
            if str(key).casefold() in WRAPPER_FIELDS and isinstance(value[key], list):
                return value[key]
    return value


def _is_passage_list(items: list[Any]) -> bool:
    objects = [item for item in items if isinstance(item, dict)]
    if not objects:
        return False
    with_text = sum(1 for item in objects if _text_field(item) is not None)
    return with_text / len(objects) >= 0.5


def _scalar_metadata(record: dict[str, Any], skip: set[str]) -> dict[str, Any]:
    return {
        str(key): value
        for key, value in record.items()
        if str(key).casefold() not in skip and isinstance(value, (str, int, float, bool))
    }


class _PassageBuilder:
    def __init__(self, path: Path, ctx: ReadContext, metadata: dict[str, Any]) -> None:
        self.path = path
        self.ctx = ctx
        self.metadata = metadata
        self.ids = IdAllocator()
        self.documents: list[SourceDocument] = []

    def add(self, position: str, title: str, text: str, record_id: str | None, extra: dict[str, Any]) -> None:
        text = clean_text(text)
        if not text:
            self.ctx.warn(f"{self.path}#{position}: passage {title!r} has no text; skipped")
            return
        base = slug(record_id, limit=96) if record_id is not None else stable_id(title, text)
        doc_id = self.ids.allocate(base)
        self.documents.append(
            make_document(
                self.path,
                text=text,
                media_type="text/plain",
                title=title,
                doc_id=doc_id,
                source=f"{self.path}#{position}",
                metadata={**self.metadata, **extra},
            )
        )


def _passages_from_hotpot(
    path: Path, ctx: ReadContext, value: dict[str, Any], meta: dict[str, Any]
) -> list[SourceDocument]:
    builder = _PassageBuilder(path, ctx, meta)
    for index, (title, body) in enumerate(value.items()):
        text = join_sentences(body) if isinstance(body, list) else body
        extra = {"sentences": len(body)} if isinstance(body, list) else {}
        builder.add(str(index), str(title), text, None, extra)
    return builder.documents


def _passages_from_list(
    path: Path, ctx: ReadContext, items: list[Any], meta: dict[str, Any], line_numbers: list[int] | None
) -> list[SourceDocument]:
    builder = _PassageBuilder(path, ctx, meta)
    for index, item in enumerate(items):
        position = str(line_numbers[index] if line_numbers else index)
        if isinstance(item, str):
            builder.add(position, f"{path.stem} {position}", item, None, {})
            continue
        if not isinstance(item, dict):
            ctx.warn(f"{path}#{position}: expected an object with a text field, got {type(item).__name__}; skipped")
            continue
        text = _text_field(item)
        if text is None:
            ctx.warn(f"{path}#{position}: object has no text field ({', '.join(TEXT_FIELDS)}); skipped")
            continue
        title = _first(item, TITLE_FIELDS) or f"{path.stem} {position}"
        record_id = _first(item, ID_FIELDS)
        extra = _scalar_metadata(item, {*TEXT_FIELDS, *TITLE_FIELDS})
        builder.add(position, title, text, record_id, extra)
    return builder.documents


def _records_document(path: Path, ctx: ReadContext, items: list[Any], meta: dict[str, Any]) -> list[SourceDocument]:
    records = [item for item in items if isinstance(item, dict)]
    dropped = len(items) - len(records)
    if dropped:
        ctx.warn(f"{path}: {dropped} item(s) are not JSON objects and were skipped")
    if not records:
        raise ReadError(path, "holds no JSON objects to load; expected passages [{title, text}] or records [{...}]")
    return [
        make_document(
            path,
            text="",
            media_type="application/json",
            title=path.stem,
            metadata={**meta, "rows": len(records)},
            records=records,
            record_type=ctx.options.record_type or path.stem,
            id_key=ctx.id_key,
        )
    ]


def documents_from_json_value(
    path: Path, ctx: ReadContext, value: Any, meta: dict[str, Any], line_numbers: list[int] | None = None
) -> list[SourceDocument]:
    """Classify a parsed JSON value (see the module docstring) and build its documents."""
    if _is_hotpot(value):
        return _passages_from_hotpot(path, ctx, value, meta)
    value = _unwrap(value)
    if isinstance(value, dict):
        text = _text_field(value)
        if text is not None:
            return _passages_from_list(path, ctx, [value], meta, line_numbers)
        value = [value]
    if not isinstance(value, list):
        raise ReadError(path, f"holds a JSON {type(value).__name__}; expected a list of passages or records")
    if not value:
        raise ReadError(path, "holds an empty JSON list; give it passages or records")
    if all(isinstance(item, str) for item in value) or _is_passage_list(value):
        documents = _passages_from_list(path, ctx, value, meta, line_numbers)
        if not documents:
            raise ReadError(path, "has no passage with text; every item was empty")
        return documents
    return _records_document(path, ctx, value, meta)


def read_json_file(path: Path, ctx: ReadContext) -> list[SourceDocument]:
    decoded = read_text(path)
    try:
        value = json.loads(decoded.text)
    except json.JSONDecodeError as exc:
        raise ReadError(
            path,
            f"is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); fix the file "
            "(one JSON object per line belongs in a .jsonl file)",
        ) from exc
    return documents_from_json_value(path, ctx, value, encoding_metadata(decoded))


def read_jsonl_file(path: Path, ctx: ReadContext) -> list[SourceDocument]:
    decoded = read_text(path)
    items: list[Any] = []
    numbers: list[int] = []
    bad: list[int] = []
    for number, line in enumerate(decoded.text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            items.append(json.loads(line))
            numbers.append(number)
        except json.JSONDecodeError:
            bad.append(number)
    if bad:
        shown = ", ".join(str(n) for n in bad[:10]) + (" ..." if len(bad) > 10 else "")
        ctx.warn(f"{path}: {len(bad)} line(s) are not valid JSON and were skipped (line {shown})")
    if not items:
        raise ReadError(path, "has no valid JSON line; each line must hold one JSON object")
    return documents_from_json_value(path, ctx, items, encoding_metadata(decoded), numbers)

"""Helpers every reader shares: decoding bytes, stable ids, building a :class:`SourceDocument`."""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from kag_neo4j.builder.readers.mapping import MappingFile
from kag_neo4j.builder.records import SourceDocument
from kag_neo4j.errors import ReadError

#: How much of a file is looked at to tell text from binary.
_SNIFF = 8192

_DECLARED = re.compile(
    rb"""(?:charset\s*=\s*["']?|encoding\s*=\s*["']|coding[:=]\s*)([A-Za-z0-9_.:-]{2,40})""",
    re.IGNORECASE,
)
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]")


class ReadOptions(BaseModel):
    """How files are read. ``record_type`` names the schema type of structured rows (CSV/JSON
    records); without it the file stem is used. ``csv_mode``: ``auto`` (rows with a text column
    become passages, other rows records), ``records``, ``passages`` or ``text`` (the whole table
    as one text document). ``mapping``: what CSV files whose name or columns differ from the
    convention hold (:mod:`kag_neo4j.builder.readers.mapping`). ``schema_types``: type names of
    the load's schema; a table named after one (``Disease.csv``) is read as records even when it
    has a text column."""

    record_type: str | None = None
    csv_mode: Literal["auto", "records", "passages", "text"] = "auto"
    mapping: MappingFile | None = None
    schema_types: frozenset[str] = frozenset()
    #: a text, Markdown or HTML file with a longer line (or HTML paragraph) is refused: that is
    #: machine data (minified, encoded, a dump), not prose
    max_line_chars: int = Field(default=1_000_000, ge=1)


class ReadContext:
    """What one file read needs besides its path: options, the id key and a warning sink."""

    def __init__(self, options: ReadOptions | None = None, *, id_key: str | None = None) -> None:
        self.options = options or ReadOptions()
        self.id_key = id_key
        self.warnings: list[str] = []

    def warn(self, message: str) -> None:
        self.warnings.append(message)


class Decoded(BaseModel):
    """Text decoded from bytes, with the encoding used and any warning about it."""

    text: str
    encoding: str
    warnings: list[str] = Field(default_factory=list)


def looks_binary(data: bytes) -> bool:
    """True when the head of ``data`` holds NUL bytes or many control bytes (and no UTF-16 BOM)."""
    head = data[:_SNIFF]
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return False
    if b"\x00" in head:
        return True
    control = sum(1 for byte in head if byte < 32 and byte not in (9, 10, 12, 13, 27))
    return bool(head) and control / len(head) > 0.10


def _declared_encoding(data: bytes) -> str | None:
    match = _DECLARED.search(data[:2048])
    if not match:
        return None
    name = match.group(1).decode("ascii", "replace").lower()
    try:
        "".encode(name)
    except LookupError:
        return None
    return name


def decode_bytes(data: bytes, path: Path | str) -> Decoded:
    """Decode a text file: BOMs, UTF-8, a declared charset, then GB18030 or CP1252 (reported).

    Raises :class:`ReadError` for binary content.
    """
    if looks_binary(data):
        raise ReadError(
            path,
            "looks like a binary file, not text (NUL or control bytes); "
            "convert it to txt/md/pdf/docx/html/json/csv or leave it out of the load",
        )
    if data.startswith(b"\xef\xbb\xbf"):
        return Decoded(text=data[3:].decode("utf-8", errors="replace"), encoding="utf-8-sig")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return Decoded(text=data.decode("utf-16"), encoding="utf-16")
        except UnicodeDecodeError as exc:
            raise ReadError(path, f"has a UTF-16 byte-order mark but is not valid UTF-16 ({exc.reason})") from exc
    try:
        return Decoded(text=data.decode("utf-8"), encoding="utf-8")
    except UnicodeDecodeError:
        pass
    declared = _declared_encoding(data)
    if declared and declared.replace("-", "").replace("_", "") not in ("utf8", "utf8sig"):
        try:
            return Decoded(
                text=data.decode(declared),
                encoding=declared,
                warnings=[f"not UTF-8; decoded with its declared charset {declared}"],
            )
        except (UnicodeDecodeError, LookupError):
            pass
    fix = "save it as UTF-8 to silence this warning"
    try:
        text = data.decode("gb18030")
    except UnicodeDecodeError:
        text = None
    if text is not None:
        non_ascii = [ch for ch in text if ord(ch) > 127]
        if non_ascii and sum(1 for ch in non_ascii if _CJK.match(ch)) / len(non_ascii) > 0.8:
            return Decoded(text=text, encoding="gb18030", warnings=[f"not UTF-8; decoded as GB18030 ({fix})"])
    try:
        return Decoded(
            text=data.decode("cp1252"), encoding="cp1252", warnings=[f"not UTF-8; decoded as CP1252 ({fix})"]
        )
    except UnicodeDecodeError:
        return Decoded(
            text=data.decode("latin-1"), encoding="latin-1", warnings=[f"not UTF-8; decoded as Latin-1 ({fix})"]
        )


def read_bytes(path: Path) -> bytes:
    """The bytes of ``path``; a :class:`ReadError` names a missing, unreadable or empty file."""
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise ReadError(path, "does not exist; check the path") from exc
    except IsADirectoryError as exc:
        raise ReadError(path, "is a directory; pass its files or read it with read_path") from exc
    except OSError as exc:
        raise ReadError(path, f"cannot be read ({exc.strerror or exc}); check its permissions") from exc
    if not data.strip():
        raise ReadError(path, "is empty; remove it from the load or give it content")
    return data


def read_text(path: Path) -> Decoded:
    """Read and decode a text file (see :func:`decode_bytes`)."""
    return decode_bytes(read_bytes(path), path)


def longest_line(text: str) -> tuple[int, int]:
    """``(length, 1-based line number)`` of the longest line of ``text``."""
    best, best_line, start, number = 0, 1, 0, 1
    while True:
        end = text.find("\n", start)
        stop = len(text) if end < 0 else end
        if stop - start > best:
            best, best_line = stop - start, number
        if end < 0:
            return best, best_line
        start, number = end + 1, number + 1


def check_line_length(path: Path, text: str, ctx: ReadContext) -> None:
    """Refuse prose formats whose text holds a line longer than ``max_line_chars``."""
    limit = ctx.options.max_line_chars
    if len(text) <= limit:
        return
    length, line = longest_line(text)
    if length > limit:
        raise ReadError(
            path,
            f"has a line of {length:,} characters without a line break (line {line}; the limit is "
            f"{limit:,}): that is machine data, not prose; break it into lines and paragraphs, or "
            "load data as .json/.jsonl/.csv",
        )


def sha256_text(*parts: str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()


def slug(text: str, limit: int = 48) -> str:
    """A readable id fragment: NFKC, lower case, runs of non-word characters as ``-``.

    Unicode letters (Chinese titles) are kept; ``#`` can never appear (chunk ids use it).
    """
    value = unicodedata.normalize("NFKC", text).casefold()
    value = re.sub(r"[\W_]+", "-", value, flags=re.UNICODE).strip("-")
    return value[:limit].strip("-") or "doc"


def stable_id(title: str, *content: str, digits: int = 10) -> str:
    """``<slug of title>-<short hash of title and content>``."""
    return f"{slug(title)}-{sha256_text(title, *content)[:digits]}"


class IdAllocator:
    """Hands out ids, disambiguating repeats deterministically (``id``, ``id~2``, ``id~3``...)."""

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}

    def allocate(self, candidate: str) -> str:
        count = self._seen.get(candidate, 0) + 1
        self._seen[candidate] = count
        return candidate if count == 1 else f"{candidate}~{count}"


def file_document_id(path: Path, key: str | None = None) -> str:
    """The id of a whole-file document: slug of the stem + hash of ``key`` (default: the file name).

    ``read_path`` passes the path relative to the folder being loaded, so ids do not depend on
    where the folder sits on disk.
    """
    return stable_id(path.stem, key if key is not None else path.name, digits=8)


def make_document(
    path: Path,
    *,
    text: str,
    media_type: str,
    title: str | None = None,
    doc_id: str | None = None,
    source: str | None = None,
    metadata: dict[str, Any] | None = None,
    records: Iterable[dict[str, Any]] = (),
    record_type: str | None = None,
    id_key: str | None = None,
) -> SourceDocument:
    """Build a :class:`SourceDocument` for a file (or a part of it, with ``source``/``doc_id``)."""
    rows = list(records)
    final_title = (title or path.stem).strip() or path.stem
    content = text if text else json.dumps(rows, ensure_ascii=False, sort_keys=True, default=str)
    return SourceDocument(
        id=doc_id or file_document_id(path, id_key),
        title=final_title,
        source=source or str(path),
        text=text,
        sha256=sha256_text(final_title, content),
        media_type=media_type,
        metadata=dict(metadata or {}),
        records=rows,
        record_type=record_type,
    )


def encoding_metadata(decoded: Decoded) -> dict[str, Any]:
    meta: dict[str, Any] = {"encoding": decoded.encoding}
    if decoded.warnings:
        meta["warnings"] = list(decoded.warnings)
    return meta


def clean_text(text: str) -> str:
    """Normalise line endings, drop NULs and trailing spaces, squeeze runs of blank lines."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    return re.sub(r"\n{3,}", "\n\n", text).strip()

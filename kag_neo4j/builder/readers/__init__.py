"""Readers: files -> :class:`~kag_neo4j.builder.records.SourceDocument`.

One module per format (``text``, ``markdown``, ``pdf``, ``office`` for .docx, ``htmlpage``,
``corpus`` for JSON/JSONL, ``table`` for CSV/TSV). :func:`read_path` picks the reader from the
suffix, or from the content when the suffix is unknown, and walks folders.

A reader is a function ``(path, ctx) -> list[SourceDocument]`` (:data:`Reader`); the helpers in
:mod:`.common` (``read_text``, ``clean_text``, ``make_document``) do decoding, ids and hashes.
:func:`register_reader` adds one for new suffixes, for every later read and load of the process
(``examples/custom_reader.py`` reads ``.srt`` subtitles):

    from kag_neo4j.builder.readers import register_reader
    register_reader([".srt"], read_srt_file)

    from kag_neo4j.builder.readers import read_path, ReadReport
    report = ReadReport()
    for doc in read_path("data/", report=report):   # bad files are reported and skipped
        ...
    print(report.failures)                          # [ReadFailure(path=..., reason=...)]

Without a ``report`` a bad file raises :class:`~kag_neo4j.errors.ReadError` naming it and the fix.
Whatever a reader raises (a parser's own exception, ``RecursionError`` on absurdly nested JSON,
``MemoryError``...) becomes a ``ReadError`` for that file, so one bad file never stops a folder.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from pydantic import BaseModel, Field

from kag_neo4j.builder.records import SourceDocument
from kag_neo4j.errors import ConfigError, ReadError

from .common import ReadContext, ReadOptions, clean_text, looks_binary, make_document, read_bytes, read_text
from .corpus import read_json_file, read_jsonl_file
from .htmlpage import read_html_file
from .markdown import read_markdown_file
from .office import read_docx_file
from .pdf import read_pdf_file
from .table import read_csv_file
from .text import read_text_file

__all__ = [
    "READERS",
    "ReadContext",
    "ReadError",
    "ReadFailure",
    "ReadOptions",
    "ReadReport",
    "Reader",
    "clean_text",
    "make_document",
    "read_file",
    "read_path",
    "read_paths",
    "read_text",
    "reader_for",
    "register_reader",
]

log = logging.getLogger(__name__)

Reader = Callable[[Path, ReadContext], list[SourceDocument]]

#: suffix (lower case) -> reader
READERS: dict[str, Reader] = {
    ".txt": read_text_file,
    ".text": read_text_file,
    ".md": read_markdown_file,
    ".markdown": read_markdown_file,
    ".pdf": read_pdf_file,
    ".docx": read_docx_file,
    ".html": read_html_file,
    ".htm": read_html_file,
    ".xhtml": read_html_file,
    ".json": read_json_file,
    ".jsonl": read_jsonl_file,
    ".ndjson": read_jsonl_file,
    ".csv": read_csv_file,
    ".tsv": read_csv_file,
}

#: suffixes that are certainly not documents; named in the error instead of sniffed
_KNOWN_UNSUPPORTED = {
    ".doc": "legacy Word .doc is not supported; save it as .docx",
    ".xls": "spreadsheets are not read directly; export the sheet as .csv",
    ".xlsx": "spreadsheets are not read directly; export the sheet as .csv",
    ".ppt": "presentations are not supported; export them as PDF",
    ".pptx": "presentations are not supported; export them as PDF",
    ".rtf": "RTF is not supported; save it as .docx or .txt",
    ".zip": "is a ZIP archive, not a document; unpack it and load its files",
}


def register_reader(suffixes: Iterable[str], reader: Reader, *, replace: bool = False) -> None:
    """Read files with these suffixes (``".srt"``; any case) with ``reader`` from now on.

    A suffix that already has a reader is refused unless ``replace=True``; a suffix listed as
    unsupported (``.rtf``...) becomes supported.
    """
    wanted = [suffix.casefold() for suffix in suffixes]
    if not wanted:
        raise ConfigError("register_reader needs at least one suffix, such as '.srt'")
    for suffix in wanted:
        if not suffix.startswith(".") or len(suffix) < 2 or any(c in suffix for c in "/\\ "):
            raise ConfigError(f"reader suffix {suffix!r} is not a file suffix; write it like '.srt'")
        if suffix in READERS and READERS[suffix] is not reader and not replace:
            raise ConfigError(f"{suffix} files already have a reader; pass replace=True to use yours instead")
    for suffix in wanted:
        READERS[suffix] = reader
        _KNOWN_UNSUPPORTED.pop(suffix, None)


class ReadFailure(BaseModel):
    """A file that was skipped, and why (the reason names the fix)."""

    path: str
    reason: str


class ReadReport(BaseModel):
    """What a read produced: counts, skipped files, and warnings (encodings, bad lines...)."""

    files: int = 0
    documents: int = 0
    failures: list[ReadFailure] = Field(default_factory=list)
    #: files in a folder that were left out because no reader handles their type
    skipped: list[ReadFailure] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures


def _sniff(path: Path) -> Reader:
    data = read_bytes(path)
    head = data[:4096]
    stripped = head.lstrip()
    if head.startswith(b"%PDF-"):
        return read_pdf_file
    if head.startswith(b"PK\x03\x04"):
        if b"word/" in data[:65536] or b"[Content_Types].xml" in data[:65536]:
            return read_docx_file
        raise ReadError(path, "is a ZIP archive, not a document; unpack it and load its files")
    if looks_binary(data):
        raise ReadError(
            path,
            f"has an unsupported type ({path.suffix or 'no suffix'}) and binary content; "
            f"supported: {', '.join(sorted(READERS))}",
        )
    lowered = stripped[:512].lower()
    if lowered.startswith((b"<!doctype html", b"<html")) or b"<html" in lowered:
        return read_html_file
    if stripped.startswith((b"{", b"[")):
        first_line = stripped.split(b"\n", 1)[0].strip()
        if stripped.startswith(b"{") and first_line.endswith(b"}") and b"\n{" in stripped:
            return read_jsonl_file
        return read_json_file
    return read_text_file


def reader_for(path: Path) -> Reader:
    """The reader for ``path``: by suffix, else by content."""
    suffix = path.suffix.casefold()
    if suffix in READERS:
        return READERS[suffix]
    if suffix in _KNOWN_UNSUPPORTED:
        raise ReadError(path, _KNOWN_UNSUPPORTED[suffix])
    return _sniff(path)


def _read_one(file: Path, ctx: ReadContext) -> list[SourceDocument]:
    """The documents of ``file``; any exception of its reader is raised as a :class:`ReadError`."""
    try:
        return reader_for(file)(file, ctx)
    except ReadError:
        raise
    except RecursionError as exc:
        raise ReadError(file, "is nested too deeply to parse (RecursionError); flatten its structure") from exc
    except MemoryError as exc:
        raise ReadError(file, "is too large to read in the memory available (MemoryError); split it into smaller files") from exc
    except Exception as exc:  # noqa: BLE001 - a reader's library may raise anything on a corrupt file
        detail = str(exc).strip().replace("\n", " ")[:200]
        raise ReadError(
            file,
            f"could not be read ({type(exc).__name__}{': ' + detail if detail else ''}); the file is probably "
            "corrupt: re-export or re-save it, or leave it out of the load",
        ) from exc


def read_file(
    path: Path | str, *, options: ReadOptions | None = None, id_key: str | None = None, report: ReadReport | None = None
) -> list[SourceDocument]:
    """All documents of one file. Raises :class:`ReadError` (or records it in ``report``)."""
    file = Path(path)
    ctx = ReadContext(options, id_key=id_key)
    try:
        if not file.exists():
            raise ReadError(file, "does not exist; check the path")
        documents = _read_one(file, ctx)
    except ReadError as exc:
        if report is None:
            raise
        report.files += 1
        report.failures.append(ReadFailure(path=exc.path, reason=exc.reason))
        log.warning("skipped %s", exc)
        return []
    warnings = list(ctx.warnings)
    for document in documents:
        warnings.extend(f"{file}: {message}" for message in document.metadata.get("warnings", []))
    for message in dict.fromkeys(warnings):
        log.warning("%s", message)
    if report is not None:
        report.files += 1
        report.documents += len(documents)
        report.warnings.extend(dict.fromkeys(warnings))
    return documents


def _walk(folder: Path) -> list[Path]:
    files = []
    for candidate in sorted(folder.rglob("*")):
        relative = candidate.relative_to(folder)
        if any(part.startswith((".", "_")) and part not in (".", "..") for part in relative.parts):
            continue  # hidden files and folders (.git, .DS_Store, __pycache__)
        if candidate.is_file():
            files.append(candidate)
    return files


def read_path(
    path: Path | str,
    *,
    record_type: str | None = None,
    options: ReadOptions | None = None,
    report: ReadReport | None = None,
) -> Iterator[SourceDocument]:
    """Documents of a file, or of every file under a folder (sorted; hidden files and files of
    unknown type skipped - a file named explicitly is read by its content instead).

    Ids of whole-file documents hash the path relative to the folder given (or the file name for
    a single file), so they do not depend on where the data sits. With ``report`` every bad file
    is recorded and skipped; without it the first bad file raises :class:`ReadError`.
    """
    root = Path(path)
    opts = options or ReadOptions()
    if record_type is not None:
        opts = opts.model_copy(update={"record_type": record_type})
    if root.is_dir():
        files = _walk(root)
        if not files and report is None:
            raise ReadError(root, "is an empty folder; put documents in it")
        for file in files:
            suffix = file.suffix.casefold()
            if suffix not in READERS and suffix not in _KNOWN_UNSUPPORTED:
                reason = f"no reader for {file.suffix or 'files without a suffix'} in a folder load; name the file explicitly to read it as text"
                log.info("skipped %s: %s", file, reason)
                if report is not None:
                    report.skipped.append(ReadFailure(path=str(file), reason=reason))
                continue
            yield from read_file(file, options=opts, id_key=file.relative_to(root).as_posix(), report=report)
        return
    yield from read_file(root, options=opts, report=report)


def read_paths(
    paths: Iterable[Path | str], *, options: ReadOptions | None = None, report: ReadReport | None = None
) -> Iterator[SourceDocument]:
    """:func:`read_path` over several paths; document ids must stay unique across them."""
    seen: dict[str, str] = {}
    for path in paths:
        for document in read_path(path, options=options, report=report):
            if document.id in seen:
                message = (
                    f"{document.source}: document id {document.id!r} repeats {seen[document.id]}; "
                    "the later one is skipped (give the files distinct names or ids)"
                )
                if report is None:
                    raise ReadError(document.source, message)
                report.warnings.append(message)
                continue
            seen[document.id] = document.source
            yield document

"""CSV / TSV files: rows become structured records (KAG's structured chain), passages, or text.

* ``records`` (default when no text column, or when the file stem is a type of the load's
  schema): one document whose ``records`` are the rows, with ``record_type`` from a mapping file,
  the options (``--type``) or the file stem (``Company.csv`` -> ``Company``;
  ``Company_fundTrans_Company.csv`` is an edge table, ``CompanyUpdate.csv`` an update of
  ``Company``, see :mod:`kag_neo4j.builder.extract.structured`). A mapping file
  (:mod:`kag_neo4j.builder.readers.mapping`) renames columns, sets the type, the mode or ``update``.
* ``passages`` (default when a text column such as ``text``/``content`` exists): one document
  per row, titled by its ``title``/``name`` column.
* ``text``: the whole table as one text document, one ``column: value; ...`` line per row.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from kag_neo4j.builder.records import SourceDocument
from kag_neo4j.errors import ReadError

from .common import ReadContext, encoding_metadata, make_document, read_text
from .corpus import ID_FIELDS, TEXT_FIELDS, TITLE_FIELDS, _PassageBuilder

csv.field_size_limit(16 * 1024 * 1024)


def _dialect(sample: str, path: Path) -> type[csv.Dialect] | csv.Dialect:
    if path.suffix.casefold() == ".tsv":
        return csv.excel_tab
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t|")
    except csv.Error:
        return csv.excel


def row_text(row: dict[str, Any]) -> str:
    """A record as one line of text: ``column: value; column: value``."""
    return "; ".join(f"{key}: {value}" for key, value in row.items() if value not in (None, ""))


def read_rows(path: Path, ctx: ReadContext) -> tuple[list[dict[str, str]], dict[str, Any]]:
    """The rows of a CSV file as dicts keyed by the header, and the file's encoding metadata."""
    decoded = read_text(path)
    text = decoded.text
    dialect = _dialect(text[:8192], path)
    reader = csv.reader(io.StringIO(text), dialect, strict=True)  # an unclosed quote must not swallow rows
    try:
        header = next(reader)
    except StopIteration as exc:  # pragma: no cover - read_text rejects empty files
        raise ReadError(path, "is empty; give it a header row") from exc
    except csv.Error as exc:
        raise ReadError(path, f"is not valid CSV ({exc}); check its quoting") from exc
    header = [name.strip().lstrip("\ufeff") for name in header]
    if not any(header):
        raise ReadError(path, "has an empty header row; the first row must name the columns")
    duplicates = sorted({name for name in header if name and header.count(name) > 1})
    if duplicates:
        raise ReadError(path, f"repeats the column(s) {', '.join(duplicates)} in its header; rename them")
    rows: list[dict[str, str]] = []
    ragged: list[int] = []
    try:
        for number, values in enumerate(reader, start=2):
            if not any(value.strip() for value in values):
                continue
            if len(values) != len(header):
                ragged.append(number)
                values = (values + [""] * len(header))[: len(header)]
            rows.append({name: value.strip() for name, value in zip(header, values) if name})
    except csv.Error as exc:
        raise ReadError(path, f"is not valid CSV at line {reader.line_num} ({exc}); check its quoting") from exc
    if ragged:
        shown = ", ".join(str(n) for n in ragged[:10]) + (" ..." if len(ragged) > 10 else "")
        ctx.warn(f"{path}: {len(ragged)} row(s) have a different number of fields than the header (line {shown})")
    return rows, encoding_metadata(decoded)


def _text_column(header: list[str]) -> str | None:
    lowered = {name.casefold(): name for name in header}
    return next((lowered[name] for name in TEXT_FIELDS if name in lowered), None)


def _renamed(rows: list[dict[str, str]], columns: dict[str, str], path: Path) -> list[dict[str, str]]:
    """Rows with their columns renamed as a mapping file says (header name -> conventional name)."""
    if not columns:
        return rows
    header = list(rows[0])
    missing = sorted(set(columns) - set(header))
    if missing:
        raise ReadError(path, f"has no column(s) {', '.join(missing)} that its mapping renames; "
                        f"its header is {', '.join(header)}")
    names = [columns.get(name, name) for name in header]
    clashes = sorted({name for name in names if names.count(name) > 1})
    if clashes:
        raise ReadError(path, f"its mapping renames two columns to {', '.join(clashes)}; rename one of them")
    return [{columns.get(key, key): value for key, value in row.items()} for row in rows]


def read_csv_file(path: Path, ctx: ReadContext) -> list[SourceDocument]:
    rows, meta = read_rows(path, ctx)
    if not rows:
        raise ReadError(path, "has a header but no data rows; add rows or leave it out of the load")
    options = ctx.options
    mapping = options.mapping.for_file(path) if options.mapping is not None else None
    record_type = options.record_type or path.stem
    mode = options.csv_mode
    if mapping is not None:
        rows = _renamed(rows, mapping.columns, path)
        record_type = mapping.type or record_type
        mode = mapping.mode or mode
        if mapping.update:
            meta = {**meta, "update": True}
        meta = {**meta, "mapping": mapping.model_dump(exclude_defaults=True)}
    header = list(rows[0])
    text_column = _text_column(header)
    if mode == "auto":
        typed = record_type in options.schema_types  # Disease.csv of a schema with Disease: records
        mode = "passages" if text_column is not None and not typed else "records"
    if mode == "passages":
        if text_column is None:
            raise ReadError(
                path, f"has no text column ({', '.join(TEXT_FIELDS)}) to read rows as passages; use records mode"
            )
        lowered = {name.casefold(): name for name in header}
        title_column = next((lowered[name] for name in TITLE_FIELDS if name in lowered), None)
        id_column = next((lowered[name] for name in ID_FIELDS if name in lowered), None)
        builder = _PassageBuilder(path, ctx, {**meta, "table": path.name})
        for index, row in enumerate(rows):
            title = (row.get(title_column) if title_column else None) or f"{path.stem} {index + 1}"
            record_id = row.get(id_column) if id_column else None
            extra = {k: v for k, v in row.items() if k not in (text_column, title_column) and v}
            builder.add(str(index + 2), title, row.get(text_column, ""), record_id or None, extra)
        if not builder.documents:
            raise ReadError(path, f"has no row with text in column {text_column!r}")
        return builder.documents
    if mode == "text":
        text = "\n".join(line for line in (row_text(row) for row in rows) if line)
        return [
            make_document(
                path, text=text, media_type="text/csv", metadata={**meta, "rows": len(rows)}, id_key=ctx.id_key
            )
        ]
    return [
        make_document(
            path,
            text="",
            media_type="text/csv",
            metadata={**meta, "rows": len(rows), "columns": header},
            records=rows,
            record_type=record_type,
            id_key=ctx.id_key,
        )
    ]

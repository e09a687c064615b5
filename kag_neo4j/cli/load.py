"""``kag-neo4j load`` and ``kag-neo4j delete``: build the knowledge graph from files, remove a document.

The lead registers them on the main app with :func:`register`.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from kag_neo4j.cli.common import EXIT_PARTIAL, make_console, print_error, print_note, quiet_library_logs
from kag_neo4j.config import Settings, load_settings
from kag_neo4j.errors import KagError

console = make_console()
err_console = make_console(stderr=True)


def _settings(ctx: typer.Context | None, **extra: Any) -> Settings:
    flags: dict[str, Any] = dict((ctx.find_root().obj or {}) if ctx is not None else {})
    flags.update({key: value for key, value in extra.items() if value is not None})
    return load_settings(**flags)


def _fail(message: str, code: int = 1) -> typer.Exit:
    print_error(message)
    return typer.Exit(code)


def summary_table(summary: Any, title: str = "kag-neo4j load") -> Table:
    table = Table(title=title, show_header=False)
    table.add_column("what", style="bold")
    table.add_column("value")
    for label, value in summary.rows():
        table.add_row(label, value)
    return table


def _terminate(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _summary_json(summary: Any) -> str:
    data = summary.model_dump()
    data.update(facts=summary.facts, chunks_per_second=round(summary.chunks_per_second, 1))
    return json.dumps(data, ensure_ascii=False, indent=2)


def load_command(
    ctx: typer.Context,
    paths: Annotated[list[Path] | None, typer.Argument(
        help="Files or folders to load (txt, md, pdf, docx, html, json/jsonl corpora, csv).", show_default=False)] = None,
    schema: Annotated[Path | None, typer.Option("--schema", help="SPG .schema file (or a shipped name, e.g. CompanyFinance) "
                                                "that extraction and alignment follow.")] = None,
    mode: Annotated[str, typer.Option("--mode", help="full: one LLM call per chunk (with --schema, one more for a chunk "
                                      "titled by a typed entity); light: NER + co-occurrence, no LLM.")] = "full",
    batch_size: Annotated[int, typer.Option("--batch-size", min=1, max=100_000, help="Chunks per write transaction.")] = 500,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Do not use the LLM response cache or the vector cache.")] = False,
    taxonomy: Annotated[Path | None, typer.Option("--taxonomy", help="Concept taxonomy to inject: a folder with nodes.json "
                                                  "and edges.json (KAG's domain_kg format).")] = None,
    similarity: Annotated[float, typer.Option("--similarity", min=0.0, max=1.0, help="Cosine similarity for embedding-based "
                                              "entity merges (0 turns them off).")] = 0.92,
    force: Annotated[bool, typer.Option("--force", help="Re-load documents even when unchanged.")] = False,
    max_chars: Annotated[int, typer.Option("--max-chars", min=50, help="Chunk length in characters.")] = 1200,
    record_type: Annotated[str | None, typer.Option("--type", help="Schema type of the rows of the CSV/JSON tables given "
                                                    "(default: each file's stem, Company.csv -> Company).")] = None,
    csv_mode: Annotated[str, typer.Option("--csv-mode", help="auto: tables with a text column are passages (unless "
                                          "named after a schema type), others records; or records, passages, text.")] = "auto",
    mapping: Annotated[Path | None, typer.Option("--mapping", help="TOML file saying what CSV files whose name or "
                                                 "columns differ from the convention hold (docs/builder-input.md).")] = None,
    dangling: Annotated[str, typer.Option("--dangling", help="A table row's reference to a record no table of the "
                                          "load holds: skip (the relation; reported) or create (a bare node of the "
                                          "referenced type; reported).")] = "skip",
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    progress: Annotated[bool | None, typer.Option("--progress/--no-progress",
                                                  help="Show a progress bar (default: on a terminal).")] = None,
) -> None:
    """Build the knowledge graph from PATHS: read, split, extract, align, embed and write.

    Unchanged documents are skipped; changed ones replace their old facts; an interrupted load
    resumes where it stopped when run again.

    A file its reader refuses (corrupt, encrypted, empty, binary...) is named on stderr with the
    reason and the fix, and every other file loads; the exit code is then 4 (see
    ``kag_neo4j.cli.common.EXIT_CODES``).
    """
    from kag_neo4j.builder.concepts import load_taxonomy
    from kag_neo4j.builder.pipeline import LoadOptions, Pipeline, read_documents
    from kag_neo4j.store.database import Database

    if mode not in ("full", "light"):
        raise _fail(f"--mode {mode!r} is not a mode; use --mode full or --mode light", code=2)
    if dangling not in ("skip", "create"):
        raise _fail(f"--dangling {dangling!r} is not a choice; use --dangling skip or --dangling create", code=2)
    if csv_mode not in ("auto", "records", "passages", "text"):
        raise _fail(f"--csv-mode {csv_mode!r} is not a mode; use auto, records, passages or text", code=2)
    if not paths and taxonomy is None:
        raise _fail("give at least one file or folder to load (or --taxonomy DIR to load a taxonomy only)", code=2)
    pipeline = None
    quiet_library_logs()
    previous = signal.signal(signal.SIGTERM, _terminate)  # `kill` stops a load like Ctrl-C does
    try:
        settings = _settings(ctx, no_cache=True if no_cache else None)
        spg_schema = None
        if schema is not None:
            from kag_neo4j.cli.schema import resolve_schema_path
            from kag_neo4j.schema.validate import load_schema

            spg_schema = load_schema(str(resolve_schema_path(schema)))
        options = LoadOptions(
            mode="full" if mode == "full" else "light", batch_size=batch_size, spg_schema=spg_schema,
            taxonomy=load_taxonomy(taxonomy) if taxonomy is not None else None,
            similarity=similarity or None, force=force, max_chars=max_chars,
            dangling="create" if dangling == "create" else "skip",
            overlap=min(150, max_chars // 4),
            progress=console.is_terminal and not as_json if progress is None else progress,
        )
        from kag_neo4j.builder.pipeline import with_schema_types
        from kag_neo4j.builder.readers.common import ReadOptions
        from kag_neo4j.builder.readers.mapping import load_mapping

        read_options = with_schema_types(ReadOptions(
            record_type=record_type, csv_mode=csv_mode,  # type: ignore[arg-type]  # checked above
            mapping=load_mapping(mapping) if mapping is not None else None,
        ), spg_schema)
        with Database.connect(settings) as db:
            pipeline = Pipeline(db, settings, options)
            documents = read_documents(paths or [], pipeline.summary, read_options)
            summary = pipeline.run(documents, total=len(documents))
    except KeyboardInterrupt:
        if pipeline is not None:
            console.print(summary_table(pipeline.summary, "kag-neo4j load (interrupted)"))
        err_console.print("interrupted: completed documents are saved; run the same command again to resume",
                          highlight=False)
        raise typer.Exit(130) from None
    except KagError as exc:
        raise _fail(str(exc)) from exc
    finally:
        signal.signal(signal.SIGTERM, previous)
    if as_json:
        typer.echo(_summary_json(summary))
    else:
        console.print(summary_table(summary))
        for issue in summary.issue_samples[:5]:
            print_note("issue:", issue)
        for violation in summary.violations[:5]:
            print_note("violation:", violation.message)
        for dangling in summary.dangling_samples[:5]:
            print_note("dangling:", dangling)
        for row in summary.open_fact_samples[:5]:
            print_note("open fact:", row)
    _print_read_notes(summary)
    if summary.documents_incomplete:
        raise typer.Exit(1)
    if summary.read_failures:
        raise typer.Exit(EXIT_PARTIAL)


def _print_read_notes(summary: Any) -> None:
    """Every refused file, every file left out and every read warning, one line each on stderr."""
    for failure in summary.read_failures:
        print_note("skipped", failure)
    for left_out in summary.read_skipped:
        print_note("left out", left_out)
    for warning in summary.read_warnings:
        print_note("warning:", warning)
    if summary.read_failures:
        print_note("error:", f"{len(summary.read_failures)} file(s) could not be read (listed above); "
                   "every other file was loaded")


def delete_command(
    ctx: typer.Context,
    doc_ids: Annotated[list[str], typer.Argument(help="Id(s) of the document(s) to delete (Document.id); a concept "
                                                 "table (e.g. Industry.csv) by its file's id or its path as loaded.",
                                                 show_default=False)],
    as_json: Annotated[bool, typer.Option("--json", help="Print what was removed as JSON.")] = False,
) -> None:
    """Delete documents: their chunks and every fact no other chunk supports; or concept tables:
    their concepts, with their IS_A edges and every link to them.

    Each document is deleted in its own transaction. An unknown id is reported (with the stored
    ids that resemble it) and the other documents are deleted all the same; the exit code is then
    4, or 1 when no id was known (see ``kag_neo4j.cli.common.EXIT_CODES``).
    """
    from kag_neo4j.builder.delete import delete_document, similar_document_ids
    from kag_neo4j.builder.lease import builder_lease
    from kag_neo4j.store.database import Database

    quiet_library_logs()
    reports = []
    unknown: list[str] = []
    try:
        settings = _settings(ctx)
        with Database.connect(settings) as db, builder_lease(db, "`kag-neo4j delete`", settings) as lease:
            for doc_id in dict.fromkeys(doc_ids):  # a repeated id is deleted once
                report = delete_document(db, doc_id, lease=lease)
                reports.append(report)
                if not report.found:
                    close = similar_document_ids(db, doc_id)
                    hint = f"; did you mean {', '.join(close)}?" if close else "; no stored document id contains it"
                    print_error(f"no document with id {doc_id!r}{hint}")
                    unknown.append(doc_id)
                elif not as_json:
                    _print_deleted(report)
    except KagError as exc:
        if reports and not as_json:
            print_note("note:", f"{sum(r.found for r in reports)} document(s) were deleted before the error")
        raise _fail(str(exc)) from exc
    if as_json:
        typer.echo(json.dumps([r.model_dump() for r in reports], ensure_ascii=False, indent=2))
    if unknown:
        raise typer.Exit(1 if len(unknown) == len(reports) else EXIT_PARTIAL)


def _print_deleted(report: Any) -> None:
    if report.kind == "concept table":
        console.print(f"deleted concept table {report.document}: {report.concepts} concepts, "
                      f"{report.relations_deleted} relations", highlight=False, markup=False)
        return
    console.print(
        f"deleted {report.document}: {report.chunks} chunks, {report.entities} entities, {report.events} events, "
        f"{report.relations_deleted} relations ({report.relations_updated} kept with other sources), "
        f"{report.concepts} concepts", highlight=False, markup=False,
    )


def register(app: typer.Typer) -> None:
    """Add ``load`` and ``delete`` to the main ``kag-neo4j`` app."""
    app.command("load")(load_command)
    app.command("delete")(delete_command)

"""``kag-neo4j rules``: apply KAG rules to the graph as Cypher, show them, explain one."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, ParamSpec, TypeVar

import typer
from rich.markup import escape

from kag_neo4j.builder.lease import builder_lease
from kag_neo4j.cli.common import console, err_console, print_note, settings_from
from kag_neo4j.errors import KagError
from kag_neo4j.rules.apply import compile_all, explain, parse_as_of
from kag_neo4j.rules.compile import compile_query, compile_rule
from kag_neo4j.rules.depends import dependencies
from kag_neo4j.rules.load import RuleSet, load_rules
from kag_neo4j.rules.registry import apply_and_register, with_stored_schema
from kag_neo4j.schema.validate import load_schema
from kag_neo4j.store.database import Database
from kag_neo4j.store.knowledge_base import KnowledgeBase

app = typer.Typer(
    help="KAG rules (Define … Structure/Constraint/Action) compiled to parameterized Cypher: "
    "apply them to the graph, show them in dependency order, explain one as Cypher.",
    no_args_is_help=True,
)

FilesArg = Annotated[list[Path], typer.Argument(help="Rule files: .schema (their rule blocks), concept.rule, "
                                                     "or files of Define rules.", show_default=False)]
SchemaOpt = Annotated[Path | None, typer.Option("--schema", help="The .schema file the rules' types come from "
                                                      "(default: a .schema among FILES, else the namespace's stored schema).")]
AsOfOpt = Annotated[str | None, typer.Option("--as-of", help="The date now() means, YYYY-MM-DD (default: today, UTC); "
                                                   "recorded on what it derives.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]


P = ParamSpec("P")
R = TypeVar("R")


def reports_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Errors as one red line and exit code 1; the message is printed literally (rule errors
    quote patterns such as ``-[p:relation]->``, which console markup would swallow)."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except KagError as exc:
            err_console.print("[bold red]error:[/] " + escape(str(exc)), highlight=False, markup=True)
            raise typer.Exit(1) from exc

    return wrapper


def _rules(files: list[Path], schema: Path | None, db: Database | None = None) -> RuleSet:
    resolved = load_schema(str(schema)) if schema is not None else None
    rules = load_rules(files, schema=resolved)
    return with_stored_schema(db, rules) if db is not None else rules


@app.command("apply")
@reports_errors
def apply_command(ctx: typer.Context, files: FilesArg, schema: SchemaOpt = None, as_of: AsOfOpt = None,
                  as_json: JsonOpt = False) -> None:
    """Apply the rules of FILES in dependency order, in one transaction (re-applying is idempotent),
    and register them: later loads and deletes re-apply the rules whose inputs they change."""
    settings = settings_from(ctx)
    with Database.connect(settings) as db, builder_lease(db, "`kag-neo4j rules apply`", settings) as lease:
        rules = _rules(files, schema, db)
        result = apply_and_register(db, rules, as_of=as_of, lease=lease)
    if as_json:
        typer.echo(json.dumps(result.model_dump(mode="json"), ensure_ascii=False, indent=2))
        return
    console.print(f"as of {result.as_of}", markup=False, highlight=False)
    for rule in result.rules:
        rejected = f", {rule.rejected} rejected (constraints)" if rule.rejected else ""
        console.print(f"  {rule.id} ({rule.kind.value}): {rule.derived} derived, {rule.retracted} retracted{rejected}",
                      markup=False, highlight=False)
    for violation in result.violations[:20]:
        print_note("violation:", violation.message)
    if not result.rules:
        console.print("no rules in " + ", ".join(map(str, files)), markup=False, highlight=False)


@app.command("show")
@reports_errors
def show_command(files: FilesArg, schema: SchemaOpt = None, as_json: JsonOpt = False) -> None:
    """List the rules of FILES in the order they run, with what each depends on (no database)."""
    rules = _rules(files, schema)
    ordered = compile_all(rules)
    deps = dependencies(ordered, rules.schema_)
    rows = [{"id": r.id, "kind": r.kind.value, "version": r.version, "location": str(r.location),
             "uses_now": r.uses_now, "depends_on": {k: v.describe() for k, v in deps[r.id].items()}} for r in ordered]
    queries = [{"location": str(q.location), "text": q.text} for q in rules.queries]
    if as_json:
        typer.echo(json.dumps({"namespace": rules.namespace, "rules": rows, "queries": queries}, ensure_ascii=False, indent=2))
        return
    for position, row in enumerate(rows, start=1):
        console.print(f"{position}. {row['id']}  [{row['kind']}, version {row['version']}]  {row['location']}",
                      markup=False, highlight=False)
        for other, fact in row["depends_on"].items():
            console.print(f"     after {other} ({fact})", markup=False, highlight=False)
    for query in queries:
        console.print(f"query {query['location']}: {query['text']}", markup=False, highlight=False)


@app.command("explain")
@reports_errors
def explain_command(ctx: typer.Context,
                    file: Annotated[Path, typer.Argument(help="The rule file.", show_default=False)],
                    rule: Annotated[str, typer.Argument(help="A rule id, its head without the namespace "
                                                             "(Person-developed->App), or its number in `show`.",
                                                        show_default=False)],
                    schema: SchemaOpt = None, as_of: AsOfOpt = None) -> None:
    """Print the Cypher of one rule (retract, then derive) with :param lines for Neo4j Browser, as it
    runs in the knowledge base of --kb / KAG_KB."""
    kb = KnowledgeBase(settings_from(ctx).kb)
    rules = _rules([file], schema)
    if rule.startswith("query") and rule[5:].isdigit() and rules.queries:
        statement = compile_query(rules.queries[int(rule[5:]) - 1], rules)
        typer.echo(kb.rewrite(statement.cypher) + ";")
        return
    typer.echo(explain(compile_rule(rules.get(rule), rules), parse_as_of(as_of), kb))

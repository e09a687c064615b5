"""Format a resolved schema as rich tables (or plain text) of its types and relations."""

from __future__ import annotations

from io import StringIO

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from kag_neo4j.schema.models import ResolvedProperty, ResolvedRelation, ResolvedSchema


def _property_line(prop: ResolvedProperty) -> str:
    flags = [flag for flag in (prop.constraints.describe(), f"index: {prop.index.value}" if prop.index else "") if flag]
    if prop.rule:
        flags.append("rule")
    inherited = f" (from {prop.inherited_from})" if prop.inherited_from else ""
    extra = f" [{'; '.join(flags)}]" if flags else ""
    return f"{prop.name}: {prop.value_type}{extra}{inherited}"


def _sub_properties(rel: ResolvedRelation) -> str:
    return "\n".join(_property_line(sub) for sub in rel.properties)


def types_table(schema: ResolvedSchema) -> Table:
    """One row per type: kind, parent, labels, properties and outgoing relations (inherited ones marked)."""
    table = Table(title=f"{schema.namespace}: {len(schema.types)} types", title_justify="left", show_lines=True)
    for column in ("Type", "Display name", "Kind", "Parent", "Labels", "Properties and relations"):
        table.add_column(column, overflow="fold")
    for spg_type in schema.types:
        extra = f"hypernymPredicate: {spg_type.hypernym_predicate}" if spg_type.hypernym_predicate else ""
        edges = [f"{r.name} -> {r.target}" + (f" (from {r.inherited_from})" if r.inherited_from else "")
                 for r in spg_type.relations]
        props = "\n".join([_property_line(p) for p in spg_type.properties] + edges + ([extra] if extra else []))
        table.add_row(
            Text(spg_type.name),
            Text(spg_type.display_name or ""),
            spg_type.kind.value,
            Text(spg_type.parent or ""),
            Text(":" + ":".join(spg_type.labels)),
            Text(props),
        )
    return table


def relations_table(schema: ResolvedSchema) -> Table:
    """One row per declared relation (edges), with its sub-properties."""
    relations = schema.relations()
    table = Table(title=f"{schema.namespace}: {len(relations)} relations", title_justify="left", show_lines=True)
    for column in ("Source", "Relation", "Display name", "Target", "Semantic", "Declared in", "Sub-properties",
                   "Constraints"):
        table.add_column(column, overflow="fold")
    for rel in relations:
        constraints = rel.constraints.describe()
        if rel.rule:
            constraints = f"{constraints}; rule" if constraints else "rule"
        table.add_row(
            Text(rel.source),
            Text(rel.name),
            Text(rel.display_name or ""),
            Text(rel.target),
            f"{rel.semantic.value}#" if rel.semantic else "",
            rel.declared_in,
            Text(_sub_properties(rel)),
            Text(constraints),
        )
    return table


def schema_view(schema: ResolvedSchema) -> Group:
    """Both tables, ready for ``console.print``."""
    return Group(types_table(schema), relations_table(schema))


def render_text(schema: ResolvedSchema, *, width: int = 160) -> str:
    """The two tables as plain text (no colour), e.g. for logs and tests."""
    buffer = StringIO()
    Console(file=buffer, width=width, color_system=None, force_terminal=False).print(schema_view(schema))
    return buffer.getvalue()

"""The SPG schema language: parse, validate, apply to Neo4j as a meta-graph, show.

See ``schema/README.md`` for the language and ``docs/schema.md`` for the commands.
"""

from __future__ import annotations

from kag_neo4j.schema.apply import ApplyReport, DdlAction, DdlStatement, apply_schema, plan_statements
from kag_neo4j.schema.issues import Location, SchemaFileError, SchemaIssue
from kag_neo4j.schema.metagraph import read_schema, stored_namespaces, to_rows, write_metagraph
from kag_neo4j.schema.models import (
    Constraints,
    IndexKind,
    PredicateDecl,
    ResolvedProperty,
    ResolvedRelation,
    ResolvedSchema,
    ResolvedType,
    SchemaDocument,
    Semantic,
    TypeDecl,
    TypeKind,
)
from kag_neo4j.schema.parser import parse_file, parse_schema
from kag_neo4j.schema.show import render_text, schema_view
from kag_neo4j.schema.validate import load_schema, validate_schema

__all__ = [
    "ApplyReport",
    "Constraints",
    "DdlAction",
    "DdlStatement",
    "IndexKind",
    "Location",
    "PredicateDecl",
    "ResolvedProperty",
    "ResolvedRelation",
    "ResolvedSchema",
    "ResolvedType",
    "SchemaDocument",
    "SchemaFileError",
    "SchemaIssue",
    "Semantic",
    "TypeDecl",
    "TypeKind",
    "apply_schema",
    "load_schema",
    "parse_file",
    "parse_schema",
    "plan_statements",
    "read_schema",
    "render_text",
    "schema_view",
    "stored_namespaces",
    "to_rows",
    "validate_schema",
    "write_metagraph",
]

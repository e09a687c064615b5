"""A broken schema reports FILE:LINE:COLUMN and what was expected."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kag_neo4j.errors import SchemaError
from kag_neo4j.schema import SchemaFileError, load_schema, parse_file, parse_schema

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "schemas"

HEAD = "namespace D\nA: EntityType\n"
PROP = HEAD + "  properties:\n    p: Text\n"

CASES = [
    ("empty", "", 1, 1, "expected 'namespace NAME', found an empty schema"),
    ("comment only", "# nothing\n", 1, 1, "expected 'namespace NAME', found an empty schema"),
    ("no namespace", "Thing: EntityType\n", 1, 1, "expected 'namespace NAME' as the first declaration, found 'Thing:'"),
    ("bad namespace", "namespace My-Space\n", 1, 11, "expected a namespace name"),
    ("indented type", "namespace D\n  A: EntityType\n", 2, 3, "expected a type declaration at column 1"),
    ("indented first line", "  namespace D\n", 1, 3, "expected a declaration at column 1"),
    ("bad kind", "namespace D\nA: EntityTyp\n", 2, 4, "expected a type kind (EntityType, ConceptType, EventType, "
     "IndexType, StandardType), found 'EntityTyp'"),
    ("missing colon", "namespace D\nA EntityType\n", 2, 3, "expected ':' followed by a type kind"),
    ("trailing text", "namespace D\nA: EntityType extra\n", 2, 15, "expected end of line, found 'extra'"),
    ("unclosed display", "namespace D\nA(Display: EntityType\n", 2, 22, "expected ')' to close the display name"),
    ("parent without colon", "namespace D\nA -> B\n", 2, 7, "expected ':' after the parent type, found end of line"),
    ("unknown type meta", HEAD + "    descr: x\n", 3, 5, "expected one of desc:, properties:, relations:"),
    ("predicate at type level", HEAD + "    name(N): Text\n", 3, 5, "predicates go under a 'properties:'"),
    ("constraint on a type", HEAD + "  constraint: NotNull\n", 3, 3, "'constraint:' is not allowed here"),
    ("bare sub-property", PROP + "      confidence(C): Float\n", 5, 7, "sub-properties go under a 'properties:' line"),
    ("missing value type", HEAD + "  properties:\n    p(P):\n", 4, 10, "expected a value type"),
    ("bad predicate name", HEAD + "  properties:\n    my-prop: Text\n", 4, 5, "expected a property or relation name"),
    ("bad semantic prefix", HEAD + "  properties:\n    FOO#p: A\n", 4, 5, "expected a semantic prefix IND# or CAU#, "
     "found 'FOO#'"),
    ("unknown constraint", PROP + "      constraint: NotNull, Unique\n", 5, 28, "expected NotNull, MultiValue, "
     'Enum="a,b" or Regular="pattern", found \'Unique\''),
    ("unquoted enum", PROP + "      constraint: Enum=a,b\n", 5, 24, "expected a quoted string, found 'a,b'"),
    ("unclosed enum", PROP + '      constraint: Enum="a,b\n', 5, 28, 'expected the closing " of the string'),
    ("missing comma", PROP + "      constraint: NotNull MultiValue\n", 5, 27, "expected ',' between constraints"),
    ("empty enum", PROP + '      constraint: Enum=" , "\n', 5, 24, "expected at least one value"),
    ("bad index", PROP + "      index: Fulltext\n", 5, 14, "expected an index kind (Text, Vector, TextAndVector), "
     "found 'Fulltext'"),
    ("unclosed rule", PROP + "      rule: [[\n        Define x\n", 5, 13, "expected ']]' to close the rule block"),
    ("rule without brackets", PROP + "      rule: Define x\n", 5, 13, "expected '[[' opening a rule block"),
    ("duplicate desc", HEAD + "  desc: a\n  desc: b\n", 4, 3, "found a second 'desc:' (the first is on line 3)"),
    ("nested under desc", HEAD + "  desc: a\n    more text\n", 4, 5, "takes no nested lines"),
    ("empty desc", HEAD + "  desc:\n", 3, 8, "expected a value after 'desc:'"),
    ("value after properties", HEAD + "  properties: p\n", 3, 15, "expected end of line after 'properties:'"),
    ("sub-sub-property", HEAD + "  relations:\n    r: A\n      properties:\n        s: Text\n          properties:\n",
     7, 11, "'properties:' is not allowed here"),
    ("semantic sub-property", HEAD + "  relations:\n    r: A\n      properties:\n        IND#s: Text\n", 6, 9,
     "IND#/CAU# prefixes are for predicates only"),
]


@pytest.mark.parametrize(("text", "line", "column", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_parse_error_location_and_message(text: str, line: int, column: int, message: str) -> None:
    with pytest.raises(SchemaFileError) as caught:
        parse_schema(text, source="broken.schema")
    error = caught.value
    assert isinstance(error, SchemaError)
    assert str(error).startswith(f"broken.schema:{line}:{column}: expected ")
    assert message in str(error)
    assert error.location is not None and (error.location.line, error.location.column) == (line, column)


def _corrupt(tmp_path: Path, old: str, new: str) -> tuple[Path, int]:
    text = (FIXTURES / "SupplyChain.schema").read_text(encoding="utf-8")
    assert text.count(old) == 1
    line = text[: text.index(old)].count("\n") + 1
    path = tmp_path / "SupplyChain.schema"
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path, line


def test_corrupted_kind_reports_its_line(tmp_path: Path) -> None:
    path, line = _corrupt(tmp_path, "Person(自然人): EntityType", "Person(自然人): EntityTpe")
    with pytest.raises(SchemaFileError, match=rf"^{re.escape(str(path))}:{line}:14: expected a type kind"):
        parse_file(path)


def test_corrupted_rule_block_reports_where_it_opened(tmp_path: Path) -> None:
    text = (FIXTURES / "SupplyChain.schema").read_text(encoding="utf-8")
    lines = text.splitlines()
    # drop the closing ]] of the last rule (sameLegalRepresentative) so it runs to the end of the file
    last_close = max(i for i, line in enumerate(lines) if line.strip() == "]]")
    opened = max(i for i, line in enumerate(lines[:last_close]) if "rule: [[" in line)
    path = tmp_path / "SupplyChain.schema"
    path.write_text("\n".join(lines[:last_close] + lines[last_close + 1 :]), encoding="utf-8")
    with pytest.raises(SchemaFileError, match=rf":{opened + 1}:\d+: expected '\]\]' to close the rule block"):
        parse_file(path)


def test_corrupted_type_reference_reports_its_line(tmp_path: Path) -> None:
    path, line = _corrupt(tmp_path, "legalRepresentative(法人代表): Company", "legalRepresentative(法人代表): Compny")
    with pytest.raises(SchemaFileError) as caught:
        load_schema(path)
    assert str(caught.value) == (
        f"{path}:{line}:30: expected Text, Integer, Float, STD.<Name> or a declared type, found unknown type "
        "'Compny' (did you mean 'Company'?)"
    )


def test_missing_file_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(SchemaError, match="does not exist"):
        parse_file(tmp_path / "nope.schema")


def test_non_utf8_file(tmp_path: Path) -> None:
    path = tmp_path / "latin.schema"
    path.write_bytes("namespace D\nA(Café): EntityType\n".encode("latin-1"))
    with pytest.raises(SchemaError, match="not UTF-8"):
        parse_file(path)

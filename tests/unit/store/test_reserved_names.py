"""The one list of kag-neo4j's own labels and relationship types, look-alike names, and the
quoting of every identifier a Cypher template receives."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kag_neo4j.errors import InvalidIdentifierError
from kag_neo4j.resources import resource_dir
from kag_neo4j.store.identifiers import (
    RESERVED_LABELS,
    RESERVED_RELATIONSHIP_TYPES,
    check_identifier,
    is_reserved_label,
    is_reserved_relationship_type,
)

FOLDERS = ("cypher", "procedures", "migrations")
_COMMENT = re.compile(r"//[^\n]*")
_STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
#: (x:Label), (:A:B), (x:A|B), SET x:Label
_LABELS = re.compile(r"(?:\(\s*\w*|\bSET\s+\w+)((?:\s*[:|]\s*`?[A-Za-z]\w*`?)+)")
#: WHERE x:Label / NOT r:TYPE (a label or a relationship type)
_PREDICATES = re.compile(r"\b(?:WHERE|NOT|AND|OR)\s+\w+((?:\s*[:|]\s*`?[A-Za-z]\w*`?)+)")
#: [r:TYPE], [:A|B*0..2]
_TYPES = re.compile(r"\[\s*\w*\s*:\s*(`?[A-Za-z]\w*`?(?:\s*\|\s*`?[A-Za-z]\w*`?)*)")


def _cypher_files() -> list[Path]:
    return [path for folder in FOLDERS for path in sorted(resource_dir(folder).rglob("*.cypher"))]


def _code(path: Path) -> str:
    return _STRING.sub("''", _COMMENT.sub("", path.read_text(encoding="utf-8")))


def _names(group: str) -> set[str]:
    return {name.strip("` ") for name in re.split(r"[:|]", group) if name.strip("` ")}


def _used_names() -> tuple[set[str], set[str], set[str]]:
    """Labels, relationship types, and names that are one or the other (``WHERE r:BELONGS_TO``)."""
    labels: set[str] = set()
    types: set[str] = set()
    either: set[str] = set()
    for path in _cypher_files():
        code = _code(path)
        for match in _LABELS.finditer(code):
            labels |= _names(match.group(1))
        for match in _PREDICATES.finditer(code):
            either |= _names(match.group(1))
        for match in _TYPES.finditer(code):
            types |= _names(match.group(1))
    canary = {"Canary", "Pwned"}  # the injection benchmark's own labels
    return labels - canary, types, either - canary


def test_the_scan_finds_the_graph_model() -> None:
    labels, types, _ = _used_names()
    assert {"Document", "Chunk", "Entity", "Concept", "KagRun", "SchemaType", "KagTestDatabase"} <= labels
    assert {"PART_OF", "MENTIONED_IN", "RELATED", "HAS_STEP", "CITES", "SYNONYM", "IS_A"} <= types


def test_every_label_and_relationship_type_the_cypher_files_use_is_reserved() -> None:
    labels, types, either = _used_names()
    assert sorted(label for label in labels if not is_reserved_label(label)) == []
    assert sorted(rel_type for rel_type in types if not is_reserved_relationship_type(rel_type)) == []
    assert sorted(n for n in either if not (is_reserved_label(n) or is_reserved_relationship_type(n))) == []
    assert "CITES" in RESERVED_RELATIONSHIP_TYPES and "KagTestDatabase" in RESERVED_LABELS


def test_every_template_variable_is_backtick_quoted() -> None:
    # templates rendered by kag_neo4j.store.cypher.render quote their identifiers in the file; the
    # rule templates (cypher/rules/) are rendered by kag_neo4j.rules.render, which accepts only
    # identifiers quoted in Python and compiler fragments (test_rule_templates_take_no_plain_text)
    unquoted = []
    for path in _cypher_files():
        if path.parent.name == "rules":
            continue
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r"\{\{.*?\}\}", text):
            before, after = text[match.start() - 1 : match.start()], text[match.end() : match.end() + 1]
            if (before, after) != ("`", "`"):
                unquoted.append(f"{path.parent.name}/{path.name}: {match.group(0)}")
    assert unquoted == []


def test_rule_templates_take_no_plain_text() -> None:
    from kag_neo4j.rules.render import Fragment, ident, render

    with pytest.raises(TypeError, match="Ident or a Fragment"):
        render("retract_property", label="Person`) DETACH DELETE n //", key=ident("x"), body=Fragment(""))
    assert ident("riskMark") == "`riskMark`"


@pytest.mark.parametrize("name", ["Chunk", "chunk", "CHUNK", "Ｃｈｕｎｋ", "document", "KagRun", "KagLoadLease",
                                  "SchemaType", "Schema_x", "kagtestdatabase"])
def test_reserved_labels_in_any_case_or_width(name: str) -> None:
    assert is_reserved_label(name)


@pytest.mark.parametrize("name", ["Kagura", "Schemata", "Person", "SpgChunk", "Chunks", "公司"])
def test_ordinary_labels_are_not_reserved(name: str) -> None:
    assert not is_reserved_label(name)


@pytest.mark.parametrize("name", ["CITES", "cites", "Cites", "ＣＩＴＥＳ", "part_of", "MENTIONED_IN", "related"])
def test_reserved_relationship_types_in_any_case_or_width(name: str) -> None:
    assert is_reserved_relationship_type(name)


@pytest.mark.parametrize("name", ["cite", "worksFor", "partOf", "founded"])
def test_ordinary_relationship_types_are_not_reserved(name: str) -> None:
    assert not is_reserved_relationship_type(name)


@pytest.mark.parametrize(
    "name",
    [
        "Ｃｈｕｎｋ",  # full-width Latin
        "Сhunk",  # Cyrillic С in a Latin word
        "Dοcument",  # Greek omicron
        "CІTES",  # Cyrillic І
        "MENTIОNED_IN",
        "Area²",  # superscript: Cypher cannot read it unquoted, NFKC makes it Area2
        "ﬁle",  # ligature
        "Ⅻ",  # Roman numeral
    ],
)
def test_look_alike_names_are_refused(name: str) -> None:
    with pytest.raises(InvalidIdentifierError, match="look"):
        check_identifier(name, what="label")


@pytest.mark.parametrize("name", ["東京Tower", "カタカナ漢字", "한국어Name", "株式会社_ABC", "Москва", "Ελλάδα",
                                  "spg_Москва_id", "Straße", "Ünternehmen2", "கல௰"])
def test_single_script_and_east_asian_mixes_pass(name: str) -> None:
    assert check_identifier(name) == name

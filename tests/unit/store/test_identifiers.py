"""Names that become labels or relationship types are validated; hostile ones are refused."""

from __future__ import annotations

import pytest

from kag_neo4j.errors import InvalidIdentifierError
from kag_neo4j.store import cypher
from kag_neo4j.store.identifiers import check_identifier, quote_identifier

HOSTILE = [
    "Person`) DETACH DELETE n //",
    "Person` ",
    "a-b",
    "Person {x: 1}",
    "1Person",
    "_private",
    "",
    "Per son",
    "Person\n",
    "x" * 129,
    "Person;MATCH (n) DELETE n",
]


@pytest.mark.parametrize("name", ["Person", "SportsTeam", "has_part", "公司", "Ünternehmen2"])
def test_safe_names_pass(name: str) -> None:
    assert check_identifier(name) == name
    assert quote_identifier(name) == f"`{name}`"


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_names_are_refused(name: str) -> None:
    with pytest.raises(InvalidIdentifierError):
        check_identifier(name, what="label")


@pytest.mark.parametrize("name", HOSTILE)
def test_templates_refuse_hostile_identifiers(name: str) -> None:
    with pytest.raises(InvalidIdentifierError):
        cypher.render("store/drop_index", name=name)


def test_templates_refuse_non_identifier_values() -> None:
    with pytest.raises(TypeError):
        cypher.render("store/drop_index", name={"x": 1})


def test_template_renders_valid_identifier() -> None:
    assert cypher.render("store/drop_index", name="chunk_embedding").strip() == "DROP INDEX `chunk_embedding` IF EXISTS"


def test_plain_query_refuses_templates() -> None:
    with pytest.raises(ValueError, match="template"):
        cypher.query("store/drop_index")


def test_query_file_names_cannot_escape_the_folder() -> None:
    with pytest.raises(ValueError, match="escapes"):
        cypher.query("../migrations/0001_core")


def test_existing_names_from_other_tools_can_be_dropped() -> None:
    from kag_neo4j.store.identifiers import check_existing_name

    rendered = cypher.render("store/drop_index", name=check_existing_name("__entity__tmp_internal_id"))
    assert rendered.strip() == "DROP INDEX `__entity__tmp_internal_id` IF EXISTS"
    with pytest.raises(InvalidIdentifierError):
        check_existing_name("x` IF EXISTS DROP DATABASE neo4j //")

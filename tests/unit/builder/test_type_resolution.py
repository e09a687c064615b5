"""Schema type resolution: type families, labels, relationship types."""

from __future__ import annotations

import pytest

from kag_neo4j.builder.type_resolution import TypeResolver, relationship_type
from tests.unit.builder.alignment_support import schema  # noqa: F401 - a fixture


def test_type_families_follow_the_schema_hierarchy(schema) -> None:
    types = TypeResolver(schema)
    company, organization, person = types.resolve("Company"), types.resolve("organization"), types.resolve("Person")
    assert company.family == organization.family == "Organization"
    assert company.labels == ("Company", "Organization")
    assert person.family == "Person" and person.labels == ("Person",)
    assert types.resolve("Person").family != types.resolve("Company").family
    generic = types.resolve("Thing")
    assert generic.generic and generic.family == "entity" and not generic.off_schema
    assert types.resolve("Spaceship").off_schema and types.resolve("Spaceship").labels == ()
    assert types.resolve("Date").family == "value"


def test_without_a_schema_types_do_not_split_entities() -> None:
    types = TypeResolver(None)
    assert types.resolve("Person").family == types.resolve("Organization").family == "entity"
    assert types.resolve("DATE").family == "value"
    assert not types.resolve("Person").off_schema


@pytest.mark.parametrize("name", ["PART_OF", "MENTIONED_IN", "RELATED", "x`y", "DETACH DELETE", "a b", "1abc", ""])
def test_reserved_or_unsafe_relationship_types_become_open_facts(name: str) -> None:
    assert relationship_type(name) is None


def test_safe_relationship_types_pass() -> None:
    assert relationship_type("worksFor") == "worksFor"


def test_relationship_types_kag_neo4j_uses_itself_stay_open_facts() -> None:
    assert [relationship_type(name) for name in ("CITES", "cites", "part_of", "Related", "ＣＩＴＥＳ")] == [None] * 5
    assert relationship_type("worksFor") == "worksFor"

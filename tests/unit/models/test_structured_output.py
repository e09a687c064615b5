from __future__ import annotations

import pytest
from models_testkit import Extraction

from kag_neo4j.models.base import ChatMessage
from kag_neo4j.models.structured import (
    InvalidOutput,
    close_truncated,
    json_schema_of,
    loads_lenient,
    parse_object,
    repair_messages,
    with_schema_instruction,
)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1}',
        '```json\n{"a": 1}\n```',
        'Sure! Here it is: {"a": 1} Hope that helps.',
        '{"a": 1,}',
        '```\n{"a": 1, }\n```',
    ],
)
def test_loads_lenient_recovers_json(text: str) -> None:
    assert loads_lenient(text) == {"a": 1}


def test_loads_lenient_reads_raw_tabs_and_line_breaks_inside_strings() -> None:
    # a small model copies the passage's layout into a value; strict JSON rejects it as a control character
    assert loads_lenient('{"entities": [["Clause", "clause", "the process by\t\nwhich"]]}') == {
        "entities": [["Clause", "clause", "the process by\t\nwhich"]]
    }


def test_loads_lenient_keeps_braces_inside_strings() -> None:
    assert loads_lenient('note: {"a": "x } y", "b": [1, 2]} end') == {"a": "x } y", "b": [1, 2]}


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("no json here", "not valid JSON"),
        ('{"a": [1, 2', "truncated"),
    ],
)
def test_loads_lenient_rejects_with_a_reason(text: str, reason: str) -> None:
    with pytest.raises(InvalidOutput, match=reason) as info:
        loads_lenient(text)
    assert info.value.text == text


def test_parse_object_validates_against_the_model() -> None:
    good = parse_object('{"entities": ["A"], "triples": []}', Extraction)
    assert good.entities == ["A"]
    with pytest.raises(InvalidOutput, match=r"Extraction.*entities") as info:
        parse_object('{"entities": [], "triples": []}', Extraction)
    assert "too_short" in info.value.reason or "at least 1" in info.value.reason
    with pytest.raises(InvalidOutput, match=r"triples\.0\.object"):
        parse_object('{"entities": ["A"], "triples": [{"subject": "A", "predicate": "p"}]}', Extraction)


def test_json_schema_of_rejects_non_models() -> None:
    assert json_schema_of(Extraction)["title"] == "Extraction"
    with pytest.raises(TypeError, match="BaseModel"):
        json_schema_of(dict)  # type: ignore[arg-type]


def test_schema_instruction_goes_into_the_system_message() -> None:
    schema = json_schema_of(Extraction)
    with_system = with_schema_instruction(
        [ChatMessage(role="system", content="S"), ChatMessage(role="user", content="U")], schema
    )
    assert len(with_system) == 2
    assert with_system[0].content.startswith("S\n\n") and '"triples"' in with_system[0].content
    without = with_schema_instruction([ChatMessage(role="user", content="U")], schema)
    assert [m.role for m in without] == ["system", "user"]


def test_repair_messages_show_the_bad_reply_and_the_problem() -> None:
    original = [ChatMessage(role="user", content="U")]
    failure = InvalidOutput("missing key x", "x" * 5000)
    repaired = repair_messages(original, failure)
    assert [m.role for m in repaired] == ["user", "assistant", "user"]
    assert len(repaired[1].content) < 2100
    assert "missing key x" in repaired[2].content


@pytest.mark.parametrize(
    "text, closed",
    [
        ('{"entities":[["a","b","c"],["Hall","Per', '{"entities":[["a","b","c"],["Hall"]]}'),
        ('{"a":[1,2', '{"a":[1]}'),  # 2 may be the start of 25: cut
        ('{"a":{"b":"x\\"y', '{"a":{}}'),  # an escaped quote does not end the string
        ('{"a":"[{", "b":[3,', '{"a":"[{", "b":[3]}'),  # brackets inside strings are text
        ('noise first {"a":[1],"b"', '{"a":[1]}'),
        ('[', "[]"),
        ('{"a":[1]}', '{"a":[1]}'),  # already whole
    ],
)
def test_close_truncated_keeps_the_complete_part(text: str, closed: str) -> None:
    assert close_truncated(text) == closed


@pytest.mark.parametrize("text", ["", "no json at all", '{"a":[1}'])
def test_close_truncated_gives_none_when_nothing_can_be_kept(text: str) -> None:
    assert close_truncated(text) is None

from __future__ import annotations

import json
from pathlib import Path

import pytest
from models_testkit import GOOD, Extraction, Triple

from kag_neo4j.errors import ConfigError, TransientModelError
from kag_neo4j.models import ScriptedLLM
from kag_neo4j.models.base import LLM, ChatMessage
from kag_neo4j.models.scripted import ScriptExhaustedError, prompts_of

U = [ChatMessage(role="user", content="hi")]


def test_is_an_llm_and_replays_in_order() -> None:
    llm = ScriptedLLM(["one", {"a": 1}, Triple(subject="s", predicate="p", object="o")])
    assert isinstance(llm, LLM)
    assert llm.generate(U) == "one"
    assert json.loads(llm.generate(U)) == {"a": 1}
    assert json.loads(llm.generate(U)) == {"subject": "s", "predicate": "p", "object": "o"}
    assert llm.remaining == 0
    with pytest.raises(ScriptExhaustedError, match="no response left for call 4"):
        llm.generate(U)


def test_records_calls() -> None:
    llm = ScriptedLLM(["a"])
    llm.generate([ChatMessage(role="system", content="sys"), ChatMessage(role="user", content="question")], max_tokens=7, temperature=0.3)
    (call,) = llm.calls
    assert call.max_tokens == 7 and call.temperature == 0.3 and call.schema_ is None
    assert prompts_of(llm.calls) == ["question"]


def test_callable_responder_sees_the_messages() -> None:
    llm = ScriptedLLM(lambda messages: messages[-1].content.upper())
    assert llm.generate([ChatMessage(role="user", content="shout")]) == "SHOUT"


def test_exception_items_are_raised_in_turn() -> None:
    llm = ScriptedLLM([TransientModelError("flaky"), "fine"])
    assert llm.generate(U) == "fine"  # retried after the transient error
    assert len(llm.calls) == 2


def test_from_file_json_and_jsonl(tmp_path: Path) -> None:
    listing = tmp_path / "r.json"
    listing.write_text(json.dumps(["x", GOOD]), encoding="utf-8")
    llm = ScriptedLLM.from_file(listing)
    assert llm.model_id == "scripted:r.json"
    assert llm.generate(U) == "x"
    assert llm.generate_object(U, Extraction).entities == ["Ronaldo", "Real Madrid"]
    lines = tmp_path / "r.jsonl"
    lines.write_text('"first"\n\n{"k": 2}\n', encoding="utf-8")
    assert ScriptedLLM.from_file(lines).remaining == 2


@pytest.mark.parametrize("content", [None, "{not json", '{"a": 1}'])
def test_from_file_errors(tmp_path: Path, content: str | None) -> None:
    path = tmp_path / "r.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError, match="r.json"):
        ScriptedLLM.from_file(path)

"""Every prompt renders byte-identically to the fixture generated from the code before the refactor.

Prompt versions and the eval's response cache are keyed on this text: a change here must come with a
new prompt version (and a regenerated fixture: ``python -m tests.unit.prompts.prompt_renders``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.unit.prompts.prompt_renders import render_all

_FIXTURE = Path(__file__).parent / "fixtures" / "rendered_prompts.json"
_EXPECTED = json.loads(_FIXTURE.read_text(encoding="utf-8"))
_RENDERED = render_all()


def test_the_fixture_covers_every_rendered_prompt() -> None:
    assert sorted(_RENDERED) == sorted(_EXPECTED)


@pytest.mark.parametrize("name", sorted(_EXPECTED))
def test_prompt_renders_as_before(name: str) -> None:
    assert _RENDERED[name] == _EXPECTED[name]

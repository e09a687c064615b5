"""Which questions a yes/no answers (the rest go to the judge)."""

from __future__ import annotations

import pytest

from kag_neo4j.solver.judge import is_polar_question


@pytest.mark.parametrize(("question", "polar"), [
    ("Is the Exies an American band?", True),
    ("Were both films released in 1999?", True),
    ("Which band was formed first, The Exies or Circus Diablo?", False),
    ("Is Pterocarya or Cotula the larger plant?", False),
    ("Who is older, Ada or Grace?", False),
    ("How many years after X was founded did Y happen?", False),
    ("杭州是浙江的省会吗？", True),
    ("这两部电影是否在同一年上映", True),
    ("哪个乐队成立得更早？", False),
])
def test_yes_no_questions_are_told_from_choices(question: str, polar: bool) -> None:
    assert is_polar_question(question) is polar

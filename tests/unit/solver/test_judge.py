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


def test_graph_facts_that_give_what_a_yes_no_question_asks_about_confirm_it() -> None:
    from kag_neo4j.solver.generate import confirms
    from kag_neo4j.solver.memory import Binding, Item

    found = Binding(alias="o1", items=[Item(value="赌博App老板", entity_id="concept:x", key="Person:#10")], source="graph")
    assert confirms([found], "柏*是赌博App老板吗？")
    assert not confirms([found], "柏*是赌博App开发者吗？")  # another class: shown as it is
    assert not confirms([found], "柏*属于哪类风险用户？")  # not a yes/no question
    # a named end bound to itself (no anchor it was found for) confirms nothing, nor do chunks
    named = Binding(alias="s1", items=[Item(value="Paris", entity_id="e:paris")], source="graph")
    assert not confirms([named], "Is Paris in Germany?")
    chunks = Binding(alias="o1", items=[Item(value="Paris", key="e:france")], source="chunks")
    assert not confirms([chunks], "Is Paris the capital of France?")
    capital = Binding(alias="o1", items=[Item(value="Paris", entity_id="e:paris", key="e:france")], source="graph")
    assert confirms([capital], "Is Paris the capital of France?")

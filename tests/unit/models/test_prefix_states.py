"""Kept llama.cpp states: the longest shared prefix wins, least recently used states go first."""

from __future__ import annotations

import pytest

from kag_neo4j.models.prefix_states import KeptState, PrefixStates, shared_prefix


def _state(tokens: list[int], size: int = 10) -> KeptState:
    return KeptState(tokens=tuple(tokens), data=b"x" * size)


def test_shared_prefix_counts_leading_equal_tokens() -> None:
    assert shared_prefix([1, 2, 3, 4], [1, 2, 9, 4]) == 2
    assert shared_prefix([1, 2], [1, 2, 3]) == 2
    assert shared_prefix([], [1]) == 0 and shared_prefix([5], [1]) == 0


def test_the_state_sharing_the_longest_prefix_is_found() -> None:
    states = PrefixStates(capacity_bytes=100)
    plan, answer = _state([1, 2, 3, 4, 5]), _state([1, 2, 7, 8])
    states.keep(plan)
    states.keep(answer)
    assert states.best([1, 2, 3, 4, 9, 9]) == (plan, 4)
    assert states.best([1, 2, 7, 0]) == (answer, 3)
    assert states.best([6, 1, 2]) is None, "a state sharing no token is no start"


def test_least_recently_used_states_are_dropped_past_the_budget() -> None:
    states = PrefixStates(capacity_bytes=25)
    first, second, third = _state([1, 1]), _state([2, 2]), _state([3, 3])
    states.keep(first)
    states.keep(second)
    assert states.best([1, 1, 5]) == (first, 2)  # used: second is now the least recently used
    states.keep(third)
    assert len(states) == 2 and states.size == 20
    assert states.best([2, 2]) is None and states.best([1, 1]) == (first, 2)


def test_keeping_the_same_tokens_again_replaces_and_a_state_over_budget_is_not_kept() -> None:
    states = PrefixStates(capacity_bytes=25)
    states.keep(_state([1, 2], size=5))
    states.keep(_state([1, 2], size=8))
    assert len(states) == 1 and states.size == 8
    states.keep(_state([9, 9], size=26))
    states.keep(_state([], size=1))
    assert len(states) == 1, "a state larger than the budget, or holding no token, is not kept"
    with pytest.raises(ValueError, match="positive byte budget"):
        PrefixStates(capacity_bytes=0)

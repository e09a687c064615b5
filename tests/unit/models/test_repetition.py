"""The loop guard: which token tails count as a loop, and that the prompt never does."""

from __future__ import annotations

import pytest

from kag_neo4j.models.repetition import RepetitionGuard, repeating_period

ROW = list(range(100, 116))  # a 16-token row, e.g. ["Hall","Person","an American psychologist"],
SHORT = ROW[:11]


@pytest.mark.parametrize(
    "tokens, period",
    [
        ([1, 2, 3] + ROW * 2, 16),  # a row repeated back to back
        ([1, 2, 3] + SHORT * 3, 11),  # a shorter one, three times (32 tokens at least)
        (list(range(50)) + list(range(200, 300)) * 2, 100),  # a long row (a copied paragraph)
        ([9] * 32, 1),  # one token over and over
        ([7, 8] * 16, 2),
    ],
)
def test_loops_are_found_with_their_period(tokens: list[int], period: int) -> None:
    assert repeating_period(tokens) == period


@pytest.mark.parametrize(
    "tokens",
    [
        list(range(60)),  # no repetition
        [9] * 31,  # short runs need 32 tokens in all ("1,000,000" is not a loop)
        [5, 6, 7] * 10,  # 30 tokens of a 3-token cycle
        ROW + [0] + ROW,  # the same row twice, not back to back
        SHORT * 2,  # a short row twice: 22 tokens
        ROW * 2 + [1],  # a loop that has already been left
        list(range(300, 600)) * 2,  # a period longer than the guard looks
    ],
)
def test_other_tails_are_not_loops(tokens: list[int]) -> None:
    assert repeating_period(tokens) is None


def test_the_guard_looks_at_generated_tokens_only() -> None:
    prompt = ROW * 3  # a prompt that repeats itself is not the model looping
    guard = RepetitionGuard(len(prompt))
    assert not guard(prompt + ROW[:5], None) and not guard.hit
    assert guard(prompt + ROW * 2, None) and guard.period == 16
    assert guard(prompt + ROW * 2 + [1], None), "a guard that fired stays fired"

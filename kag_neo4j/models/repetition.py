"""A guard against degenerate loops: small models decoding greedily sometimes emit the same few
tokens again and again (``["Hall","Person","psychologist"],`` until ``max_tokens``). Stopping at the
third copy saves the rest of the budget; the structured layer then keeps what came before.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["RepetitionGuard", "repeating_period"]


def repeating_period(tokens: Sequence[int], *, max_period: int = 256, min_span: int = 32) -> int | None:
    """The shortest period ``p`` such that the tokens end in ``r`` back-to-back copies of the same
    ``p`` tokens, where ``r`` is 2, or more for short periods so that ``r * p >= min_span`` (a
    reply never legitimately repeats a 16-token run at once; ``"1,000,000"`` is not a loop).
    ``None`` when there is none."""
    tail = list(tokens[-2 * max_period :])
    last = len(tail) - 1
    for period in range(1, max_period + 1):
        repeats = max(2, -(-min_span // period))
        span = repeats * period
        if span > len(tail):
            continue
        if tail[last] != tail[last - period]:  # cheap rejection before comparing whole copies
            continue
        unit = tail[-period:]
        if all(tail[len(tail) - span + i : len(tail) - span + i + period] == unit for i in range(0, span, period)):
            return period
    return None


class RepetitionGuard:
    """A stopping criterion for llama-cpp-python: true once the generated tokens (those after the
    first ``prompt_length``) end in a loop (:func:`repeating_period`)."""

    def __init__(self, prompt_length: int, **limits: int) -> None:
        self.prompt_length = prompt_length
        self.limits = limits
        self.period: int | None = None

    @property
    def hit(self) -> bool:
        return self.period is not None

    def __call__(self, input_ids: Any, logits: Any) -> bool:
        if self.period is None:
            generated = input_ids[self.prompt_length :]
            if len(generated) >= 8:
                tail = generated[-512:]
                self.period = repeating_period(tail.tolist() if hasattr(tail, "tolist") else list(tail), **self.limits)
        return self.period is not None

"""Kept llama.cpp states, so a prompt starts from the longest prefix any earlier call evaluated.

llama.cpp reuses the prefix a prompt shares with the *previous* call only. The solver alternates
prompts (plan, sub-answers, final answer; an eval run adds NaiveRAG's), so every question's
planner prompt, whose instructions and examples never change, would be evaluated from its first
token. :class:`PrefixStates` keeps the context state (KV cache) after each call, least recently
used out past a byte budget; before a call the state sharing the longest prefix with the prompt
is restored when it shares more than the live context does. llama-cpp-python's own ``LlamaRAMCache``
does the same but copies the logits of a whole batch with each state (``n_batch`` x vocabulary
floats, 311 MB for Qwen2.5 by its code) without counting them against its budget; these states hold the
context's own bytes only.

Only the prefix is reused: the rest of the prompt is evaluated as usual, and llama.cpp decodes at
least the prompt's last token before sampling. A reply is still not bit-for-bit the one a cold
evaluation gives, no more than with llama.cpp's own reuse of the previous call's prefix: KV values
computed in another batch differ in their last bits, which decides between two nearly tied next
tokens (36 of 40 replies equal with and without these states, BENCHMARKS.md).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["KeptState", "PrefixStates", "shared_prefix"]


def shared_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading tokens ``a`` and ``b`` have in common."""
    count = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        count += 1
    return count


@dataclass(frozen=True)
class KeptState:
    """A context state and the tokens it holds, in order."""

    tokens: tuple[int, ...]
    data: bytes


class PrefixStates:
    """States kept within ``capacity_bytes`` (least recently used out); the one sharing the
    longest prefix with a prompt is found by :meth:`best` and refreshed as recently used."""

    def __init__(self, capacity_bytes: int) -> None:
        if capacity_bytes <= 0:
            raise ValueError(f"a prefix cache needs a positive byte budget, got {capacity_bytes}")
        self.capacity_bytes = capacity_bytes
        self._states: OrderedDict[tuple[int, ...], KeptState] = OrderedDict()

    @property
    def size(self) -> int:
        return sum(len(state.data) for state in self._states.values())

    def __len__(self) -> int:
        return len(self._states)

    def keep(self, state: KeptState) -> None:
        """Keep ``state`` (replacing one with the same tokens), then drop the least recently used
        states until the rest fit; a state larger than the whole budget is not kept."""
        if not state.tokens or len(state.data) > self.capacity_bytes:
            return
        self._states.pop(state.tokens, None)
        self._states[state.tokens] = state
        while self.size > self.capacity_bytes:
            self._states.popitem(last=False)

    def best(self, prompt: Sequence[int]) -> tuple[KeptState, int] | None:
        """The kept state sharing the longest prefix with ``prompt`` and that length (``None``
        when none shares a token); the state becomes the most recently used."""
        found: tuple[KeptState, int] | None = None
        for state in self._states.values():
            length = shared_prefix(state.tokens, prompt)
            if length > 0 and (found is None or length > found[1]):
                found = (state, length)
        if found is not None:
            self._states.move_to_end(found[0].tokens)
        return found


def save_state(llama: Any) -> KeptState:
    """The live context of a ``llama_cpp.Llama``: its KV cache bytes and the tokens they hold."""
    import ctypes

    import llama_cpp

    size = llama_cpp.llama_state_get_size(llama._ctx.ctx)
    buffer = (ctypes.c_uint8 * int(size))()
    written = llama_cpp.llama_state_get_data(llama._ctx.ctx, buffer, size)
    return KeptState(tokens=tuple(int(t) for t in llama.input_ids[: llama.n_tokens]),
                     data=ctypes.string_at(buffer, int(written)))


def restore_state(llama: Any, state: KeptState) -> None:
    """Make ``state`` the live context of ``llama``; its next call reuses the shared prefix."""
    import ctypes

    import llama_cpp

    buffer = (ctypes.c_uint8 * len(state.data)).from_buffer_copy(state.data)
    if llama_cpp.llama_state_set_data(llama._ctx.ctx, buffer, len(state.data)) != len(state.data):
        raise RuntimeError("llama.cpp refused a kept context state")
    count = len(state.tokens)
    llama.input_ids[:count] = state.tokens
    llama.n_tokens = count
    llama._requires_eval = True  # the logits must come from a decode, not from the restored state

"""Greedy decoding under a llama.cpp grammar that shows the grammar the likeliest tokens first.

llama-cpp-python puts the grammar before greedy selection in its sampler chain, so at every step
the grammar checks each token of the vocabulary — 151,936 with Qwen2.5. On two cores that costs
40-50 ms a token, on top of ~100 ms of the model's own decoding (BENCHMARKS.md, "Where the solver's
time goes, and grammar-constrained decoding"). Greedy decoding under a grammar picks the likeliest token the grammar allows. When one
of the ``shortlist`` likeliest tokens is allowed, the best of those is that token, so the grammar
only needs to see them; only when none is allowed does it see the whole vocabulary. The chosen
token is the one llama.cpp's chain picks, ties included (the lower token id wins, as in its
greedy sampler), so replies do not change.

:func:`llama_class` returns llama-cpp-python's ``Llama`` with this sampler for greedy structured
calls (temperature 0, no penalties, no logits processors); every other call keeps its own chain.
"""

from __future__ import annotations

import ctypes
from functools import cache
from typing import Any

import numpy as np

__all__ = ["SHORTLIST", "GreedyGrammarSampler", "llama_class"]

#: tokens shown to the grammar before the whole vocabulary
SHORTLIST = 64


class GreedyGrammarSampler:
    """The sampler object llama-cpp-python's ``generate`` calls (``sample(ctx, idx) -> token``);
    it owns one llama.cpp grammar sampler, advanced by each chosen token."""

    def __init__(self, llama: Any, grammar: Any, *, shortlist: int = SHORTLIST) -> None:
        import llama_cpp

        if shortlist < 1:
            raise ValueError(f"the shortlist needs at least one token, got {shortlist}")
        self._api = llama_cpp
        self.shortlist = shortlist
        self.n_vocab = int(llama.n_vocab())
        self._grammar = llama_cpp.llama_sampler_init_grammar(
            llama._model.vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8"))
        if not self._grammar:
            raise ValueError("llama.cpp could not build a sampler from this grammar")
        #: steps the shortlist decided, and steps that needed the whole vocabulary
        self.shortlisted = 0
        self.full = 0

    def sample(self, ctx: Any, idx: int = -1) -> int:
        pointer = self._api.llama_get_logits_ith(ctx.ctx, idx)
        logits = np.ctypeslib.as_array(pointer, shape=(self.n_vocab,))
        size = min(self.shortlist, self.n_vocab)
        cutoff = np.partition(logits, self.n_vocab - size)[self.n_vocab - size]
        token = self._best(np.flatnonzero(logits >= cutoff), logits)  # ties at the cutoff all come in
        if token is None:
            self.full += 1
            token = self._best(np.arange(self.n_vocab), logits)
        else:
            self.shortlisted += 1
        if token is None:
            raise ValueError("the grammar allows no next token")
        self._api.llama_sampler_accept(self._grammar, token)
        return token

    def _best(self, ids: np.ndarray, logits: np.ndarray) -> int | None:
        """The likeliest of ``ids`` the grammar allows (the lowest id among equals), or ``None``."""
        api = self._api
        data = (api.llama_token_data * len(ids))()
        view = np.ctypeslib.as_array(data)
        view["id"] = ids
        view["logit"] = logits[ids]
        view["p"] = 0.0
        candidates = api.llama_token_data_array(
            data=ctypes.cast(data, api.llama_token_data_p), size=len(ids), selected=-1, sorted=False)
        api.llama_sampler_apply(self._grammar, ctypes.byref(candidates))
        kept = np.ctypeslib.as_array(candidates.data, shape=(int(candidates.size),))
        allowed = np.flatnonzero(np.isfinite(kept["logit"]))
        if not len(allowed):
            return None
        scores = kept["logit"][allowed]
        best = allowed[scores == scores.max()]
        return int(kept["id"][best].min())

    def close(self) -> None:
        if self._grammar:
            self._api.llama_sampler_free(self._grammar)
            self._grammar = None

    def __del__(self) -> None:
        self.close()


def llama_class(shortlist: int = SHORTLIST) -> type[Any]:
    """llama-cpp-python's ``Llama``, sampling greedy grammar-constrained calls with
    :class:`GreedyGrammarSampler` (``shortlist`` 0: the plain ``Llama``, its own sampler chain).
    Imports llama_cpp on every call, so a missing package raises ImportError each time."""
    from llama_cpp import Llama

    return Llama if shortlist == 0 else _shortlist_class(Llama, shortlist)


@cache
def _shortlist_class(base: type[Any], shortlist: int) -> type[Any]:
    class ShortlistLlama(base):  # type: ignore[misc,valid-type]
        def _init_sampler(self, **options: Any) -> Any:  # called with keywords only
            plain = (options.get("temp") == 0.0 and options.get("repeat_penalty", 1.0) == 1.0
                     and not options.get("frequency_penalty") and not options.get("presence_penalty")
                     and options.get("logits_processor") is None)
            if plain and options.get("grammar") is not None:
                return GreedyGrammarSampler(self, options["grammar"], shortlist=shortlist)
            return super()._init_sampler(**options)

    return ShortlistLlama

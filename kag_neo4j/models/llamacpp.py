"""The default chat model: a local GGUF file run in-process by llama-cpp-python.

No API key, no network. JSON schemas are enforced by a llama.cpp grammar, so structured replies
always parse (validation still runs, and a reply cut off by ``max_tokens`` is repaired).

Install: ``CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install llama-cpp-python==0.3.36`` — it compiles from
source; a native build crashes on CPUs that advertise AMX (SIGSEGV in the AMX matmul kernel).
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from kag_neo4j.errors import ModelError, ModelTimeoutError, ModelUnavailableError

from .base import REPETITION, Completion, CompletionRequest
from .chat import ChatLLM
from .grammar_sampler import SHORTLIST, llama_class
from .prefix_states import PrefixStates, restore_state, save_state, shared_prefix
from .registry import INSTALL_COMMAND, LLAMA_CPP_CMAKE_ARGS, LLAMA_CPP_REQUIREMENT
from .repetition import RepetitionGuard

LLAMA_CPP_INSTALL = f'CMAKE_ARGS="{LLAMA_CPP_CMAKE_ARGS}" pip install {LLAMA_CPP_REQUIREMENT}'


class _Deadline:
    """A llama.cpp stopping criterion that ends generation once ``deadline`` (monotonic) passes.

    Stopping criteria run in llama-cpp-python's Python token loop (logits processors run inside a
    ctypes callback, where an exception would be swallowed), so this is a real, prompt stop.
    """

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.hit = False

    def __call__(self, input_ids: Any, logits: Any) -> bool:
        if time.monotonic() > self.deadline:
            self.hit = True
        return self.hit


class LlamaCppLLM(ChatLLM):
    """A GGUF chat model through llama-cpp-python; the model is loaded on first use (or by :meth:`load`)."""

    provider = "llamacpp"

    def __init__(
        self,
        model_path: Path | str,
        *,
        model_id: str | None = None,
        n_ctx: int = 4096,
        n_threads: int = 2,
        seed: int = 0,
        loop_guard: bool = True,
        prefix_cache_mb: int = 0,
        grammar_shortlist: int = SHORTLIST,
        **options: Any,
    ) -> None:
        path = Path(model_path)
        super().__init__(model_id=model_id or path.name, **options)
        self.model_path: Path = path
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.seed = seed
        #: stop a reply that loops (:class:`RepetitionGuard`); the structured layer keeps what came before
        self.loop_guard = loop_guard
        #: MiB of context states kept after each call (0: none): a prompt then starts from the kept
        #: state sharing its longest prefix, not only from the previous call's (:mod:`.prefix_states`)
        self.prefix_states = PrefixStates(prefix_cache_mb << 20) if prefix_cache_mb > 0 else None
        if grammar_shortlist < 0:
            raise ValueError(f"grammar_shortlist must be >= 0, got {grammar_shortlist}")
        #: likeliest tokens a grammar sees before the whole vocabulary (0: llama.cpp's own chain; :mod:`.grammar_sampler`)
        self.grammar_shortlist = grammar_shortlist
        self.load_seconds: float | None = None
        self._llama: Any = None
        self._lock = threading.Lock()  # one llama.cpp context: one generation at a time
        self._last_perf: dict[str, float] | None = None
        self._chat_formatter: Any = None
        self._grammars: dict[str, Any] = {}
        self.retry_timeouts = False  # a local model is not faster the second time

    # ------------------------------------------------------------------ loading
    def load(self) -> None:
        """Load the weights now (otherwise the first call does)."""
        with self._lock:
            self._load_locked()

    def _load_locked(self) -> Any:
        if self._llama is not None:
            return self._llama
        try:
            Llama = llama_class(self.grammar_shortlist)
        except ImportError as exc:
            raise ModelUnavailableError(
                "the llamacpp provider needs llama-cpp-python, which is not installed; install it with: "
                f"{INSTALL_COMMAND} (it compiles it portably: {LLAMA_CPP_INSTALL})"
            ) from exc
        if not self.model_path.is_file():
            raise ModelUnavailableError(
                f"GGUF file {self.model_path} does not exist; install it with: {INSTALL_COMMAND} (or set KAG_LLM_MODEL)"
            )
        started = time.monotonic()
        try:
            self._llama = Llama(
                model_path=str(self.model_path),
                n_ctx=self.n_ctx,
                n_threads=self.n_threads,
                n_threads_batch=self.n_threads,
                seed=self.seed,
                verbose=False,
            )
        except (ValueError, RuntimeError, OSError) as exc:
            raise ModelUnavailableError(f"llama.cpp could not load {self.model_path}: {exc}") from exc
        self.load_seconds = time.monotonic() - started
        return self._llama

    def close(self) -> None:
        with self._lock:
            if self._llama is not None:
                self._llama.close()
                self._llama = None

    # ------------------------------------------------------------------ ChatLLM hooks
    @property
    def supports_structured_output(self) -> bool:
        return True  # a llama.cpp grammar

    def _cache_params(self, request: CompletionRequest) -> dict[str, Any]:
        guard = {} if self.loop_guard else {"loop_guard": False}  # keys of guarded replies stay as they were
        return {**super()._cache_params(request), "seed": self.seed, **guard}

    def _complete(self, request: CompletionRequest) -> Completion:
        max_tokens, temperature, schema, timeout = request.max_tokens, request.temperature, request.json_schema, request.timeout
        with self._lock:
            llama = self._load_locked()
            formatted = self._formatter(llama)(messages=[{"role": m.role, "content": m.content} for m in request.messages])
            prompt = llama.tokenize(
                formatted.prompt.encode("utf-8"), add_bos=not formatted.added_special, special=True
            )
            if len(prompt) + max_tokens > self.n_ctx:
                raise ModelError(
                    f"the prompt ({len(prompt)} tokens) plus max_tokens ({max_tokens}) does not fit the "
                    f"context window of {self.n_ctx} tokens. Fix: shorten the prompt, lower max_tokens, "
                    "or raise KAG_LLM_CONTEXT."
                )
            deadline = _Deadline(time.monotonic() + timeout)
            loop = RepetitionGuard(len(prompt))
            criteria = [*(formatted.stopping_criteria or []), deadline, *([loop] if self.loop_guard else [])]
            stop = formatted.stop if isinstance(formatted.stop, list) else [formatted.stop] if formatted.stop else []
            sampling: dict[str, Any] = {"temperature": temperature}
            if temperature == 0.0:
                sampling.update(top_k=1, repeat_penalty=1.0)
            self._restore_prefix(llama, prompt)
            self._reset_perf(llama)
            try:
                result = llama.create_completion(
                    prompt=prompt,
                    max_tokens=max_tokens,
                    stop=stop,
                    seed=self.seed,
                    stopping_criteria=self._criteria_list(criteria),
                    grammar=self._grammar(schema) if schema is not None else None,
                    **sampling,
                )
            except ValueError as exc:
                raise ModelError(f"llama.cpp rejected the request: {exc}") from exc
            self._last_perf = self._read_perf(llama)
            if self.prefix_states is not None:
                self.prefix_states.keep(save_state(llama))
        if deadline.hit:
            raise ModelTimeoutError(f"generation passed the {timeout:g}s timeout")
        choice = result["choices"][0]
        usage = result.get("usage") or {}
        return Completion(
            text=choice.get("text") or "",
            prompt_tokens=int(usage.get("prompt_tokens", len(prompt))),
            completion_tokens=int(usage.get("completion_tokens", 0)),
            finish_reason=REPETITION if loop.hit else choice.get("finish_reason"),
        )

    def _restore_prefix(self, llama: Any, prompt: list[int]) -> None:
        """Start from the kept state sharing the most of ``prompt`` when it shares more than the live context."""
        if self.prefix_states is None:
            return
        found = self.prefix_states.best(prompt)
        live = shared_prefix(llama.input_ids[: llama.n_tokens].tolist(), prompt)
        if found is not None and found[1] > live:
            restore_state(llama, found[0])

    def _formatter(self, llama: Any) -> Any:
        """The GGUF's own chat template (what ``create_chat_completion`` would use)."""
        if self._chat_formatter is None:
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            template = llama.metadata.get("tokenizer.chat_template")
            if not template:
                raise ModelUnavailableError(
                    f"{self.model_path.name} has no chat template in its metadata; use an instruct GGUF model"
                )
            eos_id, bos_id = llama.token_eos(), llama.token_bos()
            self._chat_formatter = Jinja2ChatFormatter(
                template=template,
                eos_token=llama._model.token_get_text(eos_id) if eos_id != -1 else "",
                bos_token=llama._model.token_get_text(bos_id) if bos_id != -1 else "",
                stop_token_ids=[eos_id],
            )
        return self._chat_formatter

    def _grammar(self, schema: dict[str, Any]) -> Any:
        """A llama.cpp grammar enforcing ``schema`` (memoised per schema)."""
        from llama_cpp.llama_grammar import LlamaGrammar

        key = json.dumps(schema, sort_keys=True)
        grammar = self._grammars.get(key)
        if grammar is None:
            try:
                grammar = LlamaGrammar.from_json_schema(key, verbose=False)
            except Exception as exc:
                raise ModelError(f"llama.cpp cannot turn this JSON schema into a grammar: {exc}") from exc
            self._grammars[key] = grammar
        return grammar

    @staticmethod
    def _criteria_list(criteria: list[Any]) -> Any:
        from llama_cpp import StoppingCriteriaList

        return StoppingCriteriaList(criteria)

    # ------------------------------------------------------------------ performance counters
    @staticmethod
    def _reset_perf(llama: Any) -> None:
        try:
            import llama_cpp

            llama_cpp.llama_perf_context_reset(llama._ctx.ctx)
        except (AttributeError, ImportError, TypeError):
            pass

    @staticmethod
    def _read_perf(llama: Any) -> dict[str, float] | None:
        try:
            import llama_cpp

            data = llama_cpp.llama_perf_context(llama._ctx.ctx)
        except (AttributeError, ImportError, TypeError):
            return None
        return {
            "prompt_tokens": float(data.n_p_eval),
            "prompt_seconds": data.t_p_eval_ms / 1000.0,
            "generated_tokens": float(data.n_eval),
            "generation_seconds": data.t_eval_ms / 1000.0,
        }

    def last_perf(self) -> dict[str, float] | None:
        """llama.cpp's own counters for the last call: prompt/generation tokens and seconds."""
        return self._last_perf

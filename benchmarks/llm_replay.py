"""The solver's model calls replayed under llama.cpp settings: the prefix cache (``KAG_LLM_PREFIX_CACHE_MB``)
and the grammar shortlist (:mod:`kag_neo4j.models.grammar_sampler`). Prompt tokens evaluated, seconds,
and the seconds outside llama.cpp's own prompt and decode counters (sampling: the grammar's cost).

    python benchmarks/llm_replay.py ../shared/benchmarks/musique/questions.dev.json --limit 8
    python benchmarks/llm_replay.py QUESTIONS --limit 8 --cache-mb 0,512,2048 --out prefix.json
    python benchmarks/llm_replay.py QUESTIONS --limit 8 --cache-mb 512 --shortlist 0,64

Replays, for each of the first N MuSiQue-format questions (``paragraphs`` with ``is_supporting``),
the calls an ``eval --qa --methods naive,ours-solver`` run makes in that order: the NaiveRAG answer
(5 passages), the plan, two sub-answers (4 passages each) and the final answer, built with the
product's own prompt builders, greedy, with the product's ``max_tokens``. Each setting runs the whole
sequence with a freshly loaded model (warmed on one call outside the sample). llama.cpp reuses the
prefix of the previous prompt by itself; with a prefix cache it restores the kept state that shares
the longest prefix with the prompt. Figures per call kind: prompt tokens sent, those llama.cpp
evaluated (its own counter), seconds, and seconds outside llama.cpp's prompt and decode counters;
then how many replies equal the first setting's (a
reply can differ where two next tokens nearly tie: KV values computed in another batch differ in
their last bits). The seconds are wall time: run it on an otherwise idle machine.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kag_neo4j.config import Settings
from kag_neo4j.models.base import CompletionRequest
from kag_neo4j.models.grammar_sampler import SHORTLIST
from kag_neo4j.models.install import resolve_gguf
from kag_neo4j.models.llamacpp import LlamaCppLLM
from kag_neo4j.prompts.answer import AnswerResponse, build_answer_messages
from kag_neo4j.prompts.context import Passage
from kag_neo4j.prompts.naive_answer import NaivePassage, naive_answer_messages
from kag_neo4j.prompts.plan import PlanResponse, build_plan_messages
from kag_neo4j.prompts.subanswer import SubAnswerResponse, build_subanswer_messages
from kag_neo4j.solver.runtime import SolverConfig

KINDS = ("naive", "plan", "subanswer", "answer")
WARM_UP = "Who founded the Harrow Valley Railway?"


@dataclass
class Call:
    kind: str
    request: CompletionRequest


@dataclass
class Setting:
    cache_mb: int
    shortlist: int
    replies: list[str] = field(default_factory=list)
    sent: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    evaluated: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    seconds: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    #: wall seconds minus llama.cpp's prompt and decode seconds: sampling (the grammar) and Python
    outside: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))

    @property
    def name(self) -> str:
        cache = "off" if self.cache_mb == 0 else f"{self.cache_mb} MiB"
        return f"cache {cache}, shortlist {self.shortlist or 'off'}"


def _passages(question: dict[str, Any], offset: int, count: int) -> list[Passage]:
    paragraphs = sorted(question["paragraphs"], key=lambda p: not p.get("is_supporting"))  # gold first, as a hit
    chosen = paragraphs[offset:offset + count]
    return [Passage(chunk_id=str(p["idx"]), title=p["title"], text=p["paragraph_text"]) for p in chosen]


def calls_of(question: dict[str, Any], config: SolverConfig) -> list[Call]:
    """The calls of one question, in the order an eval run with naive and ours-solver makes them."""
    text = question["question"]
    five = _passages(question, 0, 5)

    def request(messages: Any, max_tokens: int, schema: type | None) -> CompletionRequest:
        return CompletionRequest(messages=tuple(messages), max_tokens=max_tokens,
                                 json_schema=schema.model_json_schema() if schema else None)

    naive = naive_answer_messages(text, [NaivePassage(title=p.title, text=p.text) for p in five])
    hops = [step["question"] for step in question.get("question_decomposition", [])][:2] or [text, text]
    return [
        Call("naive", request(naive, 64, None)),
        Call("plan", request(build_plan_messages(text, "", "en"), config.plan_max_tokens, PlanResponse)),
        *(Call("subanswer", request(build_subanswer_messages(hop, language="en", passages=_passages(question, i, 4),
                                                             budget=config.budget),
                                    config.subanswer_max_tokens, SubAnswerResponse))
          for i, hop in enumerate(hops)),
        Call("answer", request(build_answer_messages(text, language="en", passages=five, budget=config.budget),
                               config.answer_max_tokens, AnswerResponse)),
    ]


def run(path: Path, cache_mb: int, shortlist: int, sequence: list[Call], threads: int) -> Setting:
    llm = LlamaCppLLM(path, n_threads=threads, prefix_cache_mb=cache_mb, grammar_shortlist=shortlist)
    llm.load()
    warm = calls_of({"question": WARM_UP, "paragraphs": [
        {"idx": 0, "title": "Harrow Valley Railway", "paragraph_text": "Ada Pembroke founded it in 1871.",
         "is_supporting": True}]}, SolverConfig())[0]
    llm._complete(warm.request)
    setting = Setting(cache_mb, shortlist)
    for number, call in enumerate(sequence, start=1):
        started = time.monotonic()
        completion = llm._complete(call.request)
        seconds = time.monotonic() - started
        perf = llm.last_perf() or {}
        setting.replies.append(completion.text)
        setting.sent[call.kind].append(completion.prompt_tokens)
        setting.evaluated[call.kind].append(int(perf.get("prompt_tokens", completion.prompt_tokens)))
        setting.seconds[call.kind].append(seconds)
        setting.outside[call.kind].append(seconds - perf.get("prompt_seconds", 0.0) - perf.get("generation_seconds", 0.0))
        print(f"  {setting.name}, call {number}/{len(sequence)} {call.kind}: {completion.prompt_tokens} sent, "
              f"{int(perf.get('prompt_tokens', -1))} evaluated, {seconds:.1f} s", flush=True)
    llm.close()
    return setting


def _pick(table: dict[str, list[Any]], kind: str) -> list[Any]:
    return [value for k in KINDS for value in table[k]] if kind == "all" else table[kind]


def report(settings: list[Setting], questions: int) -> None:
    base = settings[0]
    print(f"\n{questions} questions, {sum(len(v) for v in base.sent.values())} calls per setting\n")
    print("| call | setting | prompt tokens sent (mean) | evaluated (mean) | evaluated / sent | seconds (mean) | "
          "outside llama.cpp's counters (mean s) | seconds / first setting |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for kind in [*KINDS, "all"]:
        base_seconds = sum(_pick(base.seconds, kind))
        for setting in settings:
            sent, evaluated, seconds = (_pick(setting.sent, kind), _pick(setting.evaluated, kind),
                                        _pick(setting.seconds, kind))
            print(f"| {kind} | {setting.name} | {statistics.mean(sent):.0f} | {statistics.mean(evaluated):.0f} | "
                  f"{sum(evaluated) / max(1, sum(sent)):.2f} | {statistics.mean(seconds):.1f} | "
                  f"{statistics.mean(_pick(setting.outside, kind)):.2f} | {sum(seconds) / base_seconds:.2f} |")
    for setting in settings[1:]:
        same = sum(a == b for a, b in zip(base.replies, setting.replies, strict=True))
        print(f"\nreplies equal to the first setting's with {setting.name}: {same} of {len(base.replies)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("questions", type=Path, help="a MuSiQue-format question file")
    parser.add_argument("--limit", type=int, default=8)
    parser.add_argument("--cache-mb", default="0,1024", help="comma-separated prefix cache sizes, MiB (0: off)")
    parser.add_argument("--shortlist", default=str(SHORTLIST),
                        help="comma-separated grammar shortlists (0: llama.cpp's own chain); each with each cache size")
    parser.add_argument("--out", type=Path, help="write every figure and reply as JSON")
    args = parser.parse_args(argv)
    questions = json.loads(args.questions.read_text(encoding="utf-8"))[: args.limit]
    config = SolverConfig()
    sequence = [call for question in questions for call in calls_of(question, config)]
    settings = Settings()
    path = resolve_gguf(settings.llm_model, settings.resolved_model_cache).path
    found = []
    for cache_mb in (int(value) for value in args.cache_mb.split(",")):
        for shortlist in (int(value) for value in args.shortlist.split(",")):
            print(f"setting: prefix cache {cache_mb} MiB, grammar shortlist {shortlist}", flush=True)
            found.append(run(path, cache_mb, shortlist, sequence, settings.llm_threads))
    report(found, len(questions))
    if args.out:
        args.out.write_text(json.dumps([{"cache_mb": s.cache_mb, "shortlist": s.shortlist, "outside": s.outside, "replies": s.replies, "sent": s.sent,
                                         "evaluated": s.evaluated, "seconds": s.seconds} for s in found],
                                       ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

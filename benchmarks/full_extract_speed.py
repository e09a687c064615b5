"""Full (LLM) extraction: speed and output of its variants on a fixed sample, in one run.

    python benchmarks/full_extract_speed.py --schema ../shared/benchmarks/schemas/MuSiQue.schema
    python benchmarks/full_extract_speed.py --limit 6 --variants rows       # a quick look

The sample is ``tests/fixtures/extraction/passages.json`` (16 MuSiQue + 16 HotpotQA supporting
paragraphs). Each variant extracts every passage with a fresh offline model (the configured GGUF,
no response cache); the model is loaded and warmed on a passage outside the sample first.
Variants:

* ``before`` — keyed objects per item, no loop guard (the default until this benchmark);
* ``objects`` — keyed objects with the loop guard;
* ``rows-whole`` — positional rows with the loop guard, each chunk asked once (unless cut off);
* ``rows`` — the same, and a reply naming entities but no fact is extracted again in halves (the
  default now).

Prints per chunk as it goes, then two tables: chunks per minute (and the ratio to the first
variant), seconds per chunk, completion tokens, entities and relations per chunk, the share of
entities typed with a schema type, failed chunks and replies stopped by the loop guard; and where
the time went (prompt tokens sent and those llama.cpp evaluated — the rest came from its KV cache
of the previous prompt, so the fixed system prompt is not paid per chunk — generation, and time
outside llama.cpp's counters: grammar, sampling, Python). Then the verdicts of the hand-checked
facts (``tests/fixtures/extraction/checked_facts.json``) per variant. Writes every extraction to
``--out`` (JSON) for checking facts against the passages.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from kag_neo4j.builder.extract import FullExtractor, schema_view
from kag_neo4j.builder.extract.full import ReplyFormat
from kag_neo4j.builder.extract.schema_check import GENERIC_ENTITY
from kag_neo4j.builder.records import ChunkExtraction, ChunkRecord
from kag_neo4j.models.base import REPETITION
from kag_neo4j.models.llamacpp import LlamaCppLLM

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "extraction"
SAMPLE = FIXTURES / "passages.json"
CHECKED = FIXTURES / "checked_facts.json"
#: name -> (reply format, loop guard, split factless replies)
VARIANTS: dict[str, tuple[ReplyFormat, bool, bool]] = {
    "before": ("objects", False, False), "objects": ("objects", True, False),
    "rows-whole": ("rows", True, False), "rows": ("rows", True, True)}
WARM_UP = "The Harrow Valley Railway opened in 1871 between Millbrook and Oakley; Ada Pembroke was its first engineer."


@dataclass
class Run:
    variant: str
    seconds: list[float] = field(default_factory=list)
    extractions: list[ChunkExtraction | None] = field(default_factory=list)
    completion_tokens: int = 0
    prompt_tokens: int = 0
    calls: int = 0
    loops: int = 0
    perf: dict[str, float] = field(default_factory=dict)


class _Counting(LlamaCppLLM):
    """The offline model, counting the replies its loop guard stopped and summing llama.cpp's own
    counters (prompt tokens actually evaluated — the rest came from the KV cache — and seconds)."""

    def __init__(self, *args, **options) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **options)
        self.loops = 0
        self.perf: dict[str, float] = {}

    def _complete(self, request):  # type: ignore[no-untyped-def]
        completion = super()._complete(request)
        self.loops += completion.finish_reason == REPETITION
        for key, value in (self.last_perf() or {}).items():
            self.perf[key] = self.perf.get(key, 0.0) + value
        return completion


def chunk_of(passage: dict) -> ChunkRecord:
    return ChunkRecord(id=passage["id"], document_id=passage["id"], text=passage["text"], title=passage["title"],
                       position=0, paragraph=0, index=0)


def run_variant(name: str, passages: list[dict], model: Path, schema: object | None, threads: int) -> Run:
    reply_format, guard, split_factless = VARIANTS[name]
    llm = _Counting(model, loop_guard=guard, n_threads=threads)
    llm.load()
    extractor = FullExtractor(llm, schema=schema, reply_format=reply_format,  # type: ignore[arg-type]
                              split_factless=split_factless)
    extractor.extract_many([chunk_of({"id": "warm-up", "title": "Harrow Valley Railway", "text": WARM_UP})])
    llm.usage.reset()
    llm.loops, llm.perf = 0, {}
    run = Run(name)
    for number, passage in enumerate(passages, 1):
        started = time.perf_counter()
        batch = extractor.extract_many([chunk_of(passage)])
        run.seconds.append(time.perf_counter() - started)
        extraction = batch.extractions[0] if batch.extractions else None
        run.extractions.append(extraction)
        state = (f"{len(extraction.entities)} entities, {len(extraction.relations)} relations" if extraction
                 else f"failed: {batch.failures[0].reason[:80]}")
        print(f"  {name:8} {number:2}/{len(passages)} {passage['id']:12} {run.seconds[-1]:6.1f} s  {state}", flush=True)
    usage = llm.usage.by_stage().get("extract")
    run.completion_tokens = usage.completion_tokens if usage else 0
    run.prompt_tokens = usage.prompt_tokens if usage else 0
    run.calls = usage.calls if usage else 0
    run.loops, run.perf = llm.loops, llm.perf
    llm.close()
    return run


def row(run: Run, baseline: Run | None) -> str:
    done = [e for e in run.extractions if e is not None]
    chunks = len(run.extractions)
    total = sum(run.seconds)
    per_minute = chunks / total * 60
    ratio = f"{per_minute / (len(baseline.extractions) / sum(baseline.seconds) * 60):.2f}x" if baseline else "1.00x"
    entities = [entity for e in done for entity in e.entities]
    relations = sum(len(e.relations) for e in done)
    typed = sum(entity.type != GENERIC_ENTITY for entity in entities) / len(entities) if entities else 0.0
    return (f"| {run.variant} | {chunks} | {total:.0f} | {per_minute:.2f} ({ratio}) | {statistics.median(run.seconds):.1f} | "
            f"{run.completion_tokens / chunks:.0f} | {run.calls} | {len(entities) / chunks:.1f} | {relations / chunks:.1f} | "
            f"{typed:.0%} | {chunks - len(done)} | {run.loops} |")


def cost_row(run: Run) -> str:
    """Where the time went: prompt tokens sent and evaluated (the rest reused from the KV cache),
    generation, and what llama.cpp's counters do not cover (grammar, sampling, Python)."""
    chunks, total = len(run.extractions), sum(run.seconds)
    evaluated, prompt_s = run.perf.get("prompt_tokens", 0.0), run.perf.get("prompt_seconds", 0.0)
    generation_s = run.perf.get("generation_seconds", 0.0)
    other = total - prompt_s - generation_s
    return (f"| {run.variant} | {run.prompt_tokens / chunks:.0f} | {evaluated / chunks:.0f} | {prompt_s / chunks:.1f} | "
            f"{run.perf.get('generated_tokens', 0.0) / chunks:.0f} | {generation_s / chunks:.1f} | {other / chunks:.1f} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sample", type=Path, default=SAMPLE)
    parser.add_argument("--limit", type=int, default=0, help="only the first N passages (0: all)")
    parser.add_argument("--variants", default="before,rows", help=f"comma-separated, of {', '.join(VARIANTS)}")
    parser.add_argument("--schema", type=Path, default=None, help="an SPG .schema file (schema-constrained extraction)")
    parser.add_argument("--model", type=Path, default=None, help="a GGUF file (default: the configured offline model)")
    parser.add_argument("--threads", type=int, default=2, help="llama.cpp threads")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/full_extract_speed.json"))
    args = parser.parse_args(argv)

    names = [name.strip() for name in args.variants.split(",") if name.strip()]
    unknown = [name for name in names if name not in VARIANTS]
    if unknown:
        parser.error(f"unknown variant(s) {', '.join(unknown)}; choose from {', '.join(VARIANTS)}")
    passages = json.loads(args.sample.read_text(encoding="utf-8"))
    passages = passages[: args.limit] if args.limit else passages
    schema = None
    if args.schema is not None:
        from kag_neo4j.schema import load_schema

        schema = schema_view(load_schema(args.schema))
    model = args.model
    if model is None:
        from kag_neo4j.config import Settings
        from kag_neo4j.models.install import resolve_gguf

        settings = Settings()
        model = resolve_gguf(settings.llm_model, settings.resolved_model_cache).path
    print(f"{len(passages)} passages from {args.sample}, model {model.name}, schema {args.schema or 'none'}")
    runs = [run_variant(name, passages, model, schema, args.threads) for name in names]

    print()
    print("| variant | chunks | seconds | chunks/min (vs first) | s/chunk p50 | completion tokens/chunk | calls "
          "| entities/chunk | relations/chunk | typed entities | failed | loops stopped |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for run in runs:
        print(row(run, runs[0] if run is not runs[0] else None))
    print("\n| variant | prompt tokens/chunk | evaluated (not from the KV cache) | prompt s/chunk "
          "| generated tokens/chunk | generation s/chunk | other s/chunk |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for run in runs:
        print(cost_row(run))
    if CHECKED.is_file():
        checked = json.loads(CHECKED.read_text(encoding="utf-8"))
        print(f"\nhand-checked facts ({CHECKED.name}: the first facts the schema check keeps of each passage, "
              "from the recorded runs, not from this one):")
        for variant in dict.fromkeys(fact["variant"] for fact in checked):
            verdicts = Counter(fact["verdict"] for fact in checked if fact["variant"] == variant)
            total = sum(verdicts.values())
            print(f"  {variant:8} {verdicts['correct']}/{total} correct; "
                  + ", ".join(f"{verdict} {count}" for verdict, count in sorted(verdicts.items()) if verdict != "correct"))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({
        run.variant: [
            {"passage": passage["id"], "seconds": round(seconds, 2), "extraction": e.model_dump() if e else None}
            for passage, seconds, e in zip(passages, run.seconds, run.extractions)
        ] for run in runs
    }, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"\nextractions written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Light-mode extraction speed on a corpus (read + split + light extract, no database), and its
cost against full (LLM) extraction.

    python benchmarks/extract_speed.py ../shared/benchmarks/musique/corpus.json
    python benchmarks/extract_speed.py CORPUS --limit 500 --full-sample 5   # also time the LLM

Prints: documents, chunks, seconds per stage, chunks/s, entities and relations per chunk, and the
token cost of full mode (prompt tokens of every chunk's real prompt, plus the completion tokens
measured on ``--full-sample`` chunks with the configured LLM, or an assumed average without).
Light mode uses no LLM tokens at all.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from kag_neo4j.builder.extract import FullExtractor, LightExtractor, schema_view
from kag_neo4j.builder.normalise import normalise_extraction
from kag_neo4j.builder.readers import ReadReport, read_path
from kag_neo4j.builder.split import split_document
from kag_neo4j.models.chat import estimate_tokens

#: completion tokens per chunk assumed when no full-mode sample is run (226 measured with
#: Qwen2.5-Coder-1.5B, grammar-constrained, on MuSiQue passages of ~450 characters)
ASSUMED_COMPLETION_TOKENS = 230


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path, help="a corpus file or folder (e.g. musique/corpus.json)")
    parser.add_argument("--limit", type=int, default=0, help="only the first N documents (0: all)")
    parser.add_argument("--max-chars", type=int, default=1200)
    parser.add_argument("--overlap", type=int, default=150)
    parser.add_argument("--batch-size", type=int, default=64, help="spaCy nlp.pipe batch size")
    parser.add_argument("--schema", type=Path, default=None, help="an SPG .schema file (schema-constrained)")
    parser.add_argument(
        "--full-sample",
        type=int,
        default=0,
        help="also run full extraction on N chunks with the configured LLM (no cache)",
    )
    args = parser.parse_args(argv)

    schema = None
    if args.schema is not None:
        from kag_neo4j.schema import load_schema

        schema = schema_view(load_schema(args.schema))

    started = time.perf_counter()
    report = ReadReport()
    documents = list(read_path(args.corpus, report=report))
    if args.limit:
        documents = documents[: args.limit]
    read_seconds = time.perf_counter() - started

    started = time.perf_counter()
    chunks = [
        chunk
        for document in documents
        for chunk in split_document(document, max_chars=args.max_chars, overlap=args.overlap)
    ]
    split_seconds = time.perf_counter() - started
    if not chunks:
        print(f"no chunks from {args.corpus}; failures: {report.failures}", file=sys.stderr)
        return 1

    extractor = LightExtractor(schema=schema, batch_size=args.batch_size)
    started = time.perf_counter()
    extractor.extract_many(chunks[:2])  # load the models outside the timed run
    load_seconds = time.perf_counter() - started
    started = time.perf_counter()
    extractions = [normalise_extraction(e) for e in extractor.extract_many(chunks).extractions]
    extract_seconds = time.perf_counter() - started

    total = read_seconds + split_seconds + extract_seconds
    entities = sum(len(e.entities) for e in extractions)
    relations = sum(len(e.relations) for e in extractions)
    characters = sum(len(c.text) for c in chunks)
    print(f"corpus            {args.corpus}")
    print(f"documents         {len(documents)} (read failures: {len(report.failures)})")
    print(f"chunks            {len(chunks)} ({characters:,} characters, mean {characters / len(chunks):.0f})")
    print(f"read              {read_seconds:8.2f} s")
    print(f"split             {split_seconds:8.2f} s")
    print(f"model load        {load_seconds:8.2f} s (once per process, not counted below)")
    print(f"light extract     {extract_seconds:8.2f} s")
    print(f"throughput        {len(chunks) / total:8.1f} chunks/s (read + split + light extract)")
    print(f"                  {len(chunks) / extract_seconds:8.1f} chunks/s (light extract alone)")
    print(f"entities/chunk    {entities / len(chunks):8.2f}")
    print(f"relations/chunk   {relations / len(chunks):8.2f}")

    # ------------------------------------------------------------------ cost against full mode
    prompt_builder = FullExtractor(llm=None, schema=schema)  # type: ignore[arg-type]  # prompts only
    prompt_tokens = [sum(estimate_tokens(m.content) for m in prompt_builder.messages(c)) for c in chunks]
    completion_per_chunk = float(ASSUMED_COMPLETION_TOKENS)
    source = f"assumed {ASSUMED_COMPLETION_TOKENS}"
    if args.full_sample:
        from kag_neo4j.models import build_llm
        from kag_neo4j.models.cache import NullCache

        llm = build_llm(cache=NullCache())
        full = FullExtractor(llm, schema=schema)
        sample = chunks[: args.full_sample]
        started = time.perf_counter()
        batch = full.extract_many(sample)
        seconds = time.perf_counter() - started
        usage = llm.usage.by_stage().get("extract")
        if usage is not None and usage.calls:
            completion_per_chunk = usage.completion_tokens / len(sample)
            measured_prompt = usage.prompt_tokens / len(sample)
            source = f"measured on {len(sample)} chunks"
            print(
                f"full sample       {len(sample)} chunks in {seconds:.1f} s ({seconds / len(sample):.1f} s/chunk, "
                f"{usage.calls} calls, {len(batch.failures)} failed), model {llm.model_id}"
            )
            print(
                f"                  prompt {measured_prompt:.0f} + completion {completion_per_chunk:.0f} tokens/chunk "
                f"(provider count); {sum(len(e.entities) for e in batch.extractions) / max(1, len(batch.extractions)):.1f} "
                "entities/chunk"
            )
            full_seconds = seconds / len(sample) * len(chunks)
            print(
                f"                  full mode on the whole corpus would take ~{full_seconds / 3600:.1f} h on this machine "
                f"vs {total:.0f} s light"
            )
    full_tokens = sum(prompt_tokens) + completion_per_chunk * len(chunks)
    print(
        f"full-mode tokens  {full_tokens:,.0f} (prompt ~{statistics.mean(prompt_tokens):.0f}/chunk estimated, "
        f"completion {completion_per_chunk:.0f}/chunk {source}) = {full_tokens / characters * 100_000:,.0f} per 100k chars"
    )
    print("light-mode tokens 0 (-100% LLM tokens vs full; KAG reports -89% for its light mode)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

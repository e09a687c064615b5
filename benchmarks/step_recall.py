"""Step recall: the solver's step retrieval on gold hops, without an LLM.

MuSiQue gives each question its hops: a sub-question (``#1`` standing for the first hop's
answer), the hop's answer and its supporting paragraph. 2Wiki gives its evidence triples
(subject, relation, object), each backed by the subject's page: a hop is asked here as "What is
the <relation> of <subject>?" (a comparison's two triples are both "first"). Each hop is
retrieved the way a solver Retrieval step retrieves
(``kag_neo4j.solver.evidence_search.retrieve_chunks``): the sub-question with the previous
answers filled in, its names (the sub-question's mentions and the answers it builds on) linked
to entities as PageRank seeds (``link_entity``, the best two) and looked up by key
(``seed_keys``: entities and the documents they title), ``chunk_k`` chunks. A hop is a hit when
its supporting passage is among them. Variants are ``RetrievalConfig`` overrides of the solver's
step configuration (``SolverConfig().retrieval``); the table gives each one's hit rate on first
and later hops, and the paired difference to ``step`` with a bootstrap 95 % interval
(``metrics.paired_bootstrap``).

    kag-neo4j eval musique --limit 50 --data-dir ../shared/benchmarks --methods dense   # loads the corpus
    python benchmarks/step_recall.py musique --data-dir ../shared/benchmarks

This isolates retrieval from planning: the planner's own sub-questions and anchors differ from
the gold ones, so these are upper bounds for the steps, not the solver's recall (``ours-solver``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from kag_neo4j.config import Settings
from kag_neo4j.eval import metrics
from kag_neo4j.eval.datasets import load_corpus, resolve_dataset, unit_of
from kag_neo4j.models.factory import build_embedder
from kag_neo4j.solver.linking import link_entity
from kag_neo4j.solver.mentions import question_mentions
from kag_neo4j.solver.retrieval import RetrievalWeights, hybrid_retrieval, seed_keys
from kag_neo4j.solver.runtime import SolverConfig
from kag_neo4j.store.database import Database

from recall_sweep import chosen_variants  # the sibling script (benchmarks/ is on sys.path when run)

#: name -> RetrievalConfig overrides of the solver's step retrieval, and whether names are looked up by key
VARIANTS: dict[str, tuple[dict[str, Any], bool]] = {
    "dense": ({"weights": {"dense": 1.0, "fulltext": 0.0, "ppr": 0.0}}, False),
    "step": ({"seed_titles": False}, False),  # before: linked entities only
    "step+keys": ({"seed_titles": False}, True),  # + exact entity links by key
    "step+titles": ({}, True),  # the current step retrieval: + the documents the names title
    "step+titles_kppr5": ({"k_ppr": 5}, True),
    "step+titles_kppr10": ({"k_ppr": 10}, True),
}

_PLACEHOLDER = re.compile(r"#(\d+)")


def musique_hops(path: Path, limit: int) -> list[dict[str, Any]]:
    """Every hop of the first ``limit`` questions: its text (answers filled in), names, gold unit."""
    rows = []
    for question in json.loads(path.read_text(encoding="utf-8"))[:limit]:
        paragraphs = {p["idx"]: p for p in question["paragraphs"]}
        answers: list[str] = []
        for number, hop in enumerate(question["question_decomposition"]):
            used = [answers[int(ref) - 1] for ref in _PLACEHOLDER.findall(hop["question"]) if int(ref) <= len(answers)]
            text = _PLACEHOLDER.sub(lambda m: answers[int(m.group(1)) - 1] if int(m.group(1)) <= len(answers) else "",
                                    hop["question"])
            gold = paragraphs[hop["paragraph_support_idx"]]
            rows.append({"question": question["id"], "hop": number, "text": text,
                         "names": list(dict.fromkeys([*used, *question_mentions(text, ner=True)])),
                         "gold": unit_of("paragraph", gold["title"], gold["paragraph_text"])})
            answers.append(hop["answer"])
    return rows


def wiki_hops(path: Path, limit: int) -> list[dict[str, Any]]:
    """Every evidence triple of the first ``limit`` questions, asked of its subject's page."""
    rows = []
    for question in json.loads(path.read_text(encoding="utf-8"))[:limit]:
        found: set[str] = set()  # the objects of earlier triples: a subject among them is a later hop
        for subject, relation, answer in question["evidences"]:
            text = f"What is the {relation} of {subject}?"
            rows.append({"question": question["_id"], "hop": int(subject in found), "text": text,
                         "names": list(dict.fromkeys([subject, *question_mentions(text, ner=True)])),
                         "gold": unit_of("title", subject, "")})
            found.add(answer)
    return rows


HOPS = {"musique": (musique_hops, "paragraph"), "2wiki": (wiki_hops, "title")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset", choices=sorted(HOPS), help="loaded by `kag-neo4j eval <dataset>` first")
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--variants", default=",".join(VARIANTS), help=f"comma-separated, of: {', '.join(VARIANTS)}")
    parser.add_argument("--data-dir", type=Path, default=None)
    args = parser.parse_args(argv)
    names = chosen_variants(parser, args.variants, VARIANTS)
    files = resolve_dataset(args.dataset, data_dir=args.data_dir)
    read_hops, recall_unit = HOPS[args.dataset]
    units = load_corpus(files.corpus).units(recall_unit)
    rows = read_hops(files.questions, args.limit)
    solver = SolverConfig()
    settings = Settings()
    embedder = build_embedder(settings)
    hits: dict[str, list[float]] = {}
    with Database.connect(settings) as db:
        vectors = [embedder.embed_query(row["text"]) for row in rows]
        seeds = [list(dict.fromkeys(e.id for name in row["names"]
                                    for e in link_entity(db, embedder, name, k=solver.link_k)[:2]))
                 for row in rows]
        for name in names:
            overrides, by_key = VARIANTS[name]
            config = solver.retrieval.model_copy(update={
                "k": solver.chunk_k,
                **{key: RetrievalWeights(**value) if key == "weights" else value for key, value in overrides.items()}})
            found = []
            for index, row in enumerate(rows):
                ppr = config.weights.ppr > 0
                chunks = hybrid_retrieval(db, embedder, row["text"], seed_entity_ids=seeds[index] if ppr else [],
                                          seed_keys=seed_keys(row["names"]) if ppr and by_key else [],
                                          config=config, query_vector=vectors[index]).chunks
                found.append(1.0 if row["gold"] in {units.get(c.document_id or "") for c in chunks} else 0.0)
            hits[name] = found
            print(f"{name}: {100 * sum(found) / len(found):.1f}% of {len(found)} hops", file=sys.stderr, flush=True)
    first = [i for i, row in enumerate(rows) if row["hop"] == 0]
    later = [i for i, row in enumerate(rows) if row["hop"] > 0]
    baseline = hits.get("step")
    print(f"\n{args.dataset}: gold hops of the first {args.limit} dev questions ({len(first)} first hops, "
          f"{len(later)} later), {solver.chunk_k} chunks per step\n")
    print("| variant | first hops | later hops | all | Δ all vs step [95% CI] |")
    print("|---|---|---|---|---|")
    for name, found in hits.items():
        cells = [f"{100 * sum(found[i] for i in part) / len(part):.1f}" for part in (first, later, range(len(rows)))]
        delta = ""
        if baseline is not None and name != "step":
            difference = metrics.paired_bootstrap(found, baseline)
            delta = f"{100 * difference.mean:+.1f} [{100 * difference.low:+.1f}, {100 * difference.high:+.1f}]"
        print(f"| {name} | {' | '.join(cells)} | {delta} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

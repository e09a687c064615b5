"""Does the static planner's plan fit the question? Measured against MuSiQue's gold decompositions.

    python benchmarks/planner_fit.py ../shared/benchmarks/musique/questions.dev.json --limit 50
    python benchmarks/planner_fit.py QUESTIONS --schema-from-db     # the summary of the connected graph
    python benchmarks/planner_fit.py QUESTIONS --out plans.jsonl; ... --report plans.jsonl

For each question the planner prompt the solver sends (``build_plan_messages`` with the registry's
operator lines) goes to the configured LLM once; a reply that does not parse is sent back once with
the error, as ``Planner.plan`` does with ``SolverConfig(plan_repairs=1)`` (the default is 0; this
measures what one repair gives); a second failure is the fallback plan. As there, a plan that
names an entity of a worked example the question does not name fails (``not_copied``). Reported:
the share of replies that parse on the first try, after the repair, and the fallbacks; the share of
plans whose number of Retrieval actions equals the number of hops of the gold
``question_decomposition``; the table of gold hops against planned hops; calls, tokens and seconds
per question. The response cache is off, so every call is a real one.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

from pydantic import BaseModel

from kag_neo4j.config import load_settings
from kag_neo4j.errors import LogicalFormError, ModelError
from kag_neo4j.models import build_llm
from kag_neo4j.prompts.plan import PlanResponse, build_plan_messages, repair_plan_messages
from kag_neo4j.solver.lf.ast import Plan, RetrievalOp
from kag_neo4j.solver.lf.parse import plan_from_response
from kag_neo4j.solver.lf.registry import OPERATORS
from kag_neo4j.solver.planner import not_copied
from kag_neo4j.solver.runtime import SolverConfig


class PlanOutcome(BaseModel):
    """What one question's planning gave."""

    question_id: str
    gold_hops: int
    planned_hops: int | None  # None: fallback plan
    first_try: bool
    repaired: bool
    calls: int
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    error: str = ""
    replies: list[str] = []  # the logical-form text of each reply, to read what the planner wrote


def retrieval_hops(plan: Plan) -> int:
    """Retrieval actions in a plan (each is one hop of evidence gathering)."""
    return sum(1 for step in plan.steps for action in step.actions if isinstance(action.operator, RetrievalOp))


def _schema_summary(from_db: bool) -> str:
    if not from_db:
        return ""
    from kag_neo4j.solver.graph_schema import read_graph_schema
    from kag_neo4j.store.database import Database

    with Database.connect(load_settings()) as db:
        return read_graph_schema(db).summary()


def plan_one(llm, record: dict, summary: str, max_tokens: int) -> PlanOutcome:  # type: ignore[no-untyped-def]
    question = str(record["question"])
    operators = OPERATORS.prompt_lines("en")
    messages = build_plan_messages(question, summary, "en", operators)
    replies: list[str] = []
    used = llm.usage.stage("plan")  # every call that reached the model, one that failed too
    started = time.perf_counter()

    def ask(conversation):  # type: ignore[no-untyped-def]
        value, _ = llm.complete_object(conversation, PlanResponse, stage="plan", max_tokens=max_tokens)
        replies.append(value.logical_form)
        return value

    first_try = repaired = False
    planned: int | None = None
    error = ""
    try:
        response = ask(messages)
        try:
            planned, first_try = retrieval_hops(not_copied(plan_from_response(response, OPERATORS), question)), True
        except LogicalFormError as first:
            retry = repair_plan_messages(messages, response.model_dump_json(), first, "en")
            planned, repaired = retrieval_hops(not_copied(plan_from_response(ask(retry), OPERATORS), question)), True
    except (LogicalFormError, ModelError) as exc:
        error = str(exc)[:200]
    seconds = round(time.perf_counter() - started, 2)
    spent = llm.usage.stage("plan")
    return PlanOutcome(
        question_id=str(record.get("id", "")), gold_hops=len(record.get("question_decomposition") or []),
        planned_hops=planned, first_try=first_try, repaired=repaired, calls=spent.calls - used.calls,
        prompt_tokens=spent.prompt_tokens - used.prompt_tokens,
        completion_tokens=spent.completion_tokens - used.completion_tokens, seconds=seconds, error=error,
        replies=replies,
    )


def report(outcomes: list[PlanOutcome]) -> str:
    n = len(outcomes)
    share = lambda count: f"{100 * count / n:.0f}% ({count}/{n})"  # noqa: E731
    planned = [o for o in outcomes if o.planned_hops is not None]
    lines = [
        "| measure | value |",
        "|---|---:|",
        f"| questions | {n} |",
        f"| parse on the first try | {share(sum(o.first_try for o in outcomes))} |",
        f"| parse after one repair | {share(sum(o.repaired for o in outcomes))} |",
        f"| fallback plan | {share(n - len(planned))} |",
        f"| Retrieval hops = gold hops | {share(sum(o.planned_hops == o.gold_hops for o in planned))} |",
        f"| fewer hops than gold | {share(sum((o.planned_hops or 0) < o.gold_hops for o in planned))} |",
        f"| more hops than gold | {share(sum((o.planned_hops or 0) > o.gold_hops for o in planned))} |",
        f"| calls per question (mean) | {statistics.fmean(o.calls for o in outcomes):.2f} |",
        f"| tokens per question (mean, prompt + completion) | "
        f"{statistics.fmean(o.prompt_tokens + o.completion_tokens for o in outcomes):.0f} |",
        f"| seconds per question (p50) | {statistics.median(o.seconds for o in outcomes):.1f} |",
    ]
    repaired = [o for o in outcomes if o.repaired]
    fallback = [o for o in outcomes if o.planned_hops is None]
    for label, group in (("repaired", repaired), ("fallback", fallback)):
        if group:
            lines.append(f"| seconds per {label} question (mean) | {statistics.fmean(o.seconds for o in group):.1f} |")
    golds = sorted({o.gold_hops for o in outcomes})
    hops = sorted({o.planned_hops for o in planned if o.planned_hops is not None})
    table = Counter((o.gold_hops, o.planned_hops) for o in outcomes)
    lines += ["", "| gold hops \\ planned | " + " | ".join(map(str, hops)) + " | fallback |",
              "|---|" + "---:|" * (len(hops) + 1)]
    for gold in golds:
        row = [str(table[(gold, h)]) for h in hops] + [str(table[(gold, None)])]
        lines.append(f"| {gold} | " + " | ".join(row) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("questions", type=Path, help="MuSiQue-format questions with question_decomposition")
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--schema-from-db", action="store_true", help="plan with the connected graph's schema summary")
    parser.add_argument("--out", type=Path, default=None, help="write every outcome as JSON lines")
    parser.add_argument("--report", type=Path, default=None, help="only print the report of an --out file")
    args = parser.parse_args(argv)
    if args.report:
        lines = args.report.read_text(encoding="utf-8").splitlines()
        print(report([PlanOutcome.model_validate_json(line) for line in lines if line.strip()]))
        return 0
    records = json.loads(args.questions.read_text(encoding="utf-8"))[: args.limit]
    if not records or "question_decomposition" not in records[0]:
        print(f"error: {args.questions} has no question_decomposition (a MuSiQue dev file has)", file=sys.stderr)
        return 2
    settings = load_settings().model_copy(update={"no_cache": True})
    llm = build_llm(settings)
    summary = _schema_summary(args.schema_from_db)
    max_tokens = SolverConfig().plan_max_tokens
    outcomes: list[PlanOutcome] = []
    out = args.out.open("w", encoding="utf-8") if args.out else None
    for number, record in enumerate(records, 1):
        outcome = plan_one(llm, record, summary, max_tokens)
        outcomes.append(outcome)
        if out:
            out.write(outcome.model_dump_json() + "\n")
            out.flush()
        print(f"[{number}/{len(records)}] gold {outcome.gold_hops} planned {outcome.planned_hops} "
              f"({outcome.seconds:.1f} s{', repaired' if outcome.repaired else ''})", file=sys.stderr, flush=True)
    if out:
        out.close()
    print(report(outcomes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

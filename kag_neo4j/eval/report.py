"""Reports of an evaluation run: a Markdown table, JSON with every per-question row, a PNG chart.

Percentages (recall, EM, F1) are printed with one decimal; a dash means "not measured" (a
retrieval-only method has no EM, an answer-only method no recall). A ``Δ`` column is a method's
paired difference to the baseline it names, in points, with its bootstrap interval
(:mod:`kag_neo4j.eval.paired`); ``*`` marks an interval that excludes 0.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kag_neo4j.eval.paired import Difference
from kag_neo4j.eval.runner import EvalRun, MethodSummary

__all__ = ["chart", "link_lines", "markdown", "outcome_lines", "plan_lines", "rich_table", "step_lines", "write_reports"]

DASH = "–"


def _pct(value: float | None) -> str:
    return DASH if value is None else f"{100 * value:.1f}"


def _num(value: float | None, digits: int = 1) -> str:
    return DASH if value is None else f"{value:.{digits}f}"


def _pair(low: float | None, high: float | None, digits: int) -> str:
    return DASH if low is None else f"{low:.{digits}f}/{_num(high, digits)}"


def _signed(value: float) -> str:
    return f"{100 * value:+.1f}"


def difference_cell(difference: Difference | None, *, baseline: bool = False) -> str:
    """``+2.0 [-1.5, +5.5]`` (points), ``*`` when the interval excludes 0; ``base`` for the baseline."""
    if difference is None:
        return "base" if baseline else DASH
    mark = "*" if difference.excludes_zero else ""
    return f"{_signed(difference.mean)} [{_signed(difference.low)}, {_signed(difference.high)}]{mark}"


def compared(run: EvalRun, metrics: list[str]) -> list[tuple[str, str]]:
    """(metric, baseline) of the ``metrics`` some method of the run was compared on, in order."""
    found: list[tuple[str, str]] = []
    for metric in metrics:
        baseline = next((m.differences[metric].baseline for m in run.methods if metric in m.differences), None)
        if baseline is not None:
            found.append((metric, baseline))
    return found


def _recall_compared(run: EvalRun) -> list[tuple[str, str]]:
    return compared(run, [f"R@{k}" for k in run.k_values])


def _qa_compared(run: EvalRun) -> list[tuple[str, str]]:
    return compared(run, ["EM", "F1"])


def _difference_cells(summary: MethodSummary, pairs: list[tuple[str, str]]) -> list[str]:
    return [difference_cell(summary.differences.get(metric), baseline=summary.method == baseline)
            for metric, baseline in pairs]


def columns(run: EvalRun) -> list[str]:
    qa = any(m.em is not None for m in run.methods)
    head = ["method", *(f"R@{k}" for k in run.k_values)]
    head += [f"Δ{metric} vs {baseline}" for metric, baseline in _recall_compared(run)]
    if qa:
        head += ["EM", "F1"]
        head += [f"Δ{metric} vs {baseline}" for metric, baseline in _qa_compared(run)]
        head += ["calls/q", "tokens/q"]
    head += ["ms p50/p95"]
    if qa:
        head += ["QA s p50/p95"]
    return head + ["errors"]


def row_cells(run: EvalRun, summary: MethodSummary) -> list[str]:
    qa = any(m.em is not None for m in run.methods)
    cells = [summary.method, *(_pct(summary.recall.get(str(k))) for k in run.k_values)]
    cells += _difference_cells(summary, _recall_compared(run))
    if qa:
        cells += [_pct(summary.em), _pct(summary.f1), *_difference_cells(summary, _qa_compared(run)),
                  _num(summary.llm_calls, 2), _num(summary.tokens, 0)]
    cells += [_pair(summary.retrieval_ms_p50, summary.retrieval_ms_p95, 0)]
    if qa:
        cells += [_pair(summary.qa_s_p50, summary.qa_s_p95, 2)]
    return cells + [str(summary.errors)]


def _bootstrap_lines(run: EvalRun) -> list[str]:
    if run.bootstrap is None or not any(m.differences for m in run.methods):
        return []
    setup = run.bootstrap
    return [(f"- Δ … vs BASE: the mean per-question difference to BASE in points, with its bootstrap "
             f"{100 * setup.confidence:g} % interval over the questions ({setup.resamples:,} resamples, seed "
             f"{setup.seed}); * marks an interval that excludes 0, a difference these questions support")]


def step_lines(run: EvalRun) -> list[str]:
    """A line per solver method: its Retrieval steps per question, those the graph answered, and the share
    of those that bound a gold hop answer (:mod:`kag_neo4j.eval.steps`)."""
    lines = []
    for summary in run.methods:
        if summary.steps is None:
            continue
        if not summary.graph_steps:
            gold = "none to check"
        elif summary.graph_step_gold is None:
            gold = "no gold hop answers to check them"
        else:
            gold = f"{_pct(summary.graph_step_gold)} % of them bound a gold hop answer"
        lines.append(f"{summary.method}: {_num(summary.steps, 2)} Retrieval steps per question, "
                     f"{_num(summary.graph_steps, 2)} answered from the graph ({gold})")
    return lines


def outcome_lines(run: EvalRun) -> list[str]:
    """A line per method compared with the QA baseline: its exact-match outcomes, question by question."""
    return [(f"{s.method} vs {o.baseline}, exact match per question: both right {o.both}, only {s.method} "
             f"{o.only_method}, only {o.baseline} {o.only_baseline}, neither {o.neither}")
            for s in run.methods if (o := s.outcomes) is not None]


def stage_lines(run: EvalRun) -> list[str]:
    """A line per answering method that calls the LLM: its model time per question by stage (calls,
    prompt + completion tokens, seconds; means over the answered questions) and the rest of its mean
    answer time, spent outside the model (retrieval, Cypher, query embeddings). A call's seconds are
    its wall time, so a call that waited for a local model busy with a concurrent step counts its wait."""
    lines = []
    for s in run.methods:
        stages = {name: cost for name, cost in s.stages.items() if cost.calls}
        if not stages or s.qa_s_mean is None:
            continue
        parts = [f"{name} {_num(cost.calls, 2)} × ({cost.prompt_tokens / cost.calls:,.0f} + "
                 f"{cost.completion_tokens / cost.calls:,.0f} tokens) {_num(cost.seconds)} s"
                 for name, cost in sorted(stages.items(), key=lambda item: -item[1].seconds)]
        model = sum(cost.seconds for cost in s.stages.values())
        rest = (f"outside the model {_num(s.qa_s_mean - model)} s" if model <= s.qa_s_mean else
                f"together {_num(model)} s, more than the answer time: a call waiting for a model busy with a "
                "concurrent step counts its wait")
        lines.append(f"{s.method} time per question (mean {_num(s.qa_s_mean)} s): " + "; ".join(parts) + f"; {rest}")
    return lines


def plan_lines(run: EvalRun) -> list[str]:
    """A line per solver method: how its static plans came about (:mod:`kag_neo4j.eval.plans`) and the
    mean seconds of planning for each kind."""
    lines = []
    for s in run.methods:
        if s.plans is None:
            continue
        counts = ", ".join(f"{origin} {count} ({_pct(count / s.plans.total)} %)" for origin, count in s.plans.questions.items())
        costs = ", ".join(f"{_num(seconds)} s {origin}" for origin, seconds in s.plans.plan_seconds.items())
        lines.append(f"{s.method} plans: {counts}; planning per question: {costs}")
    return lines


def link_lines(run: EvalRun) -> list[str]:
    """A line per method that links the question's mentions to PageRank seeds: seeds per question, the
    share that lead to a gold passage, the gold passages they reach (:mod:`kag_neo4j.eval.linking`)."""
    return [(f"{s.method} linking: its mentions linked {_num(s.entities, 2)} entities and titled {_num(s.titles, 2)} "
             f"documents per question ({_pct(s.no_seed)} % of questions neither); {_pct(s.seed_precision)} % of these "
             f"seeds lead to a gold passage in one step, reaching {_pct(s.gold_reached)} % of the gold passages")
            for s in run.methods if s.linked_questions]


def markdown(run: EvalRun) -> str:
    """The run as a Markdown section: setup lines, the table, notes."""
    unit = "paragraph" if run.recall_unit == "paragraph" else "title"
    lines = [
        f"## {run.dataset}: {run.questions} questions",
        "",
        f"- questions: `{Path(run.questions_file).name}` ({run.format} format); corpus: `{Path(run.corpus_file).name}`"
        + (f" ({run.load.documents} passages, {run.load.chunks} chunks)" if run.load else ""),
        f"- recall@k: share of gold supporting passages (by {unit}) among the first k distinct passages retrieved",
        f"- embedder: `{run.embedder}`; LLM: `{run.llm or 'none (retrieval only)'}`",
        f"- Neo4j {run.neo4j or '?'}, GDS {run.gds or '?'}, database `{run.database}`, graph version {run.graph_version}",
        ("- calls/q, tokens/q: LLM requests and tokens per answered question (responses served from the cache "
         "count at their original cost: a cold run's figures); ms p50/p95: retrieval latency; "
         "QA s p50/p95: answer latency"),
        *_bootstrap_lines(run),
        f"- run: {run.started_at}, {run.seconds:.0f} s"
        + (f" ({run.resumed_rows} results resumed from the cache)" if run.resumed_rows else ""),
        "",
    ]
    head = columns(run)
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|")
    for summary in run.methods:
        lines.append("| " + " | ".join(row_cells(run, summary)) + " |")
    notes = list(run.notes)
    notes += [f"{m.method}: {m.description}" for m in run.methods if m.description]
    notes += outcome_lines(run) + step_lines(run) + plan_lines(run) + stage_lines(run) + link_lines(run)
    if notes:
        lines += ["", *(f"- {note}" for note in notes)]
    return "\n".join(lines) + "\n"


def rich_table(run: EvalRun) -> Any:
    from rich.table import Table

    caption = " ".join(line.removeprefix("- ") for line in _bootstrap_lines(run)) or None
    table = Table(title=f"{run.dataset}: {run.questions} questions (recall by {run.recall_unit})", caption=caption)
    for index, name in enumerate(columns(run)):
        table.add_column(name, justify="left" if index == 0 else "right")
    for summary in run.methods:
        table.add_row(*row_cells(run, summary))
    return table


def chart(run: EvalRun, path: Path) -> Path | None:
    """A grouped bar chart of recall (and EM/F1 when measured) per method; ``None`` without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    series: dict[str, list[float]] = {}
    for k in run.k_values:
        series[f"Recall@{k}"] = [100 * (m.recall.get(str(k)) or 0.0) for m in run.methods]
    if any(m.em is not None for m in run.methods):
        series["EM"] = [100 * (m.em or 0.0) for m in run.methods]
        series["F1"] = [100 * (m.f1 or 0.0) for m in run.methods]
    names = [m.method for m in run.methods]
    width = 0.8 / max(1, len(series))
    figure, axes = plt.subplots(figsize=(max(6.0, 1.3 * len(names) * max(1, len(series)) / 2 + 2), 4.2))
    for index, (label, values) in enumerate(series.items()):
        positions = [i + (index - (len(series) - 1) / 2) * width for i in range(len(names))]
        bars = axes.bar(positions, values, width, label=label)
        axes.bar_label(bars, labels=[f"{v:.0f}" for v in values], fontsize=7, padding=1)
    axes.set_xticks(range(len(names)), names, rotation=20, ha="right")
    axes.set_ylim(0, 118)  # room above 100 % for the legend
    axes.set_yticks(range(0, 101, 20))
    axes.set_ylabel("%")
    axes.set_title(f"{run.dataset} ({run.questions} questions) - {run.embedder}")
    axes.legend(loc="upper left", ncols=len(series), fontsize=8)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path


def write_reports(run: EvalRun, out_dir: Path) -> dict[str, Path]:
    """``report.md``, ``results.json`` (per-question rows) and ``chart.png`` in ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    md = out_dir / "report.md"
    md.write_text(markdown(run), encoding="utf-8")
    written["markdown"] = md
    data = out_dir / "results.json"
    data.write_text(json.dumps(run.model_dump(mode="json"), ensure_ascii=False, indent=1), encoding="utf-8")
    written["json"] = data
    png = chart(run, out_dir / "chart.png")
    if png is not None:
        written["chart"] = png
    return written

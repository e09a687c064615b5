"""The generator: a short answer, the chunks it rests on, and the KG path — or "I don't know".

* A bound ``Output`` is rendered in code (no model call): the values of its aliases.
  Citations are the evidence of every record the output depends on (following ``depends_on``);
  the KG path is the graph facts those records used.
* An answer the judge (or the final answer call) found cites the passages it named.
* Otherwise the solver fails closed: ``known=False``, the fixed "I don't know" sentence, no
  citations.
"""

from __future__ import annotations

from dataclasses import dataclass

from kag_neo4j.prompts.answer import I_DONT_KNOW, is_unknown, render_answer
from kag_neo4j.prompts.context import shorten
from kag_neo4j.solver.judge import JudgeOutcome, is_polar_question
from kag_neo4j.solver.matching import normalise_name
from kag_neo4j.solver.memory import Binding
from kag_neo4j.solver.results import Citation, KGFact, StepRecord
from kag_neo4j.solver.runtime import Runtime

__all__ = ["Composed", "compose", "confirms", "dependency_closure"]

SNIPPET_CHARS = 300


@dataclass
class Composed:
    answer: str
    known: bool
    citations: list[Citation]
    kg_path: list[KGFact]


def dependency_closure(records: list[StepRecord], start: list[int]) -> list[int]:
    """``start`` and every record they depend on, transitively, in index order."""
    seen: set[int] = set()
    stack = list(start)
    while stack:
        index = stack.pop()
        if index in seen or not 0 <= index < len(records):
            continue
        seen.add(index)
        stack.extend(records[index].depends_on)
    return sorted(seen)


def _citations(rt: Runtime, chunk_ids: list[str]) -> list[Citation]:
    out = []
    for chunk_id in dict.fromkeys(chunk_ids):
        chunk = rt.memory.chunk(chunk_id)
        if chunk is not None:
            out.append(
                Citation(
                    document_id=chunk.document_id, chunk_id=chunk.chunk_id, title=chunk.title,
                    text=shorten(chunk.text, SNIPPET_CHARS),
                )
            )
    return out


def _graph_facts(records: list[StepRecord], indices: list[int]) -> list[KGFact]:
    facts: list[KGFact] = []
    seen: set[tuple[str, str, str]] = set()
    for index in indices:
        record = records[index]
        for fact in record.facts if record.source == "graph" else record.answer_facts:
            key = (fact.subject_id, fact.predicate, fact.object_id or fact.object)
            if key not in seen:
                seen.add(key)
                facts.append(fact)
    return facts


def confirms(bindings: list[Binding], question: str) -> bool:
    """Whether the bound output answers a yes/no ``question`` with "yes": graph facts found,
    from the entities the question named, exactly what it asks about ("Is X a Y?" answered with
    Y — e.g. the concept class a rule put X in). Every value is the far end of a graph fact
    (an item found for an anchor, not a named end bound to itself) and is named in the question."""
    items = [item for b in bindings for item in b.items]
    if not items or not is_polar_question(question) or any(b.source != "graph" for b in bindings):
        return False
    asked = normalise_name(question).replace(" ", "")
    for item in items:
        name = normalise_name(item.text).replace(" ", "")
        if isinstance(item.value, bool) or item.key is None or len(name) < 2 or name not in asked:
            return False
    return True


def compose(rt: Runtime, output_aliases: list[str], judged: JudgeOutcome | None, question: str = "") -> Composed:
    """The answer of a run (see the module docs). Bound values that a yes/no ``question`` asks
    about are rendered as "yes" (:func:`confirms`)."""
    records = rt.records
    bindings = [rt.memory.get(alias) for alias in output_aliases]
    if bindings and all(b is not None and not b.empty for b in bindings):
        values = [item.written or item.value for b in bindings if b is not None for item in b.items]
        bound = [b for b in bindings if b is not None]
        text = render_answer([True] if confirms(bound, question) else values, rt.language)
        if text and not is_unknown(text):
            starts = [b.record for b in bindings if b is not None and b.record is not None]
            closure = dependency_closure(records, starts)
            evidence = [cid for index in closure for cid in records[index].evidence]
            return Composed(text, True, _citations(rt, evidence), _graph_facts(records, closure))
    if judged is not None and judged.answer and not is_unknown(judged.answer):
        everything = list(range(len(records)))
        return Composed(
            shorten(judged.answer, 300), True, _citations(rt, judged.evidence), _graph_facts(records, everything)
        )
    return Composed(I_DONT_KNOW[rt.language], False, [], [])

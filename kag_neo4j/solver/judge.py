"""The judge loop: when the plan's output is not bound, look for what is missing — bounded.

1. If the plan's ``Output`` aliases are all bound, memory answers the question: no model call
   (:func:`output_bound`) - unless the values are yes/no and the question is not a yes/no
   question ("Which band formed first, A or B?" wants A or B, not a comparison's boolean):
   then the judge answers it (:func:`answers_question`).
2. Otherwise, if nothing was retrieved yet (the run's own question search is off,
   ``question_k`` 0, and no step read a chunk), chunks are retrieved for the question itself.
3. Up to ``max_rounds`` times the judge (one call) either answers from the known results and
   passages, or writes one supplementary query; the query is searched (hybrid retrieval seeded
   with every entity the run found) and the loop goes on. A query already tried, or an empty
   one, ends the loop — no query runs twice.
4. When the rounds are used up and the last search brought new passages, one final answer call
   sees everything; an empty answer means the evidence is missing and the solver says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TypeVar

from pydantic import BaseModel

from kag_neo4j.errors import ModelError, ModelUnavailableError
from kag_neo4j.models.base import ChatMessage
from kag_neo4j.prompts.answer import AnswerResponse, build_answer_messages, is_unknown
from kag_neo4j.prompts.context import Fact
from kag_neo4j.prompts.judge import JudgeResponse, build_judge_messages
from kag_neo4j.solver.chunks import RankedChunk
from kag_neo4j.solver.evidence_search import retrieve_chunks
from kag_neo4j.solver.results import StepRecord
from kag_neo4j.solver.runtime import Runtime
from kag_neo4j.solver.values import normalise_text

__all__ = ["JudgeOutcome", "answers_question", "is_polar_question", "judge_loop", "output_bound"]

M = TypeVar("M", bound=BaseModel)


def output_bound(rt: Runtime, aliases: list[str]) -> bool:
    """Whether memory answers the question: every output alias holds a value."""
    return bool(aliases) and all(rt.memory.bound(alias) for alias in aliases)


_POLAR_EN = re.compile(r"^(is|are|was|were|am|do|does|did|can|could|has|have|had|will|would|should|shall|may|"
                       r"might|must)\b", re.IGNORECASE)
_POLAR_ZH = re.compile(r"(吗|么|是否|是不是|有没有|能否|可否)[？?。\s]*$|是否|是不是|有没有")


def is_polar_question(question: str) -> bool:
    """A yes/no question: English auxiliary first and no alternative ("Is A or B older?" is a
    choice), or a Chinese 吗 / 是否 / 是不是 / 有没有 question."""
    text = question.strip()
    if _POLAR_ZH.search(text):
        return True
    return bool(_POLAR_EN.match(text)) and not re.search(r"\bor\b", text, re.IGNORECASE)


def answers_question(rt: Runtime, aliases: list[str], question: str) -> bool:
    """Whether the bound output answers ``question``: bound, and yes/no only for a yes/no question."""
    if not output_bound(rt, aliases):
        return False
    values = [item.value for alias in aliases for item in rt.memory.get(alias).items]  # type: ignore[union-attr]
    return not (values and all(isinstance(value, bool) for value in values)) or is_polar_question(question)


@dataclass
class JudgeOutcome:
    answer: str | None = None
    evidence: list[str] = field(default_factory=list)
    rounds: int = 0
    queries: list[str] = field(default_factory=list)
    records: list[int] = field(default_factory=list)


def _facts(rt: Runtime) -> list[Fact]:
    facts: list[Fact] = []
    seen: set[str] = set()
    for record in rt.records:
        for fact in record.facts:
            key = fact.text()
            if key not in seen:
                seen.add(key)
                facts.append(Fact(subject=fact.subject, predicate=fact.predicate, object=fact.object))
    return facts


def _entity_ids(rt: Runtime) -> list[str]:
    ids: list[str] = []
    for binding in rt.memory.bindings().values():
        ids.extend(binding.entity_ids)
    return list(dict.fromkeys(ids))[:10]


def _cited(passages: list[RankedChunk], numbers: list[int]) -> list[str]:
    return [passages[n - 1].chunk_id for n in numbers if isinstance(n, int) and 1 <= n <= len(passages)]


def judge_loop(rt: Runtime, question: str) -> JudgeOutcome:
    """Run the loop described in the module docs; returns the answer found, if any."""
    outcome = JudgeOutcome()
    tried: list[str] = []
    config = rt.config
    latest: list[RankedChunk] = []
    if not rt.memory.chunks():
        record = rt.new_record("Supplement", question=question, lf=f"retrieve({question!r})")
        latest = retrieve_chunks(rt, record, question, _entity_ids(rt), k=config.judge_passages)
        record.source = "chunks"
        tried.append(normalise_text(question))
        outcome.records.append(record.index)
    new_evidence = True
    for round_no in range(config.max_rounds + 1):
        ids = {chunk.chunk_id for chunk in latest}
        passages = (latest + [c for c in rt.memory.chunks() if c.chunk_id not in ids])[: config.judge_passages]
        if not passages and not _facts(rt):
            break
        known = rt.memory.known()
        if round_no == config.max_rounds:
            if not new_evidence:
                break
            record = rt.new_record("Answer", question=question, lf="answer(question, evidence)")
            outcome.records.append(record.index)
            messages = build_answer_messages(
                question, language=rt.language, known=known, facts=_facts(rt),
                passages=[p.passage() for p in passages], budget=config.budget,
            )
            response = _safe_ask(rt, record, messages, AnswerResponse, "answer", config.answer_max_tokens)
            if response is not None and not is_unknown(response.answer):
                record.source = "answer"
                outcome.answer = response.answer.strip()
                outcome.evidence = _cited(passages, response.evidence) or [passages[0].chunk_id]
                record.evidence = outcome.evidence
                record.outputs["answer"] = outcome.answer
            break
        record = rt.new_record("Judge", question=question, lf=f"judge(round={round_no + 1})")
        outcome.records.append(record.index)
        outcome.rounds += 1
        messages = build_judge_messages(
            question, language=rt.language, known=known, facts=_facts(rt),
            passages=[p.passage() for p in passages], tried=outcome.queries, budget=config.budget,
        )
        verdict = _safe_ask(rt, record, messages, JudgeResponse, "judge", config.judge_max_tokens)
        if verdict is None:
            break
        record.source = "judge"
        if verdict.answerable and not is_unknown(verdict.answer):
            outcome.answer = verdict.answer.strip()
            outcome.evidence = _cited(passages, verdict.evidence) or [passages[0].chunk_id] if passages else []
            record.evidence = outcome.evidence
            record.outputs["answer"] = outcome.answer
            break
        query = " ".join(verdict.query.split())[:300]
        key = normalise_text(query)
        if not key or key in tried:
            record.note = "no new supplementary query; stopping" if key else "the judge wrote no query; stopping"
            break
        tried.append(key)
        outcome.queries.append(query)
        record.note = f"supplementary query: {query}"
        before = {chunk.chunk_id for chunk in rt.memory.chunks()}
        latest = retrieve_chunks(rt, record, query, _entity_ids(rt), k=config.judge_passages)
        new_evidence = any(chunk.chunk_id not in before for chunk in latest)
    return outcome


def _safe_ask(
    rt: Runtime, record: StepRecord, messages: list[ChatMessage], model: type[M], stage: str, max_tokens: int
) -> M | None:
    try:
        return rt.ask(record, messages, model, stage=stage, max_tokens=max_tokens)
    except ModelUnavailableError:
        raise
    except ModelError as exc:
        record.error = str(exc)
        return None

"""The planner: question -> logical-form plan (static), or the next step (iterative).

* **Static** (:meth:`Planner.plan`): one call plans the whole DAG. A reply that does not parse is
  sent back with the error (:func:`~kag_neo4j.prompts.plan.repair_plan_messages`) up to
  ``SolverConfig.plan_repairs`` times (0 by default); when no reply parses — or the model fails —
  the question falls back to a one-step plan that retrieves
  chunks for the question itself (:func:`fallback_plan`), so a planning failure costs recall,
  never an answer path. A plan that names an entity of a worked example the question does not
  name (a small model copying "Amsterdam's museums" for any question) is rejected like one that
  does not parse (:func:`copied_example`).
* **Iterative** (:meth:`Planner.next_step`): one call per step, shown the steps already run with
  their results; it returns the new steps, or signals that the ``Output`` is reached.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TypeVar

from kag_neo4j.errors import LogicalFormError, ModelError, ModelUnavailableError
from kag_neo4j.models.base import ChatMessage
from kag_neo4j.prompts.context import Language
from kag_neo4j.prompts.iterate import RunStep, build_next_step_messages
from kag_neo4j.prompts.plan import (
    CAUSAL_EXAMPLES,
    CLASS_EXAMPLES,
    EXAMPLES,
    PlanResponse,
    build_plan_messages,
    repair_plan_messages,
)
from kag_neo4j.solver.lf.ast import Action, AliasRef, Element, OutputOp, Plan, RetrievalOp, Step
from kag_neo4j.solver.lf.parse import parse_plan, plan_from_response
from kag_neo4j.solver.lf.registry import OPERATORS, OperatorRegistry
from kag_neo4j.solver.matching import normalise_name
from kag_neo4j.solver.results import PlanOrigin, StepRecord
from kag_neo4j.solver.runtime import Runtime

__all__ = ["NextStep", "Planner", "copied_example", "fallback_plan", "not_copied"]

T = TypeVar("T")


def fallback_plan(question: str) -> Plan:
    """One step: retrieve chunks for the question itself and answer from them."""
    retrieval = RetrievalOp(s=Element(alias="s1"), p=Element(alias="p1"), o=Element(alias="o1"))
    return Plan(
        steps=[
            Step(
                number=1,
                question=" ".join(question.split())[:1000] or "?",
                actions=[
                    Action(number=1, operator=retrieval),
                    Action(number=2, operator=OutputOp(aliases=[AliasRef(alias="o1")])),
                ],
            )
        ]
    )


def _named(plan: Plan) -> list[str]:
    """The entity names the plan's Retrieval actions write (``[`name`]``)."""
    return [element.name for _, action in plan.actions() if isinstance(action.operator, RetrievalOp)
            for _, element in action.operator.elements() if element.name]


@cache
def _example_names() -> frozenset[str]:
    """The (normalised) entity names the worked examples of the planner prompt write."""
    shown = [example for examples in EXAMPLES.values() for example in examples] + [
        *CLASS_EXAMPLES.values(), *CAUSAL_EXAMPLES.values()]
    return frozenset(normalise_name(name) for example in shown for name in _named(parse_plan(example.logical_form)))


def copied_example(plan: Plan, question: str) -> str | None:
    """The first entity the plan names that a worked example names and ``question`` does not
    (the plan is then a copy of the example, not of the question); ``None`` when there is none."""
    asked = normalise_name(question)
    for name in _named(plan):
        key = normalise_name(name)
        if key and key in _example_names() and key not in asked:
            return name
    return None


def not_copied(plan: Plan, question: str) -> Plan:
    """``plan``, unless it names an entity of a worked example that ``question`` does not name
    (:func:`copied_example`): then a :class:`LogicalFormError` the repair message can quote."""
    copied = copied_example(plan, question)
    if copied is not None:
        raise LogicalFormError(
            f"the plan names `{copied}`, an entity of a worked example that the question does not name; "
            "plan the question itself"
        )
    return plan


@dataclass
class NextStep:
    """What the iterative planner wrote: the plan so far plus the new steps, and whether its
    ``Output`` was the model's own (``done``) or a placeholder to make the partial plan parse."""

    plan: Plan
    new_steps: list[Step]
    done: bool


_DEFINED = re.compile(r"->\s*([^\W\d]\w*)|\b[so]\s*=\s*([^\W\d]\w*)\s*:")
_OUTPUT = re.compile(r"\bOutput\s*[（(]", re.IGNORECASE)
_ACTION_NUMBER = re.compile(r"^\s*action\s*(\d+)", re.IGNORECASE | re.MULTILINE)


class Planner:
    """Plans with the runtime's LLM (``stage="plan"``)."""

    def __init__(self, rt: Runtime, *, schema_summary: str = "", operators: OperatorRegistry | None = None,
                 classes: bool = False, causal: str | None = None) -> None:
        self.rt = rt
        self.schema_summary = schema_summary
        self.classes = classes  # the graph has rule-derived concept classes: show the class example
        self.causal = causal  # the graph's causal relation: show the causal example with it
        #: the operators plans may use; the prompt lists their lines
        self.operators = OPERATORS if operators is None else operators

    @property
    def language(self) -> Language:
        return self.rt.language

    def _ask(self, record: StepRecord, messages: list[ChatMessage]) -> PlanResponse:
        return self.rt.ask(record, messages, PlanResponse, stage="plan", max_tokens=self.rt.config.plan_max_tokens)

    def _ask_parsed(self, record: StepRecord, messages: list[ChatMessage], read: Callable[[PlanResponse], T], *,
                    rejected: str) -> tuple[T, bool]:
        """``read`` of the first reply it accepts, and whether a repair gave it: the first call, then up
        to ``SolverConfig.plan_repairs`` repairs, each showing the last reply and what ``read`` found
        wrong with it. Raises the last reply's :class:`LogicalFormError`."""
        repairs = self.rt.config.plan_repairs
        for attempt in range(repairs + 1):
            response = self._ask(record, messages)
            try:
                return read(response), attempt > 0
            except LogicalFormError as exc:
                if attempt == repairs:
                    raise
                record.note += f"{rejected}: {exc}; "
                messages = repair_plan_messages(messages, response.model_dump_json(), exc, self.language)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def plan(self, question: str, record: StepRecord) -> tuple[Plan, PlanOrigin]:
        """The plan for ``question`` and how it came about."""
        operators = self.operators.prompt_lines(self.language)
        messages = build_plan_messages(question, self.schema_summary, self.language, operators, classes=self.classes,
                                       causal=self.causal)
        try:
            plan, repaired = self._ask_parsed(
                record, messages, lambda reply: not_copied(plan_from_response(reply, self.operators), question),
                rejected="plan rejected")
            return plan, "repaired" if repaired else "first try"
        except ModelUnavailableError:
            raise
        except (LogicalFormError, ModelError) as exc:
            record.note += f"planning failed ({exc}); falling back to one chunk-retrieval step; "
            record.error = str(exc)
            return fallback_plan(question), "fallback"

    def next_step(self, question: str, done: Sequence[Step], results: dict[int, dict[str, str]], record: StepRecord) -> NextStep | None:
        """The next step(s) after ``done``; ``None`` when the model's reply is unusable."""
        shown = [RunStep(text=step.to_text(), results=results.get(step.number, {})) for step in done]
        messages = build_next_step_messages(
            question, shown, language=self.language, schema_summary=self.schema_summary,
            operators=self.operators.prompt_lines(self.language),
        )
        try:
            step, _ = self._ask_parsed(record, messages,
                                       lambda reply: self._checked_step(question, done, reply.logical_form),
                                       rejected="step rejected")
            return step
        except ModelUnavailableError:
            raise
        except (LogicalFormError, ModelError) as exc:
            record.error = str(exc)
            return None

    def _checked_step(self, question: str, done: Sequence[Step], reply: str) -> NextStep:
        step = self._compose(done, reply, self.operators)
        not_copied(step.plan, question)
        return step

    @staticmethod
    def _compose(done: Sequence[Step], reply: str, operators: OperatorRegistry | None = None) -> NextStep:
        """Parse the steps run so far plus the model's continuation as one plan."""
        reply_plan_text = _strip_reply(reply)
        body = "\n".join([step.to_text() for step in done] + [reply_plan_text]).strip()
        has_output = bool(_OUTPUT.search(reply_plan_text))
        if not has_output:
            defined = [m.group(1) or m.group(2) for m in _DEFINED.finditer(reply_plan_text)]
            if not defined:
                raise LogicalFormError("the next step defines no alias and names no Output; write a step or Output(<alias>)")
            numbers = [int(n) for n in _ACTION_NUMBER.findall(body)] or [0]
            body += f"\nAction{max(numbers) + 1}: Output({defined[-1]})"
        plan = parse_plan(body, operators)
        known = {step.number for step in done}
        new_steps = [step for step in plan.steps if step.number not in known]
        if not has_output and not new_steps:
            raise LogicalFormError("the reply adds no new step; write the next Step or Output(<alias>)")
        return NextStep(plan=plan, new_steps=new_steps, done=has_output)


def _strip_reply(reply: str) -> str:
    """The logical-form lines of a reply (no fences, no prose)."""
    text = reply.strip()
    fenced = re.search(r"```[a-zA-Z]*\s*\n?(.*?)```", text, re.DOTALL)
    if fenced:
        text = fenced.group(1)
    if "\n" not in text and "\\n" in text:
        text = text.replace("\\n", "\n")
    keep = [line for line in text.splitlines() if re.match(r"\s*(step|action)\s*\d+\s*[:：]", line, re.IGNORECASE)]
    return "\n".join(keep) if keep else text

"""The iterative planner: one step at a time, from the results known so far.

It shares the planner's description of the logical-form language
(:func:`kag_neo4j.prompts.plan.system_prompt`) and adds the rule to write only the *next* step —
or only the ``Output`` action once the results answer the question. The steps already run are
shown with their results as ``//`` comments, which the parser ignores. The reply is a
:class:`~kag_neo4j.prompts.plan.PlanResponse`.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from kag_neo4j.models.base import ChatMessage
from kag_neo4j.models.messages import conversation, json_reply
from kag_neo4j.prompts.context import Language, shorten
from kag_neo4j.prompts.plan import system_prompt

__all__ = ["EXAMPLES", "ITERATE_PROMPT_VERSION", "RunStep", "build_next_step_messages"]

ITERATE_PROMPT_VERSION = "iterate-2"


class RunStep(BaseModel):
    """A step that has run: its logical-form text and what its aliases hold now."""

    text: str
    results: dict[str, str]


_RULE = {
    "en": (
        "\n\nPlan ONE step at a time. You are shown the question and the steps already run, with "
        "their results as // comments. Write only the next step: one `Step<n>:` line and its "
        "`Action<n>:` lines, numbered after the ones shown, reusing earlier aliases bare. When the "
        "results already answer the question, write only `Action<n>: Output(<alias>)`."
    ),
    "zh": (
        "\n\n每次只规划一步。你会看到问题和已经执行的步骤，执行结果写在 // 注释中。只写下一步：一行 "
        "`Step<n>:` 及其 `Action<n>:` 行，编号接在已有编号之后，沿用前面的别名。如果已有结果已经能回答问题，"
        "只写 `Action<n>: Output(<别名>)`。"
    ),
}
_LABELS = {
    "en": ("Question: ", "Steps run so far:", "(none yet)", "Write the next step."),
    "zh": ("问题：", "已经执行的步骤：", "（还没有）", "请写出下一步。"),
}


Turn = tuple[list[RunStep], str]


def _example(question: str, first: str, found: dict[str, str], second: str, then: dict[str, str]) -> tuple[str, list[Turn]]:
    """Three turns: the first step, the next step (shown the first one's result), then Output."""
    one = RunStep(text=first, results=found)
    two = RunStep(text=second, results=then)
    return question, [([], first), ([one], second), ([one, two], "Action3: Output(o2)")]


#: one worked example per language; the unit tests check each reply parses after the steps before it
EXAMPLES: dict[Language, tuple[str, list[Turn]]] = {
    "en": _example(
        "Where was the author of The Little Prince born?",
        "Step1: Who wrote The Little Prince?\n"
        "Action1: Retrieval(s=s1:Book[`The Little Prince`], p=p1:writtenBy, o=o1:Person)",
        {"o1": "Antoine de Saint-Exupéry"},
        "Step2: Where was that author born?\nAction2: Retrieval(s=o1, p=p2:birthPlace, o=o2:City)",
        {"o2": "Lyon"},
    ),
    "zh": _example(
        "《小王子》的作者出生在哪个城市？",
        "Step1: 《小王子》的作者是谁？\nAction1: Retrieval(s=s1:Book[`小王子`], p=p1:writtenBy, o=o1:Person)",
        {"o1": "圣埃克苏佩里"},
        "Step2: 这位作者出生在哪个城市？\nAction2: Retrieval(s=o1, p=p2:birthPlace, o=o2:City)",
        {"o2": "里昂"},
    ),
}


def _user_turn(question: str, done: Sequence[RunStep], language: Language) -> str:
    asked, so_far, none, write = _LABELS[language]
    lines = [asked + shorten(question, 400), so_far]
    if not done:
        lines.append(none)
    for step in done:
        lines.append(step.text)
        for alias, value in step.results.items():
            lines.append(f"// {alias} = {shorten(value, 160)}")
    lines.append(write)
    return "\n".join(lines)


def build_next_step_messages(
    question: str,
    done: Sequence[RunStep],
    *,
    language: Language,
    schema_summary: str = "",
    operators: Sequence[str] | None = None,
) -> list[ChatMessage]:
    """System rules, the worked example as user/assistant turns, then this question's state
    (``operators`` as in :func:`~kag_neo4j.prompts.plan.system_prompt`)."""
    example_question, turns = EXAMPLES[language]
    examples = [(_user_turn(example_question, example_done, language), json_reply(logical_form=reply))
                for example_done, reply in turns]
    return conversation(system_prompt(schema_summary, language, operators) + _RULE[language],
                        _user_turn(question, done, language),
                        examples=examples)

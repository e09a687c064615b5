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
from kag_neo4j.prompts.context import Language, shorten
from kag_neo4j.prompts.plan import system_prompt

__all__ = ["ITERATE_PROMPT_VERSION", "RunStep", "build_next_step_messages"]

ITERATE_PROMPT_VERSION = "iterate-1"


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


def build_next_step_messages(
    question: str, done: Sequence[RunStep], *, language: Language, schema_summary: str = ""
) -> list[ChatMessage]:
    asked, so_far, none, write = _LABELS[language]
    lines = [asked + shorten(question, 400), so_far]
    if not done:
        lines.append(none)
    for step in done:
        lines.append(step.text)
        for alias, value in step.results.items():
            lines.append(f"// {alias} = {shorten(value, 160)}")
    lines.append(write)
    return [
        ChatMessage(role="system", content=system_prompt(schema_summary, language) + _RULE[language]),
        ChatMessage(role="user", content="\n".join(lines)),
    ]

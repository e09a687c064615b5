"""The planner prompt: question -> logical-form plan.

English and Chinese variants, each few-shot with three worked examples written for kag-neo4j
(every example is parsed in the unit tests, so they cannot drift from the language). The model
answers with :class:`PlanResponse` — JSON holding the plan text — and :func:`plan_text` finds the
logical-form text in whatever came back (a ``PlanResponse``, a dict, raw JSON text, fenced text
or bare logical-form text), raising :class:`~kag_neo4j.errors.LogicalFormError` on garbage so the
caller can ask again with :func:`repair_plan_messages`. Parsing that text is the solver's job
(:func:`kag_neo4j.solver.lf.parse.plan_from_response`). The operator bullets of the system
prompt are :data:`OPERATOR_LINES`, shown in the order of the solver's operator registry.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from kag_neo4j.errors import LogicalFormError
from kag_neo4j.models.base import ChatMessage
from kag_neo4j.models.messages import conversation, follow_up, json_reply

__all__ = [
    "CAUSAL_EXAMPLES",
    "CLASS_EXAMPLES",
    "EXAMPLES",
    "OPERATOR_LINES",
    "PLAN_PROMPT_VERSION",
    "PlanExample",
    "PlanResponse",
    "build_plan_messages",
    "detect_language",
    "plan_text",
    "repair_plan_messages",
    "split_thinking",
    "system_prompt",
]

#: plan-2: the class example for graphs with rule-derived classes; plan-4: the causal example for
#: graphs whose schema declares a causal relation (plan-3 was a trial, not adopted: docs/eval.md)
PLAN_PROMPT_VERSION = "plan-4"
Language = Literal["en", "zh"]


class PlanResponse(BaseModel):
    """The planner's structured output."""

    logical_form: str = Field(
        description=(
            "the whole plan in the logical-form language: 'Step<n>: <sub-question>' lines, each "
            "followed by 'Action<n>: <operator>' lines, ending with one Output(...)"
        )
    )


class PlanExample(BaseModel):
    question: str
    logical_form: str


_HEAD_EN = """\
You are the planner of a question-answering system over a knowledge graph. Do not answer the
question. Break it into small steps and write each step as a logical form that a program runs.

The language:
- A plan is a list of steps. Each step is one line `Step<n>: <sub-question>` followed by one or
  more lines `Action<n>: <operator>`. Number the actions 1, 2, 3, ... across the whole plan.
"""

_TAIL_EN = """\
- Every alias (s1, p1, o1, m1, d1, ...) is defined once; use a new alias for each new thing.
  Put entity names and expressions in backticks.

Use the types and predicates of this schema when they fit; otherwise use short camelCase words.
Schema:
{schema}

Reply with JSON only: {{"logical_form": "<the plan, lines separated by \\n>"}}"""

_HEAD_ZH = """\
你是知识图谱问答系统的规划器。不要直接回答问题，而是把问题拆成若干小步骤，并把每一步写成程序可以执行的逻辑形式。

语法：
- 计划由若干步骤组成。每一步先写一行 `Step<n>: <子问题>`，再写一行或多行 `Action<n>: <算子>`。
  Action 的编号在整个计划中依次为 1、2、3……
"""

_TAIL_ZH = """\
- 每个别名（s1、p1、o1、m1、d1……）只定义一次，新的事物用新的别名。实体名称和表达式放在反引号中。

类型和谓词尽量使用下面图谱模式中的名称；没有合适的就用简短的驼峰式英文单词。
图谱模式：
{schema}

只回复 JSON：{{"logical_form": "<计划全文，各行之间用 \\n 分隔>"}}"""

#: the planner prompt's bullet for each built-in operator, by language, in the order shown; the
#: operator specs (:mod:`kag_neo4j.solver.lf.registry`) carry these lines to the prompt
OPERATOR_LINES: dict[str, dict[Language, str]] = {
    "Retrieval": {
        "en": """- Retrieval(s=<alias>:<Type>[`<name>`], p=<alias>:<predicate>, o=<alias>:<Type>, <constraints>)
  finds one fact: subject s, predicate p, object o. Give [`name`] only when the question names
  the entity. Constraints filter it: `p.year=2011`, `o.population>1000000` (operators = != < <= > >=).
- To continue from an earlier result, write its alias bare: s=o1 means "the o1 found before".""",
        "zh": """- Retrieval(s=<别名>:<类型>[`<名称>`], p=<别名>:<谓词>, o=<别名>:<类型>, <约束>) 检索一条事实：
  主语 s、谓词 p、宾语 o。只有问题中点名的实体才写 [`名称`]。约束用于过滤，例如 `p.year=2011`、
  `o.population>1000000`（比较符 = != < <= > >=）。
- 要沿用前面步骤的结果，直接写它的别名：s=o1 表示“前面查到的 o1”。""",
    },
    "Math": {
        "en": """- Math(content=[`a`, `b`], target=`<expression>`)->m1 computes with numbers and dates:
  + - * / % ^, count(), sum(), min(), max(), avg(), abs(), round(), len(), date(), year(),
  days_between(a, b), years_between(a, b). Write the expression, never the result.""",
        "zh": """- Math(content=[`a`, `b`], target=`<表达式>`)->m1 做数值和日期计算：+ - * / % ^、count()、sum()、
  min()、max()、avg()、abs()、round()、len()、date()、year()、days_between(a, b)、
  years_between(a, b)。只写表达式，不要自己算出结果。""",
    },
    "Deduce": {
        "en": """- Deduce(op=<op>, content=[`a`, `b`], target=`<question>`)->d1 with op one of
  greater | less | equal (compare values), judgement (yes/no), entailment, choice,
  multiChoice, extract.""",
        "zh": """- Deduce(op=<op>, content=[`a`, `b`], target=`<问题>`)->d1，op 取 greater | less | equal（比较数值）、
  judgement（是/否判断）、entailment（蕴含）、choice（单选）、multiChoice（多选）、extract（抽取）。""",
    },
    "Sort": {
        "en": """- Sort(set=<alias>, orderby=<alias>, direction=min|max, limit=<n>)->a1 keeps the smallest or
  largest items of a set.""",
        "zh": """- Sort(set=<别名>, orderby=<别名>, direction=min|max, limit=<n>)->a1 取集合中最小或最大的若干项。""",
    },
    "Output": {
        "en": """- Output(<alias>, ...) names the answer. Use it exactly once, as the last action.""",
        "zh": """- Output(<别名>, ...) 指明答案，只出现一次，并放在最后。""",
    },
}

_NO_SCHEMA = {
    "en": "(no schema given: choose short camelCase names)",
    "zh": "（未提供模式：请自拟简短的驼峰式名称）",
}
_QUESTION_PREFIX = {"en": "Question: ", "zh": "问题："}

EXAMPLES: dict[Language, list[PlanExample]] = {
    "en": [
        PlanExample(
            question="How old was the author of The Little Prince when the book was first published?",
            logical_form="""\
Step1: Who wrote The Little Prince?
Action1: Retrieval(s=s1:Book[`The Little Prince`], p=p1:writtenBy, o=o1:Person)
Step2: When was that author born?
Action2: Retrieval(s=o1, p=p2:birthDate, o=o2:Date)
Step3: When was The Little Prince first published?
Action3: Retrieval(s=s1, p=p3:publicationDate, o=o3:Date)
Step4: How many full years lie between the birth and the publication?
Action4: Math(content=[`o2`, `o3`], target=`years_between(o2, o3)`)->m1
Action5: Output(m1)""",
        ),
        PlanExample(
            question="Which museum in Amsterdam has the most visitors per year?",
            logical_form="""\
Step1: Which museums are in Amsterdam?
Action1: Retrieval(s=s1:Museum, p=p1:locatedIn, o=o1:City[`Amsterdam`])
Step2: How many visitors does each of them have per year?
Action2: Retrieval(s=s1, p=p2:annualVisitors, o=o2:Integer)
Step3: Which of them has the most visitors?
Action3: Sort(set=s1, orderby=o2, direction=max, limit=1)->a1
Action4: Output(a1)""",
        ),
        PlanExample(
            question="Is the Danube longer than the Rhine?",
            logical_form="""\
Step1: How long is the Danube?
Action1: Retrieval(s=s1:River[`Danube`], p=p1:length, o=o1:Number)
Step2: How long is the Rhine?
Action2: Retrieval(s=s2:River[`Rhine`], p=p2:length, o=o2:Number)
Step3: Is the length of the Danube greater than the length of the Rhine?
Action3: Deduce(op=greater, content=[`o1`, `o2`], target=`Is the Danube longer than the Rhine?`)->d1
Action4: Output(d1)""",
        ),
    ],
    "zh": [
        PlanExample(
            question="《小王子》的作者在这本书首次出版时多少岁？",
            logical_form="""\
Step1: 《小王子》的作者是谁？
Action1: Retrieval(s=s1:Book[`小王子`], p=p1:writtenBy, o=o1:Person)
Step2: 这位作者的出生日期是哪天？
Action2: Retrieval(s=o1, p=p2:birthDate, o=o2:Date)
Step3: 《小王子》首次出版是哪天？
Action3: Retrieval(s=s1, p=p3:publicationDate, o=o3:Date)
Step4: 出生与出版之间相隔多少整年？
Action4: Math(content=[`o2`, `o3`], target=`years_between(o2, o3)`)->m1
Action5: Output(m1)""",
        ),
        PlanExample(
            question="鲁迅和郭沫若是否出生在同一个省份？",
            logical_form="""\
Step1: 鲁迅出生在哪个城市？
Action1: Retrieval(s=s1:Person[`鲁迅`], p=p1:bornIn, o=o1:City)
Step2: 该城市属于哪个省份？
Action2: Retrieval(s=o1, p=p2:locatedIn, o=o2:Province)
Step3: 郭沫若出生在哪个城市？
Action3: Retrieval(s=s3:Person[`郭沫若`], p=p3:bornIn, o=o3:City)
Step4: 该城市属于哪个省份？
Action4: Retrieval(s=o3, p=p4:locatedIn, o=o4:Province)
Step5: 两个省份是否相同？
Action5: Deduce(op=equal, content=[`o2`, `o4`], target=`两人出生地所在的省份是否相同？`)->d1
Action6: Output(d1)""",
        ),
        PlanExample(
            question="阿姆斯特丹年参观人数最多的博物馆是哪一家？",
            logical_form="""\
Step1: 阿姆斯特丹有哪些博物馆？
Action1: Retrieval(s=s1:Museum, p=p1:locatedIn, o=o1:City[`阿姆斯特丹`])
Step2: 这些博物馆每年各有多少参观人数？
Action2: Retrieval(s=s1, p=p2:annualVisitors, o=o2:Integer)
Step3: 其中参观人数最多的是哪一家？
Action3: Sort(set=s1, orderby=o2, direction=max, limit=1)->a1
Action4: Output(a1)""",
        ),
    ],
}

#: shown after :data:`EXAMPLES` when the graph has concept classes that rules classify into
#: (``GraphSchema.classes``): a class is asked with ``p=belongTo`` and the class type as object
CLASS_EXAMPLES: dict[Language, PlanExample] = {
    "en": PlanExample(
        question="Is Mara Quill a high-risk customer?",
        logical_form="""\
Step1: Which risk classes does Mara Quill belong to?
Action1: Retrieval(s=s1:Customer[`Mara Quill`], p=p1:belongTo, o=o1:RiskClass)
Action2: Output(o1)""",
    ),
    "zh": PlanExample(
        question="周小明是高风险客户吗？",
        logical_form="""\
Step1: 周小明属于哪些风险类别？
Action1: Retrieval(s=s1:Customer[`周小明`], p=p1:belongTo, o=o1:RiskClass)
Action2: Output(o1)""",
    ),
}

#: shown after :data:`EXAMPLES` when the graph's schema declares a causal relation (``CAU#leadTo``,
#: ``GraphSchema.causal``): an event's effects are followed one hop at a time, then the event's
#: ``subject``. The examples write ``leadTo``; :func:`causal_example` puts the graph's own name in
CAUSAL_EXAMPLES: dict[Language, PlanExample] = {
    "en": PlanExample(
        question="Which airlines are affected by the jet fuel price increase?",
        logical_form="""\
Step1: Which events does the jet fuel price increase lead to?
Action1: Retrieval(s=e1:MarketEvent[`jet fuel price increase`], p=p1:leadTo, o=e2:FirmEvent)
Step2: Which airline is each of those events about?
Action2: Retrieval(s=e2, p=p2:subject, o=o2:Airline)
Action3: Output(o2)""",
    ),
    "zh": PlanExample(
        question="航空燃油涨价影响了哪些航空公司？",
        logical_form="""\
Step1: 航空燃油涨价导致了哪些企业事件？
Action1: Retrieval(s=e1:MarketEvent[`航空燃油涨价`], p=p1:leadTo, o=e2:FirmEvent)
Step2: 这些事件的主体是哪些航空公司？
Action2: Retrieval(s=e2, p=p2:subject, o=o2:Airline)
Action3: Output(o2)""",
    ),
}


def causal_example(language: Language, relation: str) -> PlanExample:
    """The causal example of ``language`` written with the graph's causal relation ``relation``
    (a validated schema name)."""
    example = CAUSAL_EXAMPLES[language]
    return example.model_copy(update={"logical_form": example.logical_form.replace("p=p1:leadTo", f"p=p1:{relation}")})


_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def detect_language(text: str) -> Language:
    """``zh`` when ``text`` contains CJK ideographs, else ``en``."""
    return "zh" if _CJK.search(text or "") else "en"


def _language(language: str, question: str) -> Language:
    value = (language or "auto").strip().lower()
    if value == "auto":
        return detect_language(question)
    if value in {"en", "english"} or value.startswith("en-"):
        return "en"
    if value in {"zh", "chinese", "cn"} or value.startswith("zh-"):
        return "zh"
    raise ValueError(f"planner language {language!r} is not supported; use 'en', 'zh' or 'auto'")


def system_prompt(schema_summary: str, language: Language, operators: Sequence[str] | None = None) -> str:
    """The system message for ``language`` with ``schema_summary`` filled in. ``operators`` are
    the operator bullets to show (the solver passes its registry's lines,
    :meth:`~kag_neo4j.solver.lf.registry.OperatorRegistry.prompt_lines`); ``None`` shows the
    built-in operators (:data:`OPERATOR_LINES`)."""
    if operators is None:
        operators = [lines[language] for lines in OPERATOR_LINES.values()]
    head, tail = (_HEAD_EN, _TAIL_EN) if language == "en" else (_HEAD_ZH, _TAIL_ZH)
    template = head + "\n".join(operators) + "\n" + tail
    summary = schema_summary.strip() if schema_summary and schema_summary.strip() else _NO_SCHEMA[language]
    return template.replace("{schema}", summary).replace("{{", "{").replace("}}", "}")


def build_plan_messages(
    question: str, schema_summary: str = "", language: str = "auto", operators: Sequence[str] | None = None,
    *, classes: bool = False, causal: str | None = None,
) -> list[ChatMessage]:
    """The planner conversation: system instructions with the schema, the few-shot examples as
    user/assistant turns, then the question. ``language`` is ``en``, ``zh`` or ``auto`` (by the
    question's script); ``operators`` as in :func:`system_prompt`. ``classes``: the graph has
    concept classes rules classify into — the class example (:data:`CLASS_EXAMPLES`) is shown too;
    ``causal``: the name of the graph's causal relation — the causal example is shown with it."""
    if not question or not question.strip():
        raise ValueError("the question is empty; the planner needs a question to plan")
    lang = _language(language, question)
    prefix = _QUESTION_PREFIX[lang]
    shown = [*EXAMPLES[lang], *([CLASS_EXAMPLES[lang]] if classes else []),
             *([causal_example(lang, causal)] if causal else [])]
    examples = [(prefix + example.question, json_reply(logical_form=example.logical_form)) for example in shown]
    return conversation(system_prompt(schema_summary, lang, operators), prefix + question.strip(), examples=examples)


def repair_plan_messages(
    messages: Sequence[ChatMessage], reply: str, error: LogicalFormError, language: str = "en"
) -> list[ChatMessage]:
    """``messages`` plus the invalid reply and what is wrong with it, for one more attempt."""
    lang = "zh" if str(language).lower().startswith("zh") else "en"
    if lang == "zh":
        ask = f"这个计划无效：{error}。请修正后只回复 JSON。"
    else:
        ask = f"That plan is invalid: {error}. Reply again with only the corrected JSON."
    return follow_up(messages, reply, ask)


# --------------------------------------------------------------------------------------------
# reading the model's reply

_FENCE = re.compile(r"```[a-zA-Z]*[ \t]*\n?(.*?)```", re.DOTALL)
_HEADER = re.compile(r"^\s*(?:[-*]\s+)?(?:\*\*)?\s*(step|action)\s*\d+\s*(?:\*\*)?\s*[:：]", re.IGNORECASE)
_TEXT_KEYS = ("logical_form", "logicalForm", "logic_form", "plan", "lf", "text")
_THINK = re.compile(r"<think(?:ing)?>(?P<think>.*?)</think(?:ing)?>", re.DOTALL | re.IGNORECASE)
_THINK_OPEN = re.compile(r"<think(?:ing)?>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think(?:ing)?>", re.IGNORECASE)


def split_thinking(text: str) -> tuple[str | None, str]:
    """Split a KAG-Thinker-style reply ``<think>...</think>`` + plan into (thinking, the rest).

    Every ``<think>...</think>`` (or ``<thinking>``) block is removed from the rest and their
    texts are joined as the thinking (``None`` when there is none). A lone ``</think>`` (the
    opening tag was in the prompt) ends the thinking. An opened block that is never closed is a
    :class:`LogicalFormError`: the plan would be inside the reasoning.
    """
    parts = [match["think"].strip() for match in _THINK.finditer(text)]
    rest = _THINK.sub("\n", text)
    close = _THINK_CLOSE.search(rest)
    if close and not _THINK_OPEN.search(rest, 0, close.start()):
        parts.insert(0, rest[: close.start()].strip())
        rest = rest[close.end() :]
    if _THINK_OPEN.search(rest):
        raise LogicalFormError(
            "the planner reply opens <think> but never closes it; end the reasoning with </think> "
            "and write the plan (Step1: ...) after it"
        )
    return ("\n\n".join(part for part in parts if part) or None), rest


def plan_text(response: PlanResponse | Mapping[str, Any] | str) -> str:
    """The logical-form text in the planner's reply (a ``PlanResponse``, a dict, raw JSON text,
    fenced text or bare logical-form text), cleaned of chatter; raises :class:`LogicalFormError`
    when there is none. :func:`kag_neo4j.solver.lf.parse.plan_from_response` parses it."""
    if isinstance(response, PlanResponse):
        return _clean_text(response.logical_form)
    if isinstance(response, Mapping):
        return _clean_text(_text_from_mapping(response))
    if not isinstance(response, str):
        raise LogicalFormError(f"the planner reply must be text or JSON, got {type(response).__name__}")
    text = split_thinking(response)[1].strip()
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1).strip()
    if not text:
        raise LogicalFormError(
            "the planner reply is empty; expected JSON with a logical_form", line=1, column=1
        )
    if text.startswith("{") or (not _has_header(text) and "{" in text):
        start = text.find("{")
        try:
            value = json.loads(text[start : text.rfind("}") + 1], strict=False)
        except json.JSONDecodeError as exc:
            raise LogicalFormError(
                f"the planner reply is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); "
                'expected {"logical_form": "Step1: ..."}'
            ) from None
        if not isinstance(value, Mapping):
            raise LogicalFormError(
                'the planner reply must be a JSON object such as {"logical_form": "Step1: ..."}'
            )
        return _clean_text(_text_from_mapping(value))
    return _clean_text(text)


def _has_header(text: str) -> bool:
    return any(_HEADER.match(line) for line in text.splitlines())


def _text_from_mapping(value: Mapping[str, Any]) -> str:
    for key in _TEXT_KEYS:
        text = value.get(key)
        if isinstance(text, str) and text.strip():
            return text
    steps = value.get("steps")
    if isinstance(steps, list) and steps:
        return _text_from_steps(steps)
    keys = ", ".join(map(str, value)) or "none"
    raise LogicalFormError(
        f'the planner JSON has no "logical_form" text (keys: {keys}); expected {{"logical_form": "Step1: ..."}}'
    )


def _text_from_steps(steps: list[Any]) -> str:
    lines: list[str] = []
    action_number = 0
    for index, step in enumerate(steps, start=1):
        if not isinstance(step, Mapping):
            raise LogicalFormError(
                f"step {index} of the planner JSON is not an object with a question and actions"
            )
        question = next(
            (
                step[k]
                for k in ("sub_question", "subquestion", "question", "step")
                if isinstance(step.get(k), str)
            ),
            None,
        )
        actions = step.get("actions", step.get("action", step.get("logical_form")))
        if isinstance(actions, str):
            actions = [actions]
        if not question or not isinstance(actions, list) or not actions:
            raise LogicalFormError(
                f"step {index} of the planner JSON needs a sub_question and a list of actions"
            )
        lines.append(f"Step{index}: {question}")
        for action in actions:
            if not isinstance(action, str):
                raise LogicalFormError(f"an action of step {index} in the planner JSON is not text")
            action = action.strip()
            if _HEADER.match(action):
                lines.append(action)
            else:
                action_number += 1
                lines.append(f"Action{action_number}: {action}")
    return "\n".join(lines)


def _clean_text(text: str) -> str:
    """Drop chatter around the plan: ``<think>`` blocks, lines before the first Step, markdown
    bullets and bold around headers, and prose after a complete ``Output(...)`` line."""
    text = split_thinking(text)[1]
    if "\n" not in text.strip() and "\\n" in text:  # the model escaped the line breaks twice
        text = text.replace("\\n", "\n")
    lines = text.replace("\r\n", "\n").split("\n")
    start = next((i for i, line in enumerate(lines) if _HEADER.match(line)), None)
    if start is None:
        return text
    kept: list[str] = []
    for line in lines[start:]:
        match = _HEADER.match(line)
        if match:
            line = re.sub(r"^\s*(?:[-*]\s+)?(?:\*\*)?\s*", "", line, count=1)
            line = re.sub(r"^((?:step|action)\s*\d+)\s*\*\*", r"\1", line, count=1, flags=re.IGNORECASE)
        kept.append(line)
    kept = _outputs_merged(_output_step_as_action(kept))
    for i in range(len(kept) - 1, -1, -1):
        line = kept[i]
        if _OUTPUT_ACTION.match(line):
            tail = kept[i + 1 :]
            if all(not _HEADER.match(t) for t in tail):
                kept = kept[: i + 1]
            break
    return "\n".join(kept)


_OUTPUT_STEP = re.compile(r"\s*step\s*\d+\s*[:：]\s*(output\s*[（(][^()（）]*[)）])\s*$", re.IGNORECASE)
_ACTION_NUMBER = re.compile(r"\s*action\s*(\d+)\s*[:：]", re.IGNORECASE)
_OUTPUT_ACTION = re.compile(
    r"\s*action\s*(\d+)\s*[:：]\s*output\s*[（(]([^()（）]*)[)）]\s*(//.*)?$", re.IGNORECASE)


def _output_step_as_action(lines: list[str]) -> list[str]:
    """A last ``StepN: Output(x)`` line (a step with no sub-question, written by small models)
    becomes the action it means, ``Action<next>: Output(x)``; any other line is left alone."""
    last = next((i for i in range(len(lines) - 1, -1, -1) if lines[i].strip()), None)
    if last is None:
        return lines
    match = _OUTPUT_STEP.match(lines[last])
    if match is None:
        return lines
    numbers = [int(m.group(1)) for m in map(_ACTION_NUMBER.match, lines[:last]) if m]
    return [*lines[:last], f"Action{max(numbers, default=0) + 1}: {match.group(1)}", *lines[last + 1 :]]


def _outputs_merged(lines: list[str]) -> list[str]:
    """Several one-line ``ActionN: Output(...)`` (a small model outputs each step's result) become
    the last of them, naming every alias they named, in order; a step whose only actions were
    those Outputs is dropped. One Output or none: the lines are left alone."""
    found = [(i, match) for i, line in enumerate(lines) if (match := _OUTPUT_ACTION.match(line))]
    if len(found) < 2:
        return lines
    aliases: list[str] = []
    for _, match in found:
        for alias in re.split(r"[,，]", match.group(2)):
            alias = alias.strip().strip("`")
            if alias and alias not in aliases:
                aliases.append(alias)
    last, last_match = found[-1]
    removed = {i for i, _ in found[:-1]}
    step_of: list[int | None] = []  # the line of the Step header each line belongs to
    actions: dict[int | None, list[int]] = {}
    current: int | None = None
    for i, line in enumerate(lines):
        header = _HEADER.match(line)
        if header and header.group(1).lower() == "step":
            current = i
        elif header:
            actions.setdefault(current, []).append(i)
        step_of.append(current)
    emptied = {step for step, found_here in actions.items() if step is not None and set(found_here) <= removed}
    merged = f"Action{last_match.group(1)}: Output({', '.join(aliases)})"
    return [merged if i == last else line for i, line in enumerate(lines)
            if i not in removed and step_of[i] not in emptied]

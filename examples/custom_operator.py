"""A custom logical-form operator: ``Upper(content=[...])->u1`` writes texts in capital letters.

Everything the operator needs is in this one file: the AST node (what the plan holds, how it
prints, which aliases it reads), the parser hook (how its arguments are read), the handler (how
it runs) and the spec, which carries the planner prompt's line for it. Registering the spec
makes the parser accept ``Upper``, the planner prompt list it and the executor run it.

Run it (no database and no model needed; a scripted model stands in for the planner)::

    python examples/custom_operator.py
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Literal

from pydantic import Field

from kag_neo4j.models.scripted import ScriptedLLM
from kag_neo4j.solver.action import ActionContext
from kag_neo4j.solver.executor import PlanExecutor
from kag_neo4j.solver.lf.ast import AliasRef, AliasUse, BoundOp, ContentItem, SourcePos, content_reads
from kag_neo4j.solver.lf.registry import OPERATORS, OperatorRegistry
from kag_neo4j.solver.lf.scanner import Scanner
from kag_neo4j.solver.lf.spec import OperatorSpec
from kag_neo4j.solver.memory import Item
from kag_neo4j.solver.planner import Planner
from kag_neo4j.solver.runtime import Runtime, SolverConfig
from kag_neo4j.solver.validate import SimpleSchema, validate_plan


class UpperOp(BoundOp):
    """``Upper(content=[`a`, "text", ...])->u1``."""

    kind: Literal["Upper"] = "Upper"
    content: list[ContentItem] = Field(default_factory=list)

    def to_text(self) -> str:
        content = ", ".join(item.to_text() for item in self.content)
        return f"Upper(content=[{content}])->{self.output}"

    def reads(self, defined: Collection[str], where: str) -> list[AliasUse]:
        return content_reads(self.content)


def parse_upper(scanner: Scanner, pos: SourcePos) -> UpperOp:
    """The arguments after ``Upper(``; the parser reads the ``->alias`` that follows."""
    content: list[ContentItem] = []
    for _key, _ in scanner.keyword_args("Upper", ("content",)):
        content = list(scanner.content())
    return UpperOp(content=content, output="_", pos=pos)


def run_upper(ctx: ActionContext, op: UpperOp) -> None:
    """Bind ``op.output`` to every content text (each item of an alias) in capital letters."""
    ctx.inputs("Upper")  # every alias read must hold a value (else an OperatorError is noted)
    items: list[Item] = []
    for item in op.content:
        if isinstance(item, AliasRef):
            binding = ctx.rt.memory.get(item.alias)
            items += [Item(value=value.text.upper()) for value in (binding.items if binding else [])]
        else:
            items.append(Item(value=str(item.value).upper()))
    ctx.record.source = "operator"  # a registered operator, run in code
    ctx.record.note = f"{len(items)} text(s) in capitals"
    ctx.bind(op.output, items)


SPEC = OperatorSpec(
    name="Upper",
    node=UpperOp,
    parse=parse_upper,
    handler=run_upper,
    prompt={
        "en": "- Upper(content=[`a`, ...])->u1 writes the texts of a (and of the other items) in capital letters.",
        "zh": "- Upper(content=[`a`, ...])->u1 把 a（及其他各项）的文本写成大写字母。",
    },
)

QUESTION = "What are the names of Ada Pembroke and her company, in capitals?"
PLAN = """\
Step1: What is Ada Pembroke's name in capitals?
Action1: Upper(content=["Ada Pembroke"])->u1
Step2: And the names of both, in capitals?
Action2: Upper(content=[`u1`, "Harrow Valley Rail Company"])->u2
Action3: Output(u2)"""


def demo(operators: OperatorRegistry) -> dict[str, str]:
    """Plan :data:`QUESTION` (the scripted model answers with :data:`PLAN`) and run the plan
    with ``operators``; returns what the output aliases hold."""
    llm = ScriptedLLM([{"logical_form": PLAN}])
    rt = Runtime(None, llm, None, config=SolverConfig(), language="en")  # type: ignore[arg-type]  # no graph used
    planner = Planner(rt, operators=operators)
    plan, origin = planner.plan(QUESTION, rt.new_record("Plan", question=QUESTION))
    if origin == "fallback":
        raise RuntimeError(f"the plan did not parse: {rt.records[0].note}")
    PlanExecutor(rt, operators).run(validate_plan(plan, SimpleSchema.build([])))
    return {alias: binding.text() for alias in plan.output.names if (binding := rt.memory.get(alias)) is not None}


def main() -> None:
    OPERATORS.register(SPEC)  # from now on every plan, prompt and run knows Upper
    print(json.dumps(demo(OPERATORS), ensure_ascii=False))


if __name__ == "__main__":
    main()

"""``Math(content=[...], target=`expr`)->alias``: the target evaluated in code.

The expression language (its own tokenizer and parser; model text is never ``eval``-ed) is
:mod:`kag_neo4j.solver.lf.expression`: the parser checks targets when a plan is read, the
evaluator runs here on the values the step reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kag_neo4j.prompts.plan import OPERATOR_LINES
from kag_neo4j.solver.lf.ast import MathOp
from kag_neo4j.solver.lf.expression import evaluate
from kag_neo4j.solver.lf.scanner import Scanner
from kag_neo4j.solver.lf.spec import OperatorSpec
from kag_neo4j.solver.memory import Item
from kag_neo4j.solver.values import json_value

if TYPE_CHECKING:
    from kag_neo4j.solver.action import ActionContext

__all__ = ["SPEC", "run"]


def run(ctx: ActionContext, op: MathOp) -> None:
    """Evaluate ``op.target`` on the bound values; a list result binds one item per value."""
    values = ctx.inputs("Math")
    result = evaluate(op.target, values)
    ctx.record.source = "math"
    ctx.record.note = f"{op.target} = {json_value(result)}"
    results = result if isinstance(result, list) else [result]
    ctx.bind(op.output, [Item(value=json_value(value)) for value in results])


SPEC = OperatorSpec(name="Math", node=MathOp, parse=Scanner.math, handler=run, prompt=OPERATOR_LINES["Math"])

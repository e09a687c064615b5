"""``Output(a, b, ...)``: names the answer aliases; the record shows what they hold."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kag_neo4j.prompts.plan import OPERATOR_LINES
from kag_neo4j.solver.lf.ast import OutputOp
from kag_neo4j.solver.lf.scanner import Scanner
from kag_neo4j.solver.lf.spec import OperatorSpec

if TYPE_CHECKING:
    from kag_neo4j.solver.action import ActionContext

__all__ = ["SPEC", "run"]


def run(ctx: ActionContext, op: OutputOp) -> None:
    ctx.record.source = "output"
    for alias in op.names:
        binding = ctx.rt.memory.get(alias)
        if binding is not None and not binding.empty:
            ctx.record.outputs[alias] = binding.text()


SPEC = OperatorSpec(name="Output", node=OutputOp, parse=Scanner.output, handler=run, prompt=OPERATOR_LINES["Output"])

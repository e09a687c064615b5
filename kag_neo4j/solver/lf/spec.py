"""One logical-form operator, declared once: :class:`OperatorSpec`.

A spec joins everything that makes an operator: its name (and synonyms the planner may write),
its AST node class, the parser hook that reads its arguments, the handler that runs it and the
line the planner prompt shows for it. :mod:`kag_neo4j.solver.lf.registry` holds the specs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kag_neo4j.solver.lf.ast import OperatorNode, SourcePos

if TYPE_CHECKING:
    from kag_neo4j.solver.action import ActionContext
    from kag_neo4j.solver.lf.scanner import Scanner

__all__ = ["Handler", "OperatorSpec", "ParserHook"]

#: reads the arguments after ``Name(`` up to and including ``)``; ``pos`` is where the name starts
ParserHook = Callable[["Scanner", SourcePos], OperatorNode]
#: runs one action: reads inputs and binds results through the context, notes on its record
Handler = Callable[["ActionContext", Any], None]


@dataclass(frozen=True)
class OperatorSpec:
    """A logical-form operator.

    * ``name`` — as written in plans (``Sort``); matched case-insensitively, like ``synonyms``.
    * ``node`` — its :class:`~kag_neo4j.solver.lf.ast.OperatorNode` subclass, whose ``kind``
      is ``name``.
    * ``parse`` — the parser hook (see :mod:`kag_neo4j.solver.lf.scanner` for the readers).
    * ``handler`` — ``handler(ctx, node)`` runs the action
      (:class:`~kag_neo4j.solver.action.ActionContext`).
    * ``prompt`` — language (``en``, ``zh``) -> the planner prompt's bullet for the operator.
    """

    name: str
    node: type[OperatorNode]
    parse: ParserHook
    handler: Handler
    prompt: Mapping[str, str]
    synonyms: tuple[str, ...] = field(default=())

"""Logical-form text -> a checked :class:`~kag_neo4j.solver.lf.ast.Plan`.

:func:`parse_plan` splits the text into ``Step<n>:`` and ``Action<n>:`` lines (an action goes on
over further lines while a bracket or a string is open), looks each operator name up in the
registry (:data:`~kag_neo4j.solver.lf.registry.OPERATORS`) and lets the operator's parser hook
read its arguments with a :class:`~kag_neo4j.solver.lf.scanner.Scanner`. Every problem is a
:class:`~kag_neo4j.errors.LogicalFormError` carrying the 1-based line and column.
:func:`plan_from_response` parses a planner reply
(:func:`kag_neo4j.prompts.plan.plan_text` finds the text in it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, cast

from pydantic import ValidationError

from kag_neo4j.errors import LogicalFormError
from kag_neo4j.prompts.plan import PlanResponse, plan_text
from kag_neo4j.solver.lf.ast import (
    Action,
    AliasRef,
    DeduceOp,
    Element,
    OperatorNode,
    Plan,
    PropertyRef,
    RetrievalOp,
    SourcePos,
    Step,
    fail,
    suggest,
)
from kag_neo4j.solver.lf.registry import OPERATORS, OperatorRegistry
from kag_neo4j.solver.lf.scanner import HEADER, PROPERTY_REF, Pending, Region, Scanner, alias_or_fail

__all__ = ["parse_plan", "plan_from_response"]

_OLD_KAG_OPERATORS = {
    "get": "name the answer aliases with Output(o1, ...)",
    "search_s": "write a Retrieval(s=..., p=p1, o=o1) with the filters as constraints such as "
    "s.city=`Hangzhou`",
    "verify": "write Deduce(op=judgement, content=[`o1`], target=`<statement>`)->d1",
    "extractor": "write Deduce(op=extract, content=[`o1`], target=`<what to extract>`)->d1",
    "filter": "put the condition into the Retrieval as a constraint such as o.year>2000",
    "count": "write Math(content=[`o1`], target=`count(o1)`)->m1",
    "sum": "write Math(content=[`o1`], target=`sum(o1)`)->m1",
}

def _revalidate(node: OperatorNode) -> OperatorNode:
    """Run pydantic validation on a node built with ``model_construct`` (keeps positions)."""
    data = {name: getattr(node, name) for name in type(node).model_fields}
    return type(node).model_validate(data)


def parse_plan(text: str, operators: OperatorRegistry | None = None) -> Plan:
    """Parse logical-form text into a checked :class:`Plan` (``operators``: the registry to
    read operator names from, :data:`OPERATORS` by default).

    Raises :class:`LogicalFormError` naming the line and column of the first problem.
    """
    if not isinstance(text, str):
        raise LogicalFormError(f"a plan must be text, got {type(text).__name__}")
    lines = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff").split("\n")
    steps: list[dict[str, Any]] = []
    registry = OPERATORS if operators is None else operators
    pending: list[Pending] = []
    last = SourcePos(line=1, column=1)
    index = 0
    while index < len(lines):
        line = lines[index]
        line_no = index + 1
        stripped = line.strip()
        index += 1
        if not stripped or stripped.startswith("//"):
            continue
        header = HEADER.match(line)
        if not header:
            column = len(line) - len(line.lstrip()) + 1
            raise LogicalFormError(
                f"expected 'Step<n>: <sub-question>' or 'Action<n>: <operator>(...)' but found "
                f"{stripped[:40]!r}",
                line=line_no,
                column=column,
            )
        number = int(header["num"])
        rest_col = header.end() + 1
        head_pos = SourcePos(line=line_no, column=header.start("kw") + 1)
        if header["kw"].lower() == "step":
            question = line[header.end() :].strip()
            if not question:
                raise LogicalFormError(
                    f"Step{number} has no sub-question; write 'Step{number}: <sub-question>'",
                    line=line_no,
                    column=rest_col,
                )
            steps.append({"number": number, "question": question, "actions": [], "pos": head_pos})
            last = SourcePos(line=line_no, column=len(line) + 1)
            continue
        if not steps:
            raise LogicalFormError(
                f"Action{number} comes before any Step; put 'Step1: <sub-question>' above it",
                line=line_no,
                column=head_pos.column,
            )
        body = line[header.end() :]
        start_line = line_no
        if not body.strip():
            raise LogicalFormError(
                f"Action{number} has no operator; write e.g. 'Action{number}: Retrieval(s=..., p=..., o=...)'",
                line=line_no,
                column=rest_col,
            )
        operator, found, index = _parse_action(number, body, lines, index, start_line, rest_col, registry)
        pending.extend(found)
        steps[-1]["actions"].append({"number": number, "operator": operator, "pos": head_pos, "pending": bool(found)})
        end_line = index
        last = SourcePos(line=end_line, column=len(lines[end_line - 1]) + 1)
    if not steps:
        raise LogicalFormError(
            "the plan is empty; write 'Step1: <sub-question>' then 'Action1: <operator>(...)'",
            line=1,
            column=1,
        )
    for step in steps:
        if not step["actions"]:
            pos = step["pos"]
            raise LogicalFormError(
                f"Step{step['number']} has no Action line; add 'Action<n>: <operator>(...)' below it",
                line=pos.line,
                column=pos.column,
            )
    return _build(steps, pending, last)


def _parse_action(
    number: int, body: str, lines: list[str], index: int, line: int, column: int, operators: OperatorRegistry
) -> tuple[OperatorNode, list[Pending], int]:
    """Scan one action starting with ``body`` (the text after ``Action<n>:``). While the text
    ends inside the operator's parentheses or a string, the next line is appended and the
    action scanned again (a bracket does not continue over a ``Step``/``Action`` line; a string
    does). Returns the operator, its pending names and the index of the next unread line."""
    while True:
        scanner = Scanner(Region(body, line, column))
        try:
            operator = _parse_operator(scanner, operators)
            return operator, scanner.pending, index
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = ".".join(str(part) for part in problem["loc"]) or "operator"
            raise LogicalFormError(f"Action{number}: {where}: {problem['msg']}", line=line, column=column) from None
        except LogicalFormError:
            if not scanner.ran_out:
                raise
            quote = scanner.open_quote
            if index < len(lines) and (quote is not None or not HEADER.match(lines[index])):
                body += "\n" + lines[index]
                index += 1
                continue
            if quote is not None:
                message = f"Action{number} has a string opened with {quote} that is never closed"
            else:
                message = f"Action{number} has an unclosed '(' or '['; close it before the next step"
            raise LogicalFormError(message, line=line, column=column) from None


def _build(steps: list[dict[str, Any]], pending: list[Pending], end: SourcePos) -> Plan:
    # aliases defined anywhere decide whether a bare [x] reads alias x or names an entity "x"
    defined: set[str] = set()
    for step in steps:
        for action in step["actions"]:
            defined.update(definition.alias for definition in action["operator"].defines())
    pending_ids = {id(p.node) for p in pending}
    built_steps = []
    for step in steps:
        actions = []
        for action in step["actions"]:
            op = action["operator"]
            if action["pending"]:  # only a Retrieval's hook leaves names pending
                op = _settle_pending(cast(RetrievalOp, op), pending_ids, defined)
            if isinstance(op, DeduceOp) and _reads_unknown(op, defined):
                op = _deduce_as_hop(op, defined)  # adds the hop's new aliases to ``defined``
            op = _revalidated_with_positions(op)
            actions.append(Action(number=action["number"], operator=op, pos=action["pos"]))
        built_steps.append(
            Step(number=step["number"], question=step["question"], actions=actions, pos=step["pos"])
        )
    return Plan(steps=built_steps, pos=end)


def _settle_pending(op: RetrievalOp, pending_ids: set[int], defined: set[str]) -> RetrievalOp:
    """A bare ``[x]`` naming a defined alias binds it; a bare ``x.prop`` constraint value whose
    ``x`` is s, p, o or a defined alias reads that property. Anything else stays text."""
    updates: dict[str, Any] = {}
    for role, element in op.elements():
        if id(element) in pending_ids and element.name in defined and element.name != element.alias:
            updates[role] = element.model_copy(update={"name": None, "ref": element.name})
    constraints = []
    for constraint in op.constraints:
        match = PROPERTY_REF.fullmatch(str(constraint.value)) if id(constraint) in pending_ids else None
        if match and (match["alias"] in {"s", "p", "o"} or match["alias"] in defined):
            ref = PropertyRef(alias=match["alias"], prop=match["prop"])
            constraint = constraint.model_copy(update={"value": None, "ref": ref})
        constraints.append(constraint)
    if constraints != op.constraints:
        updates["constraints"] = constraints
    return op.model_copy(update=updates) if updates else op


def _reads_unknown(op: DeduceOp, defined: set[str]) -> bool:
    """Whether the Deduce's content reads an alias that no action defines."""
    return any(isinstance(item, AliasRef) and item.alias not in defined for item in op.content)


def _deduce_as_hop(op: DeduceOp, defined: set[str]) -> RetrievalOp:
    """A Deduce that reads an alias no action defines (``Step2: Who is the spouse of the director?``
    then ``Deduce(op=equal, content=[`o1`, `o2`], ...)->d1`` with no ``o2``) asks for a fact nothing
    has retrieved: it is the step's hop, ``Retrieval(s=o1, p=p<n>, o=d1)`` — from the first alias it
    reads that is defined (else a new one), to its result alias."""
    known = [item.alias for item in op.content if isinstance(item, AliasRef) and item.alias in defined]

    def fresh(prefix: str) -> str:
        number = 1
        while f"{prefix}{number}" in defined:
            number += 1
        defined.add(f"{prefix}{number}")
        return f"{prefix}{number}"

    subject = Element(alias=known[0] if known else fresh("s"), pos=op.pos)
    predicate = Element(alias=fresh("p"), pos=op.pos)
    return RetrievalOp(s=subject, p=predicate, o=Element(alias=op.output, pos=op.output_pos), pos=op.pos)


def _revalidated_with_positions(op: OperatorNode) -> OperatorNode:
    # a hook may build its node with model_construct (the '->alias' comes later): validate the
    # fields, then restore the positions (fields excluded from dumps)
    checked = _revalidate(op)
    extras = {name: getattr(op, name) for name, info in type(op).model_fields.items() if info.exclude}
    return checked.model_copy(update=extras)


def _result_object(op: RetrievalOp) -> bool:
    """Whether ``op``'s object is a new result: typed, with no name and no binding (``o=o3:River``)."""
    return op.o.type is not None and op.o.name is None and op.o.ref is None


def _parse_operator(scanner: Scanner, operators: OperatorRegistry) -> OperatorNode:
    """``Name(...)`` and, for operators that bind a result, ``->alias``."""
    names = operators.names()
    listed = ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else "".join(names)
    name, pos = scanner.ident(f"an operator name such as {listed}")
    spec = operators.lookup(name)
    if spec is None and name.lower() in _OLD_KAG_OPERATORS:
        raise fail(
            f"{name!r} is an older KAG operator that kag-neo4j does not accept; "
            f"{_OLD_KAG_OPERATORS[name.lower()]}",
            pos,
        )
    if spec is None:
        raise fail(
            f"unknown operator {name!r}{suggest(name, names)}; expected one of {', '.join(names)}",
            pos,
        )
    canonical = spec.name
    scanner.expect("(", f"after {canonical}")
    scanner.open = True
    node = spec.parse(scanner, pos)
    scanner.open = False
    scanner.skip()
    arrow = re.compile(r"->|→|=>").match(scanner.text, scanner.i)
    if arrow:
        scanner.i = arrow.end()
        alias, alias_pos = scanner.ident("an alias after '->'")
        if isinstance(node, RetrievalOp) and _result_object(node):
            # `Retrieval(s=o2, p=p3:locatedIn, o=o3:River)->a1`: the hop's result is its new object,
            # so `a1` names it (`o=a1:River`)
            renamed = node.o.model_copy(update={"alias": alias_or_fail(alias, alias_pos)})
            node = node.model_copy(update={"o": renamed})
        elif not node.binds:
            raise fail(
                f"{canonical} does not bind a result with '->{alias}'; Retrieval binds its "
                "aliases inside s=, p=, o= and Output binds nothing",
                alias_pos,
            )
        node = node.model_copy(update={"output": alias_or_fail(alias, alias_pos), "output_pos": alias_pos})
    elif node.binds:
        raise scanner.error(f"{canonical}(...) must bind its result to an alias: add '->x1' after ')'")
    scanner.skip()
    if scanner.i < len(scanner.text):
        raise scanner.error(f"unexpected text {scanner.found()} after the {canonical} operator")
    return node


def plan_from_response(
    response: PlanResponse | Mapping[str, Any] | str, operators: OperatorRegistry | None = None
) -> Plan:
    """Parse the planner's reply into a :class:`Plan`; raises :class:`LogicalFormError`."""
    return parse_plan(plan_text(response), operators)

"""Checks of a whole plan: numbering, alias definitions and reads, cycles, the single ``Output``.

Every operator node says what it defines (:meth:`~kag_neo4j.solver.lf.ast.OperatorNode.defines`)
and reads (:meth:`~kag_neo4j.solver.lf.ast.OperatorNode.reads`); nothing here looks at an
operator's class, so a new operator is checked like the built-in ones. Every problem is a
:class:`~kag_neo4j.errors.LogicalFormError` at the position of the offending text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kag_neo4j.solver.lf.ast import (
    Action,
    AliasUse,
    Definition,
    Element,
    Plan,
    SourcePos,
    Step,
    fail,
    suggest,
)
from kag_neo4j.solver.lf.expression import FUNCTIONS as MATH_FUNCTIONS

__all__ = ["RESERVED_ALIASES", "AliasSite", "Analysis", "analyse"]

RESERVED_ALIASES = frozenset({"s", "p", "o", "true", "false"}) | frozenset(MATH_FUNCTIONS)


@dataclass(frozen=True)
class AliasSite:
    """Where an alias is defined: step and action numbers, and the role that defines it
    (``s``/``p``/``o`` for Retrieval elements, else the operator name)."""

    alias: str
    step: int
    action: int
    role: str
    type: str | None
    pos: SourcePos | None


@dataclass
class Analysis:
    definitions: dict[str, AliasSite]
    uses: dict[int, tuple[str, ...]]  # action number -> aliases it reads
    step_deps: dict[int, frozenset[int]]
    layers: list[list[int]]


def _where(step: Step, action: Action) -> str:
    return f"Action{action.number} of Step{step.number}"


def _norm(value: str | None) -> str | None:
    return None if value is None else re.sub(r"[\s_\-]+", "", value).casefold()


def _site(definition: Definition, step: Step, action: Action) -> AliasSite:
    return AliasSite(
        definition.alias, step.number, action.number, definition.role, definition.type, definition.pos
    )


def _conflicts(first: Element, element: Element) -> list[str]:
    """What differs between two elements that define the same alias."""
    conflicts = [
        what
        for what, a, b in (
            ("type", _norm(first.type), _norm(element.type)),
            ("name", first.name, element.name),
            ("binding", first.ref, element.ref),
        )
        if a is not None and b is not None and a != b
    ]
    if first.name is not None and element.ref is not None or (first.ref is not None and element.name is not None):
        conflicts.append("name")
    return conflicts


def analyse(plan: Plan) -> Analysis:
    steps = plan.steps
    _check_numbering(steps)
    order: list[tuple[Step, Action]] = [(s, a) for s in steps for a in s.actions]
    definitions = _definitions(order)
    uses = _reads(order, definitions)

    # ---- step dependencies --------------------------------------------------------------------
    position = {action.number: index for index, (_, action) in enumerate(order)}
    deps: dict[int, set[int]] = {step.number: set() for step in steps}
    witness: dict[tuple[int, int], AliasUse] = {}
    for step, action in order:
        for use in uses[action.number]:
            site = definitions[use.alias]
            if site.step == step.number:
                if position[site.action] > position[action.number]:
                    raise fail(
                        f"alias {use.alias!r} is read by Action{action.number} before Action{site.action} "
                        f"defines it in the same Step{step.number}; move Action{site.action} above "
                        f"Action{action.number}",
                        use.pos,
                    )
                continue
            deps[step.number].add(site.step)
            witness.setdefault((step.number, site.step), use)
    layers = _layers(deps, witness)

    # ---- Output -------------------------------------------------------------------------------
    outputs = [(s, a) for s, a in order if a.operator.kind == "Output"]
    if not outputs:
        raise fail(
            "the plan has no Output action; end it with a line such as 'Action"
            f"{max(position) + 1}: Output(<alias>)' naming the answer alias",
            plan.pos,
        )
    if len(outputs) > 1:
        first_output = outputs[0][1]
        raise fail(
            f"the plan has more than one Output (Action{first_output.number} and "
            f"Action{outputs[1][1].number}); "
            "put every answer alias into a single Output(a, b)",
            outputs[1][1].pos,
        )
    return Analysis(
        definitions=definitions,
        uses={number: tuple(dict.fromkeys(use.alias for use in found)) for number, found in uses.items()},
        step_deps={number: frozenset(d) for number, d in deps.items()},
        layers=layers,
    )


def _check_numbering(steps: list[Step]) -> None:
    seen_steps: dict[int, Step] = {}
    seen_actions: dict[int, Action] = {}
    for step in steps:
        if step.number in seen_steps:
            first = seen_steps[step.number]
            raise fail(
                f"Step{step.number} appears twice (first at {first.pos or 'an earlier step'}); "
                "number the steps 1, 2, 3, ...",
                step.pos,
            )
        seen_steps[step.number] = step
        for action in step.actions:
            if action.number in seen_actions:
                first_action = seen_actions[action.number]
                raise fail(
                    f"Action{action.number} appears twice (first at "
                    f"{first_action.pos or 'an earlier action'}); number the actions 1, 2, 3, ...",
                    action.pos,
                )
            seen_actions[action.number] = action


def _reserve_check(alias: str, pos: SourcePos | None, where: str) -> None:
    if alias in RESERVED_ALIASES:
        raise fail(
            f"alias {alias!r} in {where} is a reserved word (s, p, o, true, false and the Math "
            "functions); choose another name such as o1 or m1",
            pos,
        )


def _definitions(order: list[tuple[Step, Action]]) -> dict[str, AliasSite]:
    definitions: dict[str, AliasSite] = {}
    element_defs: dict[str, Element] = {}

    def define(site: AliasSite, where: str) -> None:
        _reserve_check(site.alias, site.pos, where)
        first = definitions.get(site.alias)
        if first is not None:
            raise fail(
                f"alias {site.alias!r} in {where} is already defined at "
                f"{first.pos or f'Action{first.action}'} (Action{first.action} of Step{first.step}); "
                "give this result a new alias",
                site.pos,
            )
        definitions[site.alias] = site

    for step, action in order:
        op = action.operator
        where = _where(step, action)
        seen_here: set[str] = set()
        for definition in op.defines():
            if definition.alias in seen_here:
                raise fail(
                    f"alias {definition.alias!r} is used twice in the same {op.kind} ({where}); "
                    "s, p and o need distinct aliases",
                    definition.pos,
                )
            seen_here.add(definition.alias)
            if definition.bare:
                continue
            element = definition.element
            first_el = element_defs.get(definition.alias)
            if definition.alias in definitions and element is not None and first_el is not None:
                conflicts = _conflicts(first_el, element)
                if conflicts:
                    first_site = definitions[definition.alias]
                    raise fail(
                        f"alias {element.alias!r} in {where} is already defined at "
                        f"{first_site.pos or f'Action{first_site.action}'} with a different "
                        f"{conflicts[0]} ({element.to_text()} vs {first_el.to_text()}); "
                        "use a new alias for a different thing, or repeat it bare to reuse it",
                        element.pos,
                    )
                continue
            define(_site(definition, step, action), where)  # raises for a duplicate
            if element is not None:
                element_defs[definition.alias] = element
    # bare elements that nothing else defines are untyped definitions
    for step, action in order:
        for definition in action.operator.defines():
            if definition.bare and definition.alias not in definitions:
                _reserve_check(definition.alias, definition.pos, _where(step, action))
                definitions[definition.alias] = _site(definition, step, action)
    return definitions


def _reads(order: list[tuple[Step, Action]], definitions: dict[str, AliasSite]) -> dict[int, list[AliasUse]]:
    uses: dict[int, list[AliasUse]] = {}
    for step, action in order:
        where = _where(step, action)
        here = (step.number, action.number)
        found: list[AliasUse] = []
        for use in action.operator.reads(definitions, where):
            site = definitions.get(use.alias)
            if use.own and site is not None and (site.step, site.action) == here:
                continue
            found.append(use)
        for use in found:
            if use.alias not in definitions:
                raise fail(
                    f"alias {use.alias!r} (read by {where}) is not defined by any action"
                    f"{suggest(use.alias, list(definitions))}; define it first, e.g. o=o9:Type in a "
                    "Retrieval or ->name after Math/Deduce/Sort",
                    use.pos,
                )
            site = definitions[use.alias]
            if (site.step, site.action) == here:
                raise fail(
                    f"alias {use.alias!r} is read by the action that defines it ({where}); an action "
                    "cannot use its own result",
                    use.pos,
                )
        uses[action.number] = found
    return uses


def _layers(deps: dict[int, set[int]], witness: dict[tuple[int, int], AliasUse]) -> list[list[int]]:
    remaining = {number: set(d) for number, d in deps.items()}
    layers: list[list[int]] = []
    while remaining:
        ready = sorted(number for number, d in remaining.items() if not d)
        if not ready:
            cycle = _find_cycle(remaining)
            hops = []
            for a, b in zip(cycle, cycle[1:], strict=False):
                use = witness[(a, b)]
                hops.append(f"Step{a} reads {use.alias!r} from Step{b}")
            first_use = witness[(cycle[0], cycle[1])]
            chain = " -> ".join(f"Step{n}" for n in cycle)
            raise fail(f"cyclic dependency {chain}: {'; '.join(hops)}; break the cycle", first_use.pos)
        layers.append(ready)
        for number in ready:
            del remaining[number]
        for d in remaining.values():
            d.difference_update(ready)
    return layers


def _find_cycle(graph: dict[int, set[int]]) -> list[int]:
    start = min(graph)
    path: list[int] = []
    seen: dict[int, int] = {}
    node = start
    while node not in seen:
        seen[node] = len(path)
        path.append(node)
        node = min(graph[node])
    return path[seen[node] :] + [node]

"""What an operator handler gets: :class:`ActionContext`, one action being run.

The context owns the action's :class:`~kag_neo4j.solver.results.StepRecord` and its
dependencies (the records that bound the aliases the action reads), and is the one way a handler
binds an alias (:meth:`ActionContext.bind`). Handlers read the runtime (``ctx.rt``: database,
models, memory, configuration) and note what they did on ``ctx.record``.
"""

from __future__ import annotations

from typing import Any

from kag_neo4j.errors import OperatorError
from kag_neo4j.solver.lf.ast import Action, Step
from kag_neo4j.solver.memory import Binding, Item
from kag_neo4j.solver.results import StepRecord
from kag_neo4j.solver.runtime import Runtime
from kag_neo4j.solver.validate import ValidatedPlan

__all__ = ["ActionContext"]


class ActionContext:
    """One action of a validated plan, run against a runtime, noted on ``record``.

    On creation ``record.depends_on`` lists the records that bound the aliases the action reads.
    """

    def __init__(self, rt: Runtime, plan: ValidatedPlan, step: Step, action: Action, record: StepRecord) -> None:
        self.rt = rt
        self.plan = plan
        self.step = step
        self.action = action
        self.record = record
        records = set()
        for alias in self.reads:
            binding = rt.memory.get(alias)
            if binding is not None and binding.record is not None:
                records.add(binding.record)
        record.depends_on = sorted(records)

    @property
    def question(self) -> str:
        """The step's sub-question."""
        return self.step.question

    @property
    def reads(self) -> tuple[str, ...]:
        """The aliases the action reads (defined by other actions), in order."""
        return self.plan.plan.uses(self.action.number)

    def inputs(self, what: str) -> dict[str, Any]:
        """Every bound value by alias; raises :class:`OperatorError` naming ``what`` when an alias
        the action reads has no value."""
        values = self.rt.memory.values()
        missing = [alias for alias in self.reads if alias not in values]
        if missing:
            raise OperatorError(
                f"{what} reads {', '.join(repr(a) for a in missing)}, which the earlier steps could not find"
            )
        return values

    def depend_on(self, *records: int | None) -> None:
        """Add records the action's result depends on (``None`` is ignored)."""
        extra = {index for index in records if index is not None}
        if extra - set(self.record.depends_on):
            self.record.depends_on = sorted(set(self.record.depends_on) | extra)

    def bind(self, alias: str, items: list[Item], source: str | None = None) -> None:
        """Bind ``alias`` to ``items`` (repeats dropped: the same entity, or the same text with
        no entity, for the same anchor) found by ``source`` (default: the record's source); a
        non-empty binding is shown in the record's outputs."""
        unique: list[Item] = []
        seen: set[tuple[str | None, str | None, str]] = set()
        for item in items:
            key = (item.key, item.entity_id, item.text if item.entity_id is None else "")
            if key in seen:
                continue
            seen.add(key)
            unique.append(item)
        record = self.record
        self.rt.memory.bind(
            Binding(
                alias=alias, items=unique, source=record.source if source is None else source,
                record=record.index, question=self.question,
            )
        )
        if unique:
            record.outputs[alias] = ", ".join(item.text for item in unique)

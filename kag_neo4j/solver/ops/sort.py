"""``Sort(set=alias, orderby=..., direction=min|max, limit=n)->alias``, in code.

:func:`sort_items` orders items by a key read as a number, a date or text (the readers of
:mod:`kag_neo4j.solver.values`, which Math and Deduce share); :func:`run` sorts the items bound
to ``set`` by the values ``orderby`` holds for each of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

from pydantic import BaseModel

from kag_neo4j.errors import OperatorError
from kag_neo4j.prompts.plan import OPERATOR_LINES
from kag_neo4j.solver.lf.ast import SortOp
from kag_neo4j.solver.lf.scanner import Scanner
from kag_neo4j.solver.lf.spec import OperatorSpec
from kag_neo4j.solver.values import (
    PartialDate,
    as_date,
    as_number,
    normalise_text,
    unwrap_one,
    value_kind,
)

if TYPE_CHECKING:
    from kag_neo4j.solver.action import ActionContext

__all__ = ["SPEC", "Direction", "run", "sort_items"]

T = TypeVar("T")
Direction = Literal["min", "max"]
_MISSING = object()


def _read_key(item: Any, key: str | Callable[[Any], Any] | None) -> Any:
    if key is None:
        return item
    if callable(key):
        return key(item)
    current = item
    for part in key.split("."):
        if isinstance(current, Mapping):
            current = current.get(part, _MISSING)
        elif isinstance(current, BaseModel) and part in type(current).model_fields:
            current = getattr(current, part)
        else:
            return _MISSING
        if current is _MISSING:
            return _MISSING
    return current


def sort_items(
    items: Sequence[T],
    key: str | Callable[[T], Any] | None = None,
    direction: Direction = "min",
    limit: int | None = 1,
) -> list[T]:
    """Order ``items`` by ``key`` and keep the first ``limit`` (``None`` keeps all).

    ``key`` is ``None`` (the item itself), a callable, or a property name / dotted path read
    from mappings or pydantic models. Values are compared as numbers when every present value
    is a number (``"1,234"`` counts), else as dates when every one is a date (``"1902"``,
    ``"6 March 1902"``), else as normalised text. ``direction="min"`` puts the smallest first,
    ``"max"`` the largest. Items without a value go last; ties keep their input order, so the
    result is deterministic.
    """
    if direction not in ("min", "max"):
        raise OperatorError(f"Sort direction {direction!r} must be 'min' or 'max'")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise OperatorError(f"Sort limit {limit!r} must be a whole number of at least 1, or None for all")
    present: list[tuple[int, Any]] = []
    missing: list[int] = []
    for index, item in enumerate(items):
        value = _read_key(item, key)
        value = unwrap_one(value, f"the sort key of item {index + 1}") if value is not _MISSING else None
        if value is None or (isinstance(value, str) and not value.strip()):
            missing.append(index)
        else:
            present.append((index, value))
    kind = value_kind([value for _, value in present])
    keyed: list[tuple[int, Any]]
    if kind == "number":
        keyed = [(index, as_number(value)) for index, value in present]
    elif kind == "date":
        keyed = [(index, cast(PartialDate, as_date(value)).sort_key()) for index, value in present]
    else:
        keyed = [(index, normalise_text(value)) for index, value in present]
    keyed.sort(key=lambda pair: pair[1], reverse=direction == "max")  # stable: ties keep input order
    order = [index for index, _ in keyed] + missing
    if limit is not None:
        order = order[:limit]
    return [items[index] for index in order]


def run(ctx: ActionContext, op: SortOp) -> None:
    """Sort the items bound to ``op.source`` and bind the first ``limit`` to ``op.output``."""
    memory = ctx.rt.memory
    source = memory.get(op.source.alias)
    if source is None or source.empty:
        raise OperatorError(f"Sort reads {op.source.alias!r}, which the earlier steps could not find")
    ctx.depend_on(source.record)
    rows: list[dict[str, Any]] = []
    order_alias = (op.orderby or "").partition(".")[0]
    order = memory.get(order_alias) if op.orderby else None
    if order is not None:
        ctx.depend_on(order.record)
    for item in source.items:
        if op.orderby is None:
            key: Any = item.value
        elif order is not None:
            matches = [o.value for o in order.items if o.key is not None and o.key == item.entity_id]
            if not matches and len(source.items) == 1 and len(order.items) == 1:
                matches = [order.items[0].value]
            key = matches[0] if matches else None
        else:
            key = None
        rows.append({"item": item, "key": key})
    ordered = sort_items(rows, key="key", direction=op.direction, limit=op.limit)
    ctx.record.source = "sort"
    ctx.record.note = "; ".join(f"{row['item'].text}: {row['key']}" for row in ordered)
    ctx.bind(op.output, [row["item"] for row in ordered])


SPEC = OperatorSpec(name="Sort", node=SortOp, parse=Scanner.sort, handler=run, prompt=OPERATOR_LINES["Sort"])

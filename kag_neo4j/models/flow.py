"""Request flows written once, run by a sync or an async driver.

A flow is a generator that yields what to do next (a request to send, a pause) and receives the
outcome; it holds all the logic (retries, repairs, format fallbacks). :func:`drive` and
:func:`adrive` run it with a step function, the only part that differs between the sync and the
async world. An exception the step raises is thrown into the flow at its ``yield``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from typing import Any, TypeVar

C = TypeVar("C")  # what the flow asks for
R = TypeVar("R")  # what the step answers
T = TypeVar("T")  # what the flow returns

Flow = Generator[C, R, T]


def _resume(flow: Flow[C, R, T], reply: Any, error: Exception | None) -> tuple[bool, Any]:
    """Send the step's reply (or throw its error) into ``flow``: ``(finished, next command or result)``.
    The first call (reply None) starts the flow."""
    try:
        return False, (flow.throw(error) if error is not None else flow.send(reply))
    except StopIteration as done:
        return True, done.value


def drive(flow: Flow[C, R, T], step: Callable[[C], R]) -> T:
    """Run ``flow`` to its end, answering each command with ``step(command)``."""
    finished, value = _resume(flow, None, None)
    while not finished:
        reply, error = None, None
        try:
            reply = step(value)
        except Exception as exc:  # the flow decides what an error means
            error = exc
        finished, value = _resume(flow, reply, error)
    return value  # type: ignore[no-any-return]


async def adrive(flow: Flow[C, R, T], step: Callable[[C], Awaitable[R]]) -> T:
    """Run ``flow`` to its end, answering each command with ``await step(command)``."""
    finished, value = _resume(flow, None, None)
    while not finished:
        reply, error = None, None
        try:
            reply = await step(value)
        except Exception as exc:  # the flow decides what an error means
            error = exc
        finished, value = _resume(flow, reply, error)
    return value  # type: ignore[no-any-return]

"""Debouncing a stream of values: one value (or the values joined) per interval, as pydantic-ai groups stream
chunks with `debounce_by`."""

from __future__ import annotations as _annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import TypeVar

import anyio

__all__ = ('debounce',)

_T = TypeVar('_T')


async def debounce(
    source: AsyncIterator[_T], debounce_by: float, join: Callable[[list[_T]], _T] | None
) -> AsyncGenerator[_T]:
    """Group the values into intervals of `debounce_by` seconds from the first value of each group, and yield
    one value per group: the latest (or, with `join`, the group's values joined). As pydantic-ai groups them,
    except that a group whose interval has passed is yielded when the next value arrives (or at the end)
    rather than by a timer: the reader drives the run, so nothing runs between values. Uses anyio's clock."""
    pending: list[_T] = []
    started = 0.0
    async for value in source:
        now = anyio.current_time()
        if pending and now - started >= debounce_by:
            yield join(pending) if join is not None else pending[-1]
            pending = []
        if not pending:
            started = now
        pending.append(value)
    if pending:
        yield join(pending) if join is not None else pending[-1]

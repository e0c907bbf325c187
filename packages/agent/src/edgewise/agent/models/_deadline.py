"""`RequestDeadline`: the `request_timeout` and `first_event_timeout` deadlines of one request to one model.

Both are fixed on anyio's clock when the request starts. Each wait of the request runs in a cancel scope with the
earlier deadline, and never across a `yield`, so a stream can be read from any task and the time a reader spends
between events counts too. When a deadline passes, the wait is cancelled and `ModelRequestTimeout` says which
setting ran out. (`_request_timeout` starts them around a model's requests; a stream pulls its events under them.)
"""

from __future__ import annotations as _annotations

import math
from collections.abc import AsyncIterator, Generator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import anyio

from ..exceptions import ModelRequestTimeout

__all__ = ('RequestDeadline',)

_T = TypeVar('_T')


@dataclass(frozen=True)
class RequestDeadline:
    """The deadlines of one request to one model (at least one of the two timeouts is set)."""

    model_name: str
    """The model, named in the error."""
    timeout: float | None
    """The `request_timeout` in seconds, if set."""
    deadline: float = math.inf
    """When the request times out, on anyio's clock."""
    first_event_timeout: float | None = None
    """The `first_event_timeout` of a streamed request in seconds, if set."""
    first_event_deadline: float = math.inf
    """When a stream without an event yet times out, on anyio's clock (never, once an event came)."""

    @classmethod
    def start(cls, model_name: str, settings: Mapping[str, Any] | None, *, stream: bool) -> RequestDeadline | None:
        """The deadlines of a request starting now; `None` when neither setting applies."""
        if not settings:  # (most requests)
            return None
        timeout = settings.get('request_timeout')
        first_event_timeout = settings.get('first_event_timeout') if stream else None
        if timeout is None and first_event_timeout is None:
            return None
        now = anyio.current_time()
        return cls(
            model_name=model_name,
            timeout=timeout,
            deadline=math.inf if timeout is None else now + timeout,
            first_event_timeout=first_event_timeout,
            first_event_deadline=math.inf if first_event_timeout is None else now + first_event_timeout,
        )

    @contextmanager
    def enforce(self) -> Generator[None, None, None]:
        """Cancel the enclosed wait at the earlier deadline, and raise `ModelRequestTimeout` in its place."""
        with anyio.CancelScope(deadline=min(self.deadline, self.first_event_deadline)) as scope:
            yield
        if scope.cancelled_caught:
            if self.first_event_deadline < self.deadline:
                assert self.first_event_timeout is not None
                raise ModelRequestTimeout(self.model_name, self.first_event_timeout, setting='first_event_timeout')
            assert self.timeout is not None
            raise ModelRequestTimeout(self.model_name, self.timeout)

    def after_first_event(self) -> RequestDeadline:
        """What is left once the stream produced an event: the `request_timeout` deadline only."""
        return self if self.first_event_deadline == math.inf else replace(self, first_event_deadline=math.inf)

    def iterate(self, iterator: AsyncIterator[_T]) -> AsyncIterator[_T]:
        """The items of `iterator`, each pulled under the deadlines (the first-event one until the first item)."""
        return _UnderDeadline(iterator, self)


class _UnderDeadline(AsyncIterator[_T]):
    """Pulls each item of an iterator under a deadline (a plain iterator: nothing for the event loop to finalize)."""

    def __init__(self, iterator: AsyncIterator[_T], deadline: RequestDeadline) -> None:
        self._iterator = iterator
        self._deadline = deadline

    async def __anext__(self) -> _T:
        with self._deadline.enforce():
            item = await self._iterator.__anext__()
        self._deadline = self._deadline.after_first_event()
        return item

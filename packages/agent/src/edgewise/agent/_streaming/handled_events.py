"""The events of a streamed node, passed on to a reader and kept for the run's event stream handler."""

from __future__ import annotations as _annotations

from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Callable
from contextlib import aclosing
from typing import Any, TypeVar

from ..messages import AgentStreamEvent
from ..tools import RunContext
from .node_loop import EventStreamHandler, NodeEvents

__all__ = ('HandledEvents',)

_T = TypeVar('_T')


class HandledEvents(AsyncIterator[AgentStreamEvent]):
    """A node's events, passed on as they come and kept; once the node's stream is done, the run's event
    stream handler gets them all (before the run goes on to its next node)."""

    def __init__(
        self,
        events: NodeEvents,
        handler: EventStreamHandler | None,
        ctx: RunContext[Any],
        wrap: Callable[[AsyncIterable[AgentStreamEvent]], AsyncGenerator[AgentStreamEvent]] | None = None,
    ) -> None:
        self._events = aiter(events)
        self._handler = handler
        self._wrap = wrap
        self._ctx = ctx
        self._seen: list[AgentStreamEvent] = []
        self._handed_over = False

    def __aiter__(self) -> HandledEvents:
        return self

    async def __anext__(self) -> AgentStreamEvent:
        try:
            event: AgentStreamEvent = await anext(self._events)
        except StopAsyncIteration:
            await self.hand_over()
            raise
        if not self._handed_over:
            self._seen.append(event)
        return event

    async def hand_over(self) -> None:
        """Give the handler the events so far (once): the node's stream is done, or its final result began."""
        if not self._handed_over:
            self._handed_over = True
            events: AsyncIterator[AgentStreamEvent] = _Replay(self._seen)
            if self._wrap is None:
                assert self._handler is not None
                await self._handler(self._ctx, events)
                return
            async with aclosing(self._wrap(events)) as wrapped:  # the handler gets what the hooks make of them
                if self._handler is not None:
                    await self._handler(self._ctx, wrapped)
                async for _ in wrapped:
                    pass


class _Replay(AsyncIterator[_T]):
    """Kept events, as the async iterable an event stream handler reads."""

    def __init__(self, items: list[_T]) -> None:
        self._items = iter(items)

    def __aiter__(self) -> _Replay[_T]:
        return self

    async def __anext__(self) -> _T:
        try:
            return next(self._items)
        except StopIteration:
            raise StopAsyncIteration from None

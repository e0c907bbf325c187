"""`ProcessEventStream`: the events of each streamed node of a run handed to a function (as pydantic-ai 1.107)."""

from __future__ import annotations as _annotations

from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, TypeAlias

import anyio

from .._run.options import EventStreamProcessor
from ..messages import AgentStreamEvent
from ..tools import AgentDepsT, RunContext
from .abstract import AbstractCapability

__all__ = ('ProcessEventStream',)

_Handler: TypeAlias = Callable[[RunContext[Any], AsyncIterable[AgentStreamEvent]], Awaitable[None]]


@dataclass
class ProcessEventStream(AbstractCapability[AgentDepsT]):
    """Hands the events of each model request and tool call node of a run to `handler`; with it, `agent.run`
    streams its nodes even without an `event_stream_handler`.

    `handler` is either an event stream handler (`async def handler(ctx, events) -> None`), which sees every event
    while the run and the other capabilities see them unchanged (one that stops reading early misses the rest; one
    that raises fails the run; a slow one slows the stream), or an async generator function
    (`async def handler(ctx, events)` that yields events), whose events replace the node's: it may change, drop or
    add events.
    """

    handler: _Handler | EventStreamProcessor[Any]
    """The event stream handler, or the async generator function making the events the run goes on with."""

    @classmethod
    def get_serialization_name(cls) -> str | None:
        """`None`: takes a function, so agent specs cannot name it."""
        return None

    async def wrap_run_event_stream(
        self, ctx: RunContext[AgentDepsT], *, stream: AsyncIterable[AgentStreamEvent]
    ) -> AsyncIterable[AgentStreamEvent]:
        """The node's events through `handler` (see the class)."""
        called = self.handler(ctx, stream)
        if isinstance(called, AsyncIterator):
            async for event in called:
                yield event
            return
        # A handler: its coroutine has not started; it reads a copy of the stream in a task of its own instead.
        coroutine: Coroutine[Any, Any, None] = called  # type: ignore[assignment]
        coroutine.close()
        handler: Any = self.handler
        send, receive = anyio.create_memory_object_stream[AgentStreamEvent]()

        failed: list[Exception] = []

        async def feed() -> None:
            try:
                async with receive:
                    await handler(ctx, receive)
            except Exception as exc:  # the run fails with the handler's own error (not an exception group)
                failed.append(exc)
                tg.cancel_scope.cancel()

        async with anyio.create_task_group() as tg:
            tg.start_soon(feed)
            async with send:
                reading = True
                async for event in stream:
                    if reading:
                        try:
                            await send.send(event)
                        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                            reading = False  # the handler stopped reading: the others still get the events
                    yield event
        if failed:
            raise failed[0]

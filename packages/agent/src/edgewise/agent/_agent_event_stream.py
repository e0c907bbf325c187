"""`AgentEventStream`: every event of an agent run, then the run's result (`Agent.run_stream_events`)."""

from __future__ import annotations as _annotations

from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import AbstractAsyncContextManager, aclosing
from types import TracebackType
from typing import Any, Generic

from typing_extensions import TypeVar

from ._agent_run import AgentRun
from ._node_stream_loop import every_event, stream_nodes
from ._run_result import AgentRunResultEvent
from .messages import AgentStreamEvent

__all__ = ('AgentEventStream',)

OutputDataT = TypeVar('OutputDataT', default=str)


class AgentEventStream(Generic[OutputDataT]):
    """The events of a run: model events, tool call events, and last an `AgentRunResultEvent`.

    Use it as `async with ... as events: async for event in events:` (leaving the block stops the run), or
    iterate it directly.
    """

    def __init__(self, run_context: AbstractAsyncContextManager[AgentRun[Any, OutputDataT]]) -> None:
        self._run_context = run_context
        self._events: AsyncGenerator[AgentStreamEvent | AgentRunResultEvent[OutputDataT]] | None = None

    async def __aenter__(self) -> AgentEventStream[OutputDataT]:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop the run if it is still going."""
        if self._events is not None:
            await self._events.aclose()

    def __aiter__(self) -> AsyncIterator[AgentStreamEvent | AgentRunResultEvent[OutputDataT]]:
        if self._events is None:
            self._events = self._iterate()
        return self._events

    async def _iterate(self) -> AsyncGenerator[AgentStreamEvent | AgentRunResultEvent[OutputDataT]]:
        async with self._run_context as run, aclosing(stream_nodes(run, every_event)) as events:
            async for event in events:
                yield event
            result = run.result
        # Handed out once the run is closed (its span ended), as when `run` returns.
        assert result is not None
        yield AgentRunResultEvent(result)

"""`AgentEventStream`: every event of an agent run, then the run's result (`Agent.run_stream_events`)."""

from __future__ import annotations as _annotations

import warnings
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import AbstractAsyncContextManager, aclosing
from types import TracebackType
from typing import Any, Generic

from typing_extensions import TypeVar

from .._loop.agent_run import AgentRun
from .._run.result import AgentRunResultEvent
from .._warnings import PydanticAIDeprecationWarning
from ..messages import AgentStreamEvent
from .node_loop import every_event, stream_nodes

__all__ = ('AgentEventStream', 'run_events')

OutputDataT = TypeVar('OutputDataT', default=str)

_STANDALONE_DEPRECATION = (
    'Iterating `AgentEventStream` directly with `async for event in stream:` is deprecated. '
    'Use `async with agent.run_stream_events(...) as stream:` and `async for event in stream:` instead '
    'to ensure proper cleanup.'
)


class AgentEventStream(Generic[OutputDataT]):
    """The events of a run: model events, tool call events, and last an `AgentRunResultEvent`.

    Use it as `async with ... as events: async for event in events:` (leaving the block stops the run and
    waits for its clean-up). Iterating it without `async with` still works but is deprecated, as in
    pydantic-ai 1.107: the run is then stopped only when the iterator is finished or garbage collected.

    Args:
        generator: The events; `aclose()` stops whatever produces them.
    """

    def __init__(self, generator: AsyncGenerator[AgentStreamEvent | AgentRunResultEvent[Any]]) -> None:
        self._generator = generator
        self._managed = False
        self._closed = False

    async def __aenter__(self) -> AgentEventStream[OutputDataT]:
        if self._managed:
            raise RuntimeError(
                '`run_stream_events()` context manager cannot be entered more than once: '
                'call `run_stream_events()` again for another run.'
            )
        self._managed = True
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool:
        await self.aclose()
        return False

    async def aclose(self) -> None:
        """Stop the run if it is still going (a second call does nothing)."""
        if not self._closed:
            self._closed = True
            await self._generator.aclose()

    def __aiter__(self) -> AsyncIterator[AgentStreamEvent | AgentRunResultEvent[OutputDataT]]:
        if self._managed:
            return self
        warnings.warn(_STANDALONE_DEPRECATION, PydanticAIDeprecationWarning, stacklevel=2)
        return self._standalone()

    async def _standalone(self) -> AsyncGenerator[AgentStreamEvent | AgentRunResultEvent[OutputDataT]]:
        # A generator of its own, so that a loop left early closes the run when the generator is finalized.
        try:
            async for event in self._generator:
                yield event
        finally:
            await self.aclose()

    async def __anext__(self) -> AgentStreamEvent | AgentRunResultEvent[OutputDataT]:
        if self._closed:
            raise StopAsyncIteration
        try:
            return await self._generator.__anext__()
        except StopAsyncIteration:
            self._closed = True
            raise


async def run_events(
    run_context: AbstractAsyncContextManager[AgentRun[Any, Any]],
) -> AsyncGenerator[AgentStreamEvent | AgentRunResultEvent[Any]]:
    """Enter the run, yield every event of its streamed nodes, then an `AgentRunResultEvent` with its result."""
    async with run_context as run, aclosing(stream_nodes(run, every_event)) as events:
        async for event in events:
            yield event
        result = run.result
    # Handed out once the run is closed (its span ended), as when `run` returns.
    assert result is not None
    yield AgentRunResultEvent(result)

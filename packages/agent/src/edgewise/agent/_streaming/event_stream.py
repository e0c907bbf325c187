"""`AgentRunEvents` (also named `AgentEventStream`): every event of an agent run, then the run's result
(`Agent.run_stream_events`), and a handle on the run (cancel it, read its messages and usage).

The handle's first `__anext__` starts the run: the run's setup takes the handle's cancellation token (so that
`cancel()` reaches the run from its setup on, a blocked `before_run` hook included), and `run_events` tells the
handle of the run once entered (so that it reads the run's messages and usage). Both go through context
variables set around that first step and taken by the run starting, never by a run nested in it.
"""

from __future__ import annotations as _annotations

import warnings
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import AbstractAsyncContextManager, aclosing
from contextvars import ContextVar
from types import TracebackType
from typing import Any, Generic

from typing_extensions import TypeVar

from .._loop.agent_run import AgentRun
from .._message_flow.cancellation import CancellationToken, starting_run_token
from .._run.result import AgentRunResult, AgentRunResultEvent
from .._warnings import PydanticAIDeprecationWarning
from ..exceptions import RunCancelled, UserError
from ..messages import AgentStreamEvent, ModelMessage
from ..usage import RunUsage
from .node_loop import every_event, stream_nodes

__all__ = ('AgentEventStream', 'AgentRunEvents', 'run_events')

OutputDataT = TypeVar('OutputDataT', default=str)

_STANDALONE_DEPRECATION = (
    'Iterating `AgentEventStream` directly with `async for event in stream:` is deprecated. '
    'Use `async with agent.run_stream_events(...) as stream:` and `async for event in stream:` instead '
    'to ensure proper cleanup.'
)


_starting: ContextVar[AgentRunEvents[Any] | None] = ContextVar('edgewise_starting_run_events', default=None)


class AgentRunEvents(Generic[OutputDataT]):
    """The events of a run: model events, tool call events, and last an `AgentRunResultEvent`; and a handle on
    the run.

    Use it as `async with agent.run_stream_events(...) as events: async for event in events:` (leaving the block
    stops the run and waits for its clean-up). The run starts with the first event asked for: entering and
    leaving the block without iterating never calls the model. Once started, `all_messages()`, `new_messages()`
    and `usage` read the run as it goes (and after it ended); `cancel()` stops it; `result` is the run's result
    once the last event handed it out. Iterating without `async with` still works but is deprecated, as in
    pydantic-ai 1.107: the run is then stopped only when the iterator is finished or garbage collected.

    Args:
        generator: The events; `aclose()` stops whatever produces them.
    """

    def __init__(self, generator: AsyncGenerator[AgentStreamEvent | AgentRunResultEvent[Any]]) -> None:
        self._generator = generator
        self._managed = False
        self._closed = False
        self._run: AgentRun[Any, OutputDataT] | None = None
        self._started = False
        self._token = CancellationToken()
        self._result: AgentRunResult[OutputDataT] | None = None

    def cancel(self) -> None:
        """Cancel the whole run, from any task or thread: iterating on raises `RunCancelled` (leaving the block
        instead ends the run quietly). Before the first event was asked for, the run never starts (iterating
        raises `RunCancelled`, with no messages); after the run's result was handed out, it does nothing; a
        second call does nothing."""
        if self._result is None:
            self._token.cancel()

    def all_messages(self) -> list[ModelMessage]:
        """The messages of the run so far, the history it was given included.

        Raises:
            UserError: the run has not started (no event was asked for yet).
        """
        return self._started_run().all_messages()

    def new_messages(self) -> list[ModelMessage]:
        """The messages this run made so far.

        Raises:
            UserError: the run has not started (no event was asked for yet).
        """
        return self._started_run().new_messages()

    @property
    def usage(self) -> RunUsage:
        """The run's usage so far.

        Raises:
            UserError: the run has not started (no event was asked for yet).
        """
        return self._started_run().usage

    @property
    def result(self) -> AgentRunResult[OutputDataT] | None:
        """The run's result, once the last event (`AgentRunResultEvent`) handed it out; `None` until then and
        for a run that failed, was cancelled or was left early."""
        return self._result

    def _started_run(self) -> AgentRun[Any, OutputDataT]:
        if self._run is None:
            raise UserError('The run has not started; iterate the events first.')
        return self._run

    def _bind(self, run: AgentRun[Any, OutputDataT]) -> None:
        self._run = run

    async def __aenter__(self) -> AgentRunEvents[OutputDataT]:
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
        if not self._started:
            if self._token.cancelled:
                raise RunCancelled('The agent run was cancelled.')
            self._started = True
            reset = _starting.set(self)
            try:
                with starting_run_token(self._token):
                    return await self._next()
            finally:
                _starting.reset(reset)
        return await self._next()

    async def _next(self) -> AgentStreamEvent | AgentRunResultEvent[OutputDataT]:
        try:
            event = await self._generator.__anext__()
        except StopAsyncIteration:
            self._closed = True
            raise
        if isinstance(event, AgentRunResultEvent):
            self._result = event.result
        return event


AgentEventStream = AgentRunEvents
"""The name Edgewise gave `AgentRunEvents` first (kept: the same class)."""


async def run_events(
    run_context: AbstractAsyncContextManager[AgentRun[Any, Any]],
) -> AsyncGenerator[AgentStreamEvent | AgentRunResultEvent[Any]]:
    """Enter the run, yield every event of its streamed nodes, then an `AgentRunResultEvent` with its result;
    the `AgentRunEvents` starting it (see the module docstring) is told of the run."""
    async with run_context as run, aclosing(stream_nodes(run, every_event)) as events:
        handle = _starting.get()
        if handle is not None:
            _starting.set(None)  # this run's alone: not a run nested in it
            handle._bind(run)
        async for event in events:
            yield event
        result = run.result
    # Handed out once the run is closed (its span ended), as when `run` returns.
    assert result is not None
    yield AgentRunResultEvent(result)

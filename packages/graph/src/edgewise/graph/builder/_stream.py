"""`Graph.stream` of a builder graph: the run in a task of its own, its events handed over through a bounded
queue, as the classic `Graph.stream` does (the same `EventSink` and stream underneath)."""

from __future__ import annotations as _annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Generic, cast

from typing_extensions import TypeVar

from .._runs import EventSink
from .._stream import GraphEventStream, serve_events
from ..events import RunEndEvent
from .basenode import End
from .events import BuilderEvent

__all__ = ('BuilderEventStream', 'stream_builder_events')

StateT = TypeVar('StateT')
OutputT = TypeVar('OutputT')


class BuilderEventStream(GraphEventStream[StateT, OutputT], Generic[StateT, OutputT]):
    """The events of a streamed builder run, for `async for event in stream` (see `Graph.stream`).

    Ends after the `RunEndEvent`; if a task raised, raises that error after handing out its `TaskFailedEvent`.
    `end` is the `RunEndEvent` once the stream has reached it.
    """

    def __aiter__(self) -> AsyncIterator[BuilderEvent]:  # type: ignore[override]
        return cast(AsyncIterator[BuilderEvent], self._events)

    def __anext__(self) -> Awaitable[BuilderEvent]:  # type: ignore[override]
        return cast(Awaitable[BuilderEvent], self._events.__anext__())


OpenRun = Callable[[EventSink], AbstractAsyncContextManager[Any]]
"""Opens a run (new or resumed) whose engine sends its events to the sink given."""


def stream_builder_events(
    open_run: OpenRun, *, buffer_size: int, state_snapshots: bool
) -> AbstractAsyncContextManager[BuilderEventStream[Any, Any]]:
    """Run what `open_run` opens in a task and yield its events; leaving the block cancels the run if it is still
    going (a durable run's step in flight goes back to `'created'`, so that the run can be resumed)."""

    async def produce(sink: EventSink) -> None:
        async with open_run(sink) as run:
            async for _ in run:
                if len(sink.pending) > sink.flush_above:
                    await sink.flush()
            output = run.progress.output
            assert output is not None  # the iteration ended: the run has its output
            await sink.put(RunEndEvent(output.value, run.state, End(output.value)))

    return serve_events(produce, BuilderEventStream, buffer_size=buffer_size, state_snapshots=state_snapshots)

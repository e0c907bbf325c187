"""`Graph.stream` of a builder graph: the run in a task of its own, its events handed over through a bounded
queue, as the classic `Graph.stream` does (the same `EventSink` and stream underneath)."""

from __future__ import annotations as _annotations

from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Generic, cast

import anyio
from typing_extensions import TypeVar

from .._runs import EventSink
from .._stream import GraphEventStream
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


@asynccontextmanager
async def stream_builder_events(
    open_run: OpenRun, *, buffer_size: int, state_snapshots: bool
) -> AsyncGenerator[BuilderEventStream[Any, Any]]:
    """Run what `open_run` opens in a task and yield its events; leaving the block cancels the run if it is still
    going (a durable run's step in flight goes back to `'created'`, so that the run can be resumed)."""
    if buffer_size < 0:
        raise ValueError(f'buffer_size must be a non-negative integer, got {buffer_size!r}')
    sink = EventSink(buffer_size, state_snapshots=state_snapshots)
    failure: list[BaseException] = []

    async def produce() -> None:
        try:
            async with open_run(sink) as run:
                async for _ in run:
                    if len(sink.pending) > sink.flush_above:
                        await sink.flush()
                output = run.progress.output
                assert output is not None  # the iteration ended: the run has its output
                await sink.put(RunEndEvent(output.value, run.state, End(output.value)))
        except Exception as e:
            failure.append(e)
        finally:
            sink.close()

    error: Exception | None = None
    async with anyio.create_task_group() as tg:
        tg.start_soon(produce)
        stream: BuilderEventStream[Any, Any] = BuilderEventStream(sink, failure)
        try:
            yield stream
        except Exception as e:
            error = e  # raised as it is below, rather than in the task group's exception group
        finally:
            tg.cancel_scope.cancel()
            with anyio.CancelScope(shield=True):
                await stream._events.aclose()
    if error is not None:
        raise error

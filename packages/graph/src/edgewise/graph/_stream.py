"""`Graph.stream`: a run in a task of its own, handing its events to the caller through a bounded queue."""

from __future__ import annotations as _annotations

from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any, Generic

import anyio
from typing_extensions import TypeVar

from ._runs import EventSink, drive
from .nodes import BaseNode, RunEndT, StateT
from .persistence import BaseStatePersistence

if TYPE_CHECKING:
    from .events import GraphEvent, RunEndEvent

__all__ = ('GraphEventStream', 'serve_events', 'stream_events')


class GraphEventStream(Generic[StateT, RunEndT]):
    """The events of a streamed run, for `async for event in stream` (see `Graph.stream`).

    Ends after the `RunEndEvent`; if a node raised, raises that error after handing out the `NodeFailedEvent`.
    """

    def __init__(self, sink: EventSink, failure: list[BaseException]) -> None:
        self._sink = sink
        self._failure = failure
        # One async generator behind both `async for` and `__anext__`: its `__anext__` is a C call, where a
        # coroutine `__anext__` would cost a coroutine object per event.
        self._events = self._iterate()
        self.end: RunEndEvent[StateT, RunEndT] | None = None
        """The run's `RunEndEvent`, once the stream has reached it."""

    def __aiter__(self) -> AsyncIterator[GraphEvent]:
        return self._events

    def __anext__(self) -> Awaitable[GraphEvent]:
        return self._events.__anext__()

    async def _iterate(self) -> AsyncGenerator[GraphEvent]:
        from .events import RunEndEvent  # (loaded by the first stream, not with the graph)

        sink = self._sink
        while True:
            batch = sink.take_nowait()
            if batch is None:
                batch = await sink.take()
                if batch is None:
                    if self._failure:
                        raise self._failure[0]
                    return
            last = batch[-1]
            if type(last) is RunEndEvent:  # the run's last event comes last in its batch
                self.end = last
            for event in batch:
                yield event


_StreamT = TypeVar('_StreamT', bound=GraphEventStream[Any, Any])


@asynccontextmanager
async def serve_events(
    produce: Callable[[EventSink], Awaitable[None]],
    stream_type: type[_StreamT],
    *,
    buffer_size: int,
    state_snapshots: bool,
) -> AsyncIterator[_StreamT]:
    """Run `produce` (a run sending its events to the sink it is given) in a task and yield the stream of its
    events; leaving the block cancels the run if it is still going. Classic and builder runs stream through it."""
    if buffer_size < 0:
        raise ValueError(f'buffer_size must be a non-negative integer, got {buffer_size!r}')
    sink = EventSink(buffer_size, state_snapshots=state_snapshots)
    failure: list[BaseException] = []

    async def run() -> None:
        try:
            await produce(sink)
        except Exception as e:
            failure.append(e)
        finally:
            sink.close()

    error: Exception | None = None
    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        stream = stream_type(sink, failure)
        try:
            yield stream
        except Exception as e:
            # Raised by the consumer's block, or by the stream (a node's error): raised as it is below,
            # rather than in the task group's exception group.
            error = e
        finally:
            # The consumer has left: a run still going is cancelled (its node goes back to 'created'), and the
            # event iterator it may have left at an event (`break`) is closed now rather than by the garbage
            # collector (which trio reports as a ResourceWarning).
            tg.cancel_scope.cancel()
            with anyio.CancelScope(shield=True):
                await stream._events.aclose()
    if error is not None:
        raise error


def stream_events(
    graph: Any,
    start_node: BaseNode[Any, Any, Any] | None,
    *,
    state: Any,
    deps: Any,
    persistence: BaseStatePersistence[Any, Any] | None,
    max_steps: int | None,
    buffer_size: int,
    state_snapshots: bool,
) -> AbstractAsyncContextManager[GraphEventStream[Any, Any]]:
    """Run `graph` in a task (from `start_node`, or resumed from `persistence` when it is `None`) and yield its
    events; leaving the block cancels the run if it is still going."""

    async def produce(sink: EventSink) -> None:
        from .events import RunEndEvent

        if start_node is None:
            assert persistence is not None
            runs = graph.iter_from_persistence(persistence, deps=deps, infer_name=False, max_steps=max_steps)
        else:
            runs = graph.iter(
                start_node, state=state, deps=deps, persistence=persistence, infer_name=False, max_steps=max_steps
            )
        async with runs as run:
            run._link.sink = sink
            end = await drive(run, sink)
            await sink.put(RunEndEvent(end.data, run.state, end))

    return serve_events(produce, GraphEventStream, buffer_size=buffer_size, state_snapshots=state_snapshots)

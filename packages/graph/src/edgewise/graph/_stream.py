"""`Graph.stream`: a run in a task of its own, handing its events to the caller through a bounded buffer."""

from __future__ import annotations as _annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Generic

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

from ._runs import EventSink, drive
from .events import GraphEvent, RunEndEvent
from .nodes import BaseNode, RunEndT, StateT
from .persistence import BaseStatePersistence

__all__ = ('GraphEventStream', 'stream_events')


class GraphEventStream(Generic[StateT, RunEndT]):
    """The events of a streamed run, for `async for event in stream` (see `Graph.stream`).

    Ends after the `RunEndEvent`; if a node raised, raises that error after handing out the `NodeFailedEvent`.
    """

    def __init__(self, receive: MemoryObjectReceiveStream[list[GraphEvent]], failure: list[BaseException]) -> None:
        self._receive = receive
        self._batch: list[GraphEvent] = []
        self._next = 0
        self._failure = failure
        self.end: RunEndEvent[StateT, RunEndT] | None = None
        """The run's `RunEndEvent`, once the stream has handed it out."""

    def __aiter__(self) -> GraphEventStream[StateT, RunEndT]:
        return self

    async def __anext__(self) -> GraphEvent:
        batch = self._batch
        index = self._next
        if index == len(batch):
            try:
                try:
                    batch = self._receive.receive_nowait()
                except anyio.WouldBlock:
                    batch = await self._receive.receive()
            except anyio.EndOfStream:
                if self._failure:
                    raise self._failure[0] from None
                raise StopAsyncIteration from None
            self._batch = batch
            index = 0
        event = batch[index]
        self._next = index + 1
        if event.kind == 'run_end':
            assert isinstance(event, RunEndEvent)
            self.end = event
        return event


@asynccontextmanager
async def stream_events(
    graph: Any,
    start_node: BaseNode[Any, Any, Any] | None,
    *,
    state: Any,
    deps: Any,
    persistence: BaseStatePersistence[Any, Any] | None,
    max_steps: int | None,
    buffer_size: int,
) -> AsyncIterator[GraphEventStream[Any, Any]]:
    """Run `graph` in a task (from `start_node`, or resumed from `persistence` when it is `None`) and yield its
    events; leaving the block cancels the run if it is still going."""
    if buffer_size < 0:
        raise ValueError(f'buffer_size must be a non-negative integer, got {buffer_size!r}')
    send, receive = anyio.create_memory_object_stream[list[GraphEvent]](buffer_size)
    failure: list[BaseException] = []

    async def produce() -> None:
        async with send:
            try:
                if start_node is None:
                    assert persistence is not None
                    runs = graph.iter_from_persistence(persistence, deps=deps, infer_name=False, max_steps=max_steps)
                else:
                    runs = graph.iter(
                        start_node,
                        state=state,
                        deps=deps,
                        persistence=persistence,
                        infer_name=False,
                        max_steps=max_steps,
                    )
                async with runs as run:
                    sink = run._link.sink = EventSink(send)
                    end = await drive(run, sink)
                    await sink.put(RunEndEvent(output=end.data, state=run.state, end=end))
            except Exception as e:
                failure.append(e)

    error: Exception | None = None
    with receive:
        async with anyio.create_task_group() as tg:
            tg.start_soon(produce)
            try:
                yield GraphEventStream(receive, failure)
            except Exception as e:
                # Raised by the consumer's block, or by the stream (a node's error): raised as it is below,
                # rather than in the task group's exception group.
                error = e
            finally:
                # The consumer has left: a run still going is cancelled (its node goes back to 'created').
                tg.cancel_scope.cancel()
    if error is not None:
        raise error

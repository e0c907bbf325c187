"""`SyncStreamBridge`: an async streaming context manager read from synchronous code.

The async side runs in an event loop the bridge owns (`anyio.run` in a thread of its own, through a blocking
portal), so the caller's thread needs no loop and the library holds no asyncio primitive.

All the async code of one bridge runs in ONE task, the *owner*: it enters the context manager, then serves the
requests of the synchronous side one at a time (a `call()`, or one step of a `stream_sync()` iteration), then exits
the context manager. That is exactly what `async with run_stream() as result: async for ...` does in async code, so
what the run opens in one step and closes in a later one (a cancel scope, an OpenTelemetry span and its context
token, an async generator started while entering) is entered and exited in the same task and the same `Context`.
The owner starts with a copy of the caller's context variables (the current span, `capture_run_messages()`, ...);
a variable the caller changes later reaches the requests made after the change, unless the run changed it itself.

`shutdown()` (from the owning wrapper's `close()`/`__exit__`) stops the request in progress, exits the context
manager in the owner task and stops the loop and its thread; a `weakref.finalize` does the same for a bridge
dropped unclosed.
"""

from __future__ import annotations as _annotations

import inspect
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Generator
from concurrent.futures import Future
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from contextvars import Context, ContextVar, copy_context
from types import TracebackType
from typing import Any, Generic, TypeVar, overload

import anyio
from anyio.abc import TaskStatus
from anyio.from_thread import BlockingPortal, start_blocking_portal
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

__all__ = ('SyncStreamBridge', 'in_event_loop')

StreamT = TypeVar('StreamT')
_T = TypeVar('_T')

ExitInfo = tuple[type[BaseException] | None, BaseException | None, TracebackType | None]
"""The arguments of `__exit__`, handed to the stream context manager's `__aexit__`."""

_Request = tuple[Callable[[], Any], 'Future[Any]', dict[ContextVar[Any], Any]]
_UNSET = object()


class _State:
    """What shutting down needs, apart from the bridge itself (so its finalizer does not keep the bridge alive)."""

    def __init__(self, portal_cm: AbstractContextManager[BlockingPortal], portal: BlockingPortal) -> None:
        self.portal_cm = portal_cm
        self.portal = portal
        self.requests: MemoryObjectSendStream[_Request] | None = None
        self.current: anyio.CancelScope | None = None
        self.exit_info: ExitInfo = (None, None, None)
        self.owner: Future[None] | None = None
        self.caller_context: Context = copy_context()


def _shutdown(state: _State) -> None:
    """Stop the request in progress, exit the context manager in the owner task, stop the loop and its thread."""
    try:
        state.portal.call(_close, state)
        assert state.owner is not None  # set before the finalizer exists
        state.owner.result()
    finally:
        state.portal_cm.__exit__(None, None, None)


async def _close(state: _State) -> None:
    if state.current is not None:
        state.current.cancel()
    assert state.requests is not None
    await state.requests.aclose()


async def _hold(
    cm: AbstractAsyncContextManager[StreamT],
    caller_context: Context,
    state: _State,
    requests: MemoryObjectReceiveStream[_Request],
    *,
    task_status: TaskStatus[StreamT],
) -> None:
    """The owner task: enter `cm`, serve the requests until the channel closes, exit `cm`."""
    for var, value in caller_context.items():
        var.set(value)
    stream = await cm.__aenter__()
    task_status.started(stream)
    try:
        async with requests:
            async for func, future, updates in requests:
                for var, value in updates.items():
                    # What the caller changed since the bridge was made, unless the run itself changed it.
                    if var.get(_UNSET) is state.caller_context.get(var, _UNSET):
                        var.set(value)
                await _serve(state, func, future)
    except BaseException as exc:  # pragma: no cover - the loop torn down under the owner (interpreter exit)
        if not await cm.__aexit__(type(exc), exc, exc.__traceback__):
            raise
    else:
        await cm.__aexit__(*state.exit_info)


async def _serve(state: _State, func: Callable[[], Any], future: Future[Any]) -> None:
    """Run one request in the owner task and hand its outcome to the waiting thread."""
    if not future.set_running_or_notify_cancel():  # pragma: no cover - the sync side never cancels its futures
        return
    with anyio.CancelScope() as scope:
        state.current = scope
        try:
            result = func()
            if inspect.isawaitable(result):
                result = await result
        except anyio.get_cancelled_exc_class():
            future.set_exception(RuntimeError('The synchronous stream was closed while this call was running.'))
            raise
        except BaseException as exc:
            future.set_exception(exc)
        else:
            future.set_result(result)
        finally:
            state.current = None
    if scope.cancelled_caught and not future.done():  # pragma: no cover - set above before the scope ends
        future.set_exception(RuntimeError('The synchronous stream was closed while this call was running.'))


def in_event_loop() -> bool:
    """Whether this thread is running an event loop (asyncio or trio)."""
    try:
        anyio.get_current_task()
    except anyio.NoEventLoopError:
        return False
    return True


def _refuse_in_event_loop(async_alternative: str) -> None:
    if in_event_loop():
        # Waiting here would block that loop until the stream's own loop answers.
        raise RuntimeError(
            'A synchronous stream cannot be used or closed while an event loop is running; '
            f'use {async_alternative} in async code.'
        )


class SyncStreamBridge(Generic[StreamT]):
    """Runs an async streaming context manager in a loop of the bridge's own and reads it from synchronous code.

    `stream` is what the context manager yields; `call()` runs one function in the owner task, `stream_sync()`
    iterates an async iterator step by step there, and `shutdown()` exits the context manager (at most once).
    Any thread may use the bridge; requests are served one at a time.
    """

    stream: StreamT
    """The object yielded by the async context manager."""

    def __init__(self, cm: AbstractAsyncContextManager[StreamT], *, async_alternative: str) -> None:
        """Enter `cm` in an owner task on the bridge's loop, with the caller's context variables.

        Args:
            cm: The async streaming context manager.
            async_alternative: The async counterpart, named in the error raised inside an event loop.

        Raises:
            RuntimeError: called from async code (a running event loop): use `async_alternative` there.
        """
        if in_event_loop():
            raise RuntimeError(
                'Cannot use a synchronous streaming method from within an async context or a running event loop; '
                f'use {async_alternative} instead.'
            )
        portal_cm = start_blocking_portal()
        state = _State(portal_cm, portal_cm.__enter__())
        send, receive = anyio.create_memory_object_stream[_Request]()
        try:
            state.owner, stream = state.portal.start_task(_hold, cm, state.caller_context, state, receive)
        except BaseException:
            send.close()
            receive.close()
            portal_cm.__exit__(None, None, None)
            raise
        state.requests = send
        self.stream = stream
        self._async_alternative = async_alternative
        self._state = state
        self._finalizer = weakref.finalize(self, _shutdown, state)

    @overload
    def call(self, func: Callable[..., Awaitable[_T]], *args: Any) -> _T: ...

    @overload
    def call(self, func: Callable[..., _T], *args: Any) -> _T: ...

    def call(self, func: Callable[..., Any], *args: Any) -> Any:
        """Run `func(*args)` in the owner task (awaiting it if it returns an awaitable) and return its result.

        A `KeyboardInterrupt` or `SystemExit` while waiting shuts the stream down before it propagates.

        Raises:
            RuntimeError: the bridge is already shut down, or this thread is running an event loop.
        """
        if not self._finalizer.alive:
            raise RuntimeError('This synchronous stream is already closed.')
        _refuse_in_event_loop(self._async_alternative)
        future: Future[Any] = Future()
        requests = self._state.requests
        assert requests is not None
        caller = self._state.caller_context
        updates = {var: value for var, value in copy_context().items() if caller.get(var, _UNSET) is not value}
        self._state.portal.call(requests.send, (lambda: func(*args), future, updates))
        try:
            return future.result()
        except (KeyboardInterrupt, SystemExit) as exc:  # pragma: no cover - needs a signal landing mid-call
            self.shutdown((type(exc), exc, exc.__traceback__))
            raise

    def stream_sync(self, make_aiter: Callable[[], AsyncIterator[_T]]) -> Generator[_T, None, None]:
        """Iterate `make_aiter()` from synchronous code, each step in the owner task.

        Leaving the loop early closes the source (an async generator) in the owner task too.

        Raises:
            RuntimeError: the bridge is already shut down, or this thread is running an event loop.
        """
        source = self.call(make_aiter)
        finished = False
        try:
            while True:
                try:
                    item: _T = self.call(source.__anext__)
                except StopAsyncIteration:
                    finished = True
                    return
                yield item
        finally:
            if not finished and isinstance(source, AsyncGenerator) and self._finalizer.alive and not in_event_loop():
                # (Dropped inside an event loop, the source is closed by the bridge's shutdown instead.)
                self.call(source.aclose)

    def shutdown(self, exit_info: ExitInfo = (None, None, None)) -> None:
        """Exit the stream context manager with `exit_info` and stop the bridge's loop; later calls do nothing.

        Raises:
            RuntimeError: this thread is running an event loop (and the bridge is not shut down yet).
        """
        if self._finalizer.alive:
            _refuse_in_event_loop(self._async_alternative)
            self._state.exit_info = exit_info
            self._finalizer()

    @property
    def closed(self) -> bool:
        """Whether `shutdown()` has run."""
        return not self._finalizer.alive

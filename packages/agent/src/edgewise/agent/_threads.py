"""Where the agent runs sync functions (sync tools, output functions, `FunctionModel` functions): in anyio's
worker threads, or in an `Executor` chosen for the current context (`Agent.using_thread_executor`, the
`UseThreadExecutor` capability), so that a long-lived server can bound the threads its agents use.

Works on asyncio and trio alike: the executor's worker wakes the waiting task through the event loop's token.
Inside `disable_threads()` they run inline, on the event loop's thread, for places where threads are not allowed.
"""

from __future__ import annotations as _annotations

import inspect
import threading
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar, copy_context
from functools import partial
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import anyio

if TYPE_CHECKING:
    from concurrent.futures import Executor, Future

# `anyio.to_thread` and `anyio.from_thread` (which loads `concurrent.futures` and `logging`) are imported where a
# function first runs in a thread: `from edgewise.agent import Agent` does not load them.

__all__ = (
    'abandoning_threads_on_cancel',
    'call_sync_or_async',
    'current_thread_executor',
    'disable_threads',
    'run_in_new_loop',
    'run_in_thread',
    'using_thread_executor',
)

_P = ParamSpec('_P')
_R = TypeVar('_R')

_thread_executor: ContextVar[Executor | None] = ContextVar('edgewise_thread_executor', default=None)
_threads_disabled: ContextVar[bool] = ContextVar('edgewise_threads_disabled', default=False)
_abandon_on_cancel: ContextVar[bool] = ContextVar('edgewise_abandon_threads_on_cancel', default=False)


def current_thread_executor() -> Executor | None:
    """The executor sync functions run in here, `None` for anyio's worker threads."""
    return _thread_executor.get()


@contextmanager
def using_thread_executor(executor: Executor) -> Iterator[None]:
    """Run the sync functions of agent runs inside the block (sync tools, output functions, `FunctionModel`
    functions) in `executor` instead of anyio's worker threads.

    A bounded `concurrent.futures.ThreadPoolExecutor` keeps a long-running server's thread count in check; the
    executor stays the caller's to shut down. The innermost block wins.
    """
    token = _thread_executor.set(executor)
    try:
        yield
    finally:
        _thread_executor.reset(token)


@contextmanager
def disable_threads() -> Iterator[None]:
    """Run the sync functions of agent runs inside the block inline, on the event loop's thread, instead of in a
    worker thread (pydantic-ai's `_utils.disable_threads`): for sandboxes without threads. A long sync function
    then blocks the event loop while it runs."""
    token = _threads_disabled.set(True)
    try:
        yield
    finally:
        _threads_disabled.reset(token)


@contextmanager
def abandoning_threads_on_cancel() -> Iterator[None]:
    """Inside the block, a caller of `run_in_thread` cancelled while its function runs in one of anyio's threads
    stops waiting at once and leaves the thread to finish on its own (its result is dropped): what a tool's
    `timeout` needs. Outside it the caller waits for the function's end."""
    token = _abandon_on_cancel.set(True)
    try:
        yield
    finally:
        _abandon_on_cancel.reset(token)


async def run_in_thread(func: Callable[_P, _R], *args: _P.args, **kwargs: _P.kwargs) -> _R:
    """`func(*args, **kwargs)` in a thread (the context's executor, or one of anyio's), with the caller's context
    variables; cancelling the caller stops waiting (a call already running in the executor runs to its end)."""
    if _threads_disabled.get():
        return func(*args, **kwargs)
    call = partial(func, *args, **kwargs)
    executor = _thread_executor.get()
    if executor is None:
        import anyio.to_thread

        return await anyio.to_thread.run_sync(call, abandon_on_cancel=_abandon_on_cancel.get())
    return await _run_in_executor(executor, call)


async def call_sync_or_async(func: Callable[..., Any], *args: Any) -> Any:
    """What `func(*args)` gives: awaited when `func` is async (or returns an awaitable), else from a thread
    (`run_in_thread`)."""
    is_async = inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(type(func).__call__)
    found = func(*args) if is_async else await run_in_thread(func, *args)
    if inspect.isawaitable(found):
        found = await found
    return found


async def _run_in_executor(executor: Executor, call: Callable[[], _R]) -> _R:
    from anyio.lowlevel import current_token  # (only a run in an executor needs it: not loaded with the agent)

    done = anyio.Event()
    token = current_token()
    loop_thread = threading.get_ident()
    waiting = True

    def wake(_: Future[_R]) -> None:
        # Runs where the call ended: mostly the executor's worker, but this very thread for an executor that
        # calls inline or a call that ended before the callback was added. A run whose event loop has ended (the
        # caller was cancelled and gone) has nobody to wake.
        if not waiting:
            return
        if threading.get_ident() == loop_thread:
            done.set()
            return
        import anyio.from_thread

        with suppress(RuntimeError):
            anyio.from_thread.run_sync(done.set, token=token)

    future = executor.submit(copy_context().run, call)
    future.add_done_callback(wake)
    try:
        await done.wait()
    finally:
        waiting = False
        future.cancel()
    return future.result()


def run_in_new_loop(func: Callable[[], Coroutine[Any, Any, _R]]) -> _R:
    """`anyio.run(func)` for the sync entry points (`run_sync`), also in a thread that copied the context of a
    running event loop (`asyncio.to_thread` does): the async library recorded in that context (sniffio's context
    variable) would make anyio believe a loop runs in this thread. A loop really running here is still refused."""
    try:
        import sniffio
    except ModuleNotFoundError:  # pragma: no cover - trio and httpx bring it
        return anyio.run(func)
    context = copy_context()
    context.run(sniffio.current_async_library_cvar.set, None)
    return context.run(anyio.run, func)

"""pydantic-ai 2.x's private path of the synchronous stream bridge, kept for ported code and tests.

The bridge itself lives in `_streaming.sync_bridge` and runs on an anyio loop of its own thread. What else is
here are the three helpers of pydantic-ai 2.x's bridge that code written for it imports: they drive the tasks and
futures of an asyncio loop the caller hands in (a caller-owned loop, as 2.x's bridge has), through the methods of
those objects alone (`_Loop`, `_Task`, `_Future`), so Edgewise itself imports no asyncio; nothing else in Edgewise
calls them.

- `_run_task_to_completion(loop, task)`: run a stopped loop until `task` is done, even when stale stop callbacks
  of earlier `run_until_complete()` calls end a drive early, then return or raise the task's outcome.
- `_request_exit(owner_task, exit_requested, pump_tasks)`: from inside the loop, cancel and await the pump tasks,
  ask the owner task to exit its context manager, and await it (its error is retrieved, not raised).
- `_finalize_loop(loop, owner_task, exit_requested, pump_tasks, owner_thread_id)`: the garbage-collection
  fallback: shut down on the spot when that is safe (the owner thread, no loop running), else queue
  `_request_exit` on the owner loop; a closed loop or a finished owner is left alone.
"""

from __future__ import annotations as _annotations

import threading
from collections.abc import Callable, Coroutine, Generator, Iterable
from contextlib import suppress
from typing import Any, Protocol, TypeVar

from ._streaming.sync_bridge import ExitInfo, SyncStreamBridge, in_event_loop

__all__ = ('SyncStreamBridge', '_finalize_loop', '_request_exit', '_run_task_to_completion')

_NO_ERROR: ExitInfo = (None, None, None)
_T = TypeVar('_T')


class _Future(Protocol[_T]):
    """What is used of an asyncio future the caller hands in."""

    def done(self) -> bool: ...
    def set_result(self, result: _T, /) -> None: ...
    def __await__(self) -> Generator[Any, None, _T]: ...


class _Task(Protocol):
    """What is used of an asyncio task the caller hands in."""

    def done(self) -> bool: ...
    def cancel(self) -> bool: ...
    def result(self) -> Any: ...
    def exception(self) -> BaseException | None: ...
    def get_loop(self) -> _Loop: ...
    def add_done_callback(self, callback: Callable[[Any], object], /) -> None: ...
    def __await__(self) -> Generator[Any, None, Any]: ...


class _Loop(Protocol):
    """What is used of the asyncio event loop the caller hands in."""

    def create_task(self, coro: Coroutine[Any, Any, Any], /) -> _Task: ...
    def create_future(self) -> _Future[None]: ...
    def run_until_complete(self, future: _Task, /) -> Any: ...
    def is_closed(self) -> bool: ...
    def is_running(self) -> bool: ...
    def call_soon_threadsafe(self, callback: Callable[[], object], /) -> Any: ...


_TaskT = TypeVar('_TaskT', bound=_Task)


class _OneTurn:
    """Awaited in a task of the loop, gives the loop one turn: the callbacks queued by then run before it resumes."""

    def __await__(self) -> Generator[None]:
        yield  # a bare yield: the task is scheduled again after the callbacks queued so far


async def _finished(task: _Task) -> None:
    """Wait for `task` to finish, without taking on its outcome (which is retrieved, so it is not reported)."""
    if not task.done():
        finished = task.get_loop().create_future()

        def wake(_: object) -> None:
            if not finished.done():  # not cancelled with the task waiting for it
                finished.set_result(None)

        task.add_done_callback(wake)
        await finished
    with suppress(BaseException):
        task.exception()


async def _until_done(task: _Task) -> None:
    """Wait for `task` without taking on its outcome, then give queued loop callbacks one turn."""
    await _finished(task)
    # A stop callback queued before this drive runs in this turn, so it cannot end a later drive.
    await _OneTurn()


def _run_task_to_completion(loop: _Loop, task: _Task) -> None:
    """Drive the (stopped) `loop` from this thread until `task` is done, then return or raise its outcome.

    A `run_until_complete()` ended early by a stale stop callback raises `RuntimeError`; the drive is then
    repeated, unless the loop is closed, runs elsewhere, or the waiter is already done (the error is real).
    Anything raised while driving (Ctrl-C included) still lets both tasks finish before it propagates.
    """
    waiter = loop.create_task(_until_done(task))
    try:
        while not waiter.done():
            try:
                loop.run_until_complete(waiter)
            except RuntimeError:
                if waiter.done() or loop.is_closed() or loop.is_running():
                    raise
    except BaseException:
        with suppress(BaseException):
            loop.run_until_complete(waiter)
        with suppress(BaseException):
            task.exception()  # retrieved, so asyncio does not report it as never retrieved
        raise
    task.result()


async def _cancel_pumps(pump_tasks: set[_TaskT]) -> None:
    pending = tuple(pump_tasks)
    for task in pending:
        task.cancel()
    for task in pending:
        await _finished(task)
    pump_tasks.clear()


async def _request_exit(owner_task: _Task, exit_requested: _Future[ExitInfo], pump_tasks: set[_TaskT]) -> None:
    """Cancel and await the pump tasks, then let the owner task exit its context manager and await it.

    The owner's error (from `__aexit__`) is retrieved and dropped: this runs as best-effort cleanup.
    Repeating it once everything has exited does nothing.
    """
    await _cancel_pumps(pump_tasks)
    if not exit_requested.done():
        exit_requested.set_result(_NO_ERROR)
    await _finished(owner_task)


def _drive_all(loop: _Loop, tasks: Iterable[_Task]) -> None:
    for task in tasks:
        with suppress(BaseException):
            _run_task_to_completion(loop, task)


def _shutdown_stopped_loop(
    loop: _Loop, owner_task: _Task, exit_requested: _Future[ExitInfo], pump_tasks: set[_TaskT]
) -> None:
    """`_request_exit`, done from outside the stopped loop by driving it from this thread."""
    pending = tuple(pump_tasks)
    for task in pending:
        task.cancel()
    _drive_all(loop, pending)
    pump_tasks.clear()
    if not exit_requested.done():
        exit_requested.set_result(_NO_ERROR)
    _run_task_to_completion(loop, owner_task)


def _finalize_loop(
    loop: _Loop,
    owner_task: _Task,
    exit_requested: _Future[ExitInfo],
    pump_tasks: set[_TaskT],
    owner_thread_id: int,
) -> None:
    """Exit a bridge's context manager that was never closed (a finalizer's job), as far as it safely can.

    On the owner thread with no loop running, the loop is driven here until the owner task is done. Otherwise
    (the owner loop runs, another loop runs in this thread, or this is another thread) the exit is queued on
    the owner loop and happens when that loop next runs. A closed loop or a finished owner task is left alone.
    Nothing is raised.
    """
    if loop.is_closed() or owner_task.done():
        return
    if threading.get_ident() == owner_thread_id and not loop.is_running() and not in_event_loop():
        with suppress(BaseException):
            _shutdown_stopped_loop(loop, owner_task, exit_requested, pump_tasks)
        return

    def queue_exit() -> None:
        loop.create_task(_request_exit(owner_task, exit_requested, pump_tasks))

    with suppress(RuntimeError):  # the loop closed in the meantime
        loop.call_soon_threadsafe(queue_exit)

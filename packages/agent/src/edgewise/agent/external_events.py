"""Waiting inside a run for something outside it (pydantic-ai 2.68's `pydantic_ai.external_events`): an approval, an
answer, a review.

`wait_for_external_event(name, ask=...)` makes a resume token and hands it to `ask`, which either answers at once
(a terminal prompt, an automatic policy) or passes the token on (a chat message, an e-mail, a database row) and
returns `None`; the wait then lasts until code elsewhere in the process calls `resolve_external_event(token,
payload)` or `fail_external_event(token, reason)`, from any thread. Such a wait lives as long as the process.

A durable engine that can record waits installs an `ExternalEventWaiter` for its runs with `external_event_scope`:
its `wait` is used instead of the in-process one.
"""

from __future__ import annotations as _annotations

import inspect
import secrets
import threading
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
from pydantic import JsonValue
from pydantic_core import PydanticSerializationError, to_jsonable_python

from .exceptions import UserError

__all__ = (
    'ExternalEventError',
    'ExternalEventWaiter',
    'external_event_scope',
    'wait_for_external_event',
    'resolve_external_event',
    'fail_external_event',
)


class ExternalEventError(Exception):
    """The external event a run waited for will not come: the wait timed out, or the token was failed (the
    message says why)."""


class ExternalEventWaiter(ABC):
    """What a durable engine implements so that a run's wait for an external event survives restarts (installed
    per run with `external_event_scope`)."""

    @abstractmethod
    async def wait(
        self,
        name: str,
        *,
        ask: Callable[[str], Awaitable[JsonValue]],
        timeout: timedelta | None,  # noqa: ASYNC109  (pydantic-ai's signature; an engine's timer, not a scope)
    ) -> JsonValue:
        """Make a resume token, call `ask` with it once, and unless `ask` answered (a value other than `None`),
        wait until the token is resolved. Every step must be recorded, so that a replay returns the recorded
        payload without a second token or a second `ask`.

        Args:
            name: The wait's name in the engine's history (stable across replays).
            ask: Called with the token; returns the answer, or `None` once it handed the token on.
            timeout: How long to wait, or `None` for as long as the engine allows.

        Returns:
            The answer of `ask`, or the payload the token was resolved with.

        Raises:
            ExternalEventError: the timeout elapsed, or the token was failed.
        """


_current_waiter: ContextVar[ExternalEventWaiter | None] = ContextVar('_current_external_event_waiter', default=None)


@contextmanager
def external_event_scope(waiter: ExternalEventWaiter) -> Iterator[ExternalEventWaiter]:
    """Have `wait_for_external_event` calls inside the block wait through `waiter` (a durable engine's)."""
    token = _current_waiter.set(waiter)
    try:
        yield waiter
    finally:
        _current_waiter.reset(token)


@dataclass(eq=False)
class _Pending:
    """One in-process wait: its outcome, set by the one resolver that takes it, and how to wake it."""

    done: anyio.Event
    wake: Callable[[], object]
    payload: JsonValue = None
    error: ExternalEventError | None = None
    resolved: bool = False


_pending: dict[str, _Pending] = {}
"""The in-process waits still going, by token (each removes its own entry as it ends)."""

_pending_lock = threading.Lock()
"""Taking a wait out of `_pending` and settling it are one step, whatever thread resolves it."""


def _waker(done: anyio.Event) -> Callable[[], object]:
    """Sets `done` from any thread: directly on the event loop's thread, else through the loop's token."""
    token = anyio.lowlevel.current_token()
    loop_thread = threading.get_ident()

    def wake() -> None:
        if threading.get_ident() == loop_thread:
            done.set()
        else:
            anyio.from_thread.run_sync(done.set, token=token)

    return wake


class _InProcessWaiter(ExternalEventWaiter):
    """The waiter outside durable runs: a random token, resolved by `resolve_external_event` in this process."""

    async def wait(
        self,
        name: str,
        *,
        ask: Callable[[str], Awaitable[JsonValue]],
        timeout: timedelta | None,  # noqa: ASYNC109  (the interface's)
    ) -> JsonValue:
        token = secrets.token_urlsafe(32)
        done = anyio.Event()
        pending = _pending[token] = _Pending(done=done, wake=_waker(done))
        try:
            # the timeout bounds `ask` too: an `ask` that asks a person directly is cancelled with the wait
            with anyio.move_on_after(None if timeout is None else timeout.total_seconds()):
                answer = await ask(token)
                if answer is not None:
                    return answer
                await done.wait()
        finally:
            with _pending_lock:
                _pending.pop(token, None)
        # Read once the entry is gone: a resolution that came as the timeout fired still counts.
        if not pending.resolved:
            raise ExternalEventError(f'No resolution arrived within {timeout}.')
        if pending.error is not None:
            raise pending.error
        return pending.payload


_IN_PROCESS = _InProcessWaiter()


async def wait_for_external_event(
    name: str,
    *,
    ask: Callable[[str], Awaitable[object | None] | object | None],
    timeout: timedelta | None = None,  # noqa: ASYNC109  (pydantic-ai's signature: it bounds `ask` and the wait)
) -> JsonValue:
    """Hand a resume token to `ask`, and return its answer, or else the payload the token is resolved with.

    Args:
        name: The wait's name (in a durable engine's history; keep it stable).
        ask: A function (sync ones run in a worker thread) called once with the token: it returns the answer, or
            `None` once it handed the token to whoever answers. Its answer is turned into JSON, as it would be on
            its way through a durable engine (a `None` payload can only come from a resolution).
        timeout: How long to wait, `None` for no limit; in process it bounds `ask` as well.

    Returns:
        The JSON payload of the answer or of the resolution.

    Raises:
        ExternalEventError: the timeout elapsed, or the token was failed.
        UserError: `timeout` is not positive, or the answer cannot be turned into JSON.
    """
    if timeout is not None and timeout <= timedelta(0):
        raise UserError(f'`timeout` must be positive, got {timeout!r}.')
    waiter = _current_waiter.get() or _IN_PROCESS

    async def ask_with_token(token: str) -> JsonValue:
        is_async = inspect.iscoroutinefunction(ask) or inspect.iscoroutinefunction(type(ask).__call__)
        answer: Any = ask(token) if is_async else await anyio.to_thread.run_sync(ask, token)
        while isinstance(answer, Awaitable):
            answer = await answer
        return None if answer is None else _to_json(answer)

    return await waiter.wait(name, ask=ask_with_token, timeout=timeout)


def resolve_external_event(token: str, payload: object) -> None:
    """End the in-process wait of `token` with `payload` (turned into JSON, as through a durable engine); from any
    thread of the process.

    Raises:
        UserError: `payload` cannot be turned into JSON, or no wait of this process has the token (wrong, from
            another process, or already ended: resolved, timed out or cancelled).
    """
    _settle(token, payload=_to_json(payload))


def fail_external_event(token: str, reason: str) -> None:
    """End the in-process wait of `token` without a payload: it raises `ExternalEventError(reason)`.

    Raises:
        UserError: no wait of this process has the token.
    """
    _settle(token, error=ExternalEventError(reason))


def _settle(token: str, *, payload: JsonValue = None, error: ExternalEventError | None = None) -> None:
    with _pending_lock:
        pending = _pending.pop(token, None)
        if pending is None:
            raise UserError(
                'No wait in this process has this token: it is wrong, from another process, or its wait already '
                'ended (resolved, timed out or cancelled).'
            )
        pending.payload, pending.error, pending.resolved = payload, error, True
    # Settled: a wait that ended meanwhile, on a loop that is gone since, needs no waking.
    with suppress(RuntimeError):
        pending.wake()


def _to_json(payload: object) -> JsonValue:
    try:
        result: JsonValue = to_jsonable_python(payload)
    except PydanticSerializationError as error:
        raise UserError(f'The payload of an external event must be JSON-serializable: {error}') from error
    return result

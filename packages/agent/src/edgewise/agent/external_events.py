"""Waits inside an agent run for an answer from outside it (as pydantic-ai 2.68's `external_events`).

A run that needs an answer (an approval, a reply, a review) makes a resume token and hands it to an `ask` function,
which answers at once (a terminal prompt, a policy) or passes the token on (a chat message, an email, a database
row) and returns `None`; the run then waits until code elsewhere in the process calls `resolve_external_event(token,
payload)` (or `fail_external_event(token, reason)`), from any thread. `RequestInput` is built on it.

The wait lives in the process. A durable engine can put its own wait in place for the runs it drives, one that
survives restarts, by implementing `ExternalEventWaiter` and installing it with `external_event_scope`; Edgewise's
own durable runs install none, so their waits happen in process too.
"""

from __future__ import annotations as _annotations

import secrets
import threading
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
from pydantic import JsonValue
from pydantic_core import PydanticSerializationError, to_jsonable_python

from ._threads import call_sync_or_async
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
    """The answer a run waited for will not come: the wait's `timeout` passed, or the token was failed with
    `fail_external_event` (the message says which)."""


class ExternalEventWaiter(ABC):
    """How a run waits for an external event: in process by default; a durable engine installs its own with
    `external_event_scope`."""

    @abstractmethod
    async def wait(
        self,
        name: str,
        *,
        ask: Callable[[str], Awaitable[JsonValue]],
        timeout: timedelta | None,  # noqa: ASYNC109
    ) -> JsonValue:
        """Make a token, give it to `ask`, and return `ask`'s answer, or, when it returned `None`, the payload the
        token is resolved with.

        Args:
            name: The wait's name (stable, for an engine's history).
            ask: Called once with the token; returns the payload, or `None` to wait.
            timeout: How long to wait, or `None` for no limit.

        Raises:
            ExternalEventError: the timeout passed, or the token was failed.
        """


_current_waiter: ContextVar[ExternalEventWaiter | None] = ContextVar('edgewise_external_event_waiter', default=None)


@contextmanager
def external_event_scope(waiter: ExternalEventWaiter) -> Iterator[ExternalEventWaiter]:
    """Have `wait_for_external_event` wait through `waiter` inside the block (typically one durable run)."""
    token = _current_waiter.set(waiter)
    try:
        yield waiter
    finally:
        _current_waiter.reset(token)


@dataclass(eq=False)
class _Pending:
    """One wait in this process: its outcome, set by the one resolver that takes it out of the registry."""

    done: anyio.Event = field(default_factory=anyio.Event)
    loop: Any = field(default_factory=anyio.lowlevel.current_token)
    """The waiting task's event loop, woken from other threads through it."""
    thread: int = field(default_factory=threading.get_ident)
    payload: JsonValue = None
    error: ExternalEventError | None = None
    resolved: bool = False

    def wake(self) -> None:
        if threading.get_ident() == self.thread:  # a resolver on the waiting loop's own thread
            self.done.set()
        else:
            anyio.from_thread.run_sync(self.done.set, token=self.loop)


_pending: dict[str, _Pending] = {}
"""The waits of this process still open, by token; each wait removes its own entry as it ends."""
_pending_lock = threading.Lock()


class _InProcessWaiter(ExternalEventWaiter):
    """Waits in this process: the token is random, `resolve_external_event` answers it."""

    async def wait(
        self,
        name: str,
        *,
        ask: Callable[[str], Awaitable[JsonValue]],
        timeout: timedelta | None,  # noqa: ASYNC109
    ) -> JsonValue:
        token = secrets.token_urlsafe(32)
        pending = _pending[token] = _Pending()
        try:
            with anyio.move_on_after(None if timeout is None else timeout.total_seconds()):  # bounds `ask` too
                answer = await ask(token)
                if answer is not None:
                    return answer
                await pending.done.wait()
        finally:
            with _pending_lock:
                _pending.pop(token, None)
        # Read once the entry is gone: an answer that came as the timeout passed still counts.
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
    timeout: timedelta | None = None,  # noqa: ASYNC109
) -> JsonValue:
    """Give a new resume token to `ask`; return its answer, or else the payload the token is resolved with.

    Args:
        name: The wait's name (for a durable engine's history; keep it stable).
        ask: A function (sync, run in a worker thread, or async) of the token: returns the answer, or `None` to
            wait for `resolve_external_event`. An answer is turned into its JSON form.
        timeout: How long to wait (bounding `ask` too), or `None` for no limit.

    Raises:
        ExternalEventError: the timeout passed, or the token was failed.
        UserError: `timeout` is not positive, or the answer has no JSON form.
    """
    check_timeout(timeout)
    waiter = _current_waiter.get() or _IN_PROCESS

    async def ask_with_token(token: str) -> JsonValue:
        answer = await call_sync_or_async(ask, token)
        return None if answer is None else _to_json(answer)

    return await waiter.wait(name, ask=ask_with_token, timeout=timeout)


def resolve_external_event(token: str, payload: object) -> None:
    """End the wait for `token` in this process with `payload` (turned into its JSON form); from any thread.

    Raises:
        UserError: `payload` has no JSON form, or no wait of this process has this token (it is wrong, or its wait
            ended: resolved, timed out or cancelled).
    """
    _settle(token, payload=_to_json(payload))


def fail_external_event(token: str, reason: str) -> None:
    """End the wait for `token` in this process without an answer: it raises `ExternalEventError(reason)`.

    Raises:
        UserError: no wait of this process has this token.
    """
    _settle(token, error=ExternalEventError(reason))


def _settle(token: str, *, payload: JsonValue = None, error: ExternalEventError | None = None) -> None:
    with _pending_lock:
        pending = _pending.pop(token, None)
        if pending is None:
            raise UserError(
                'No wait in this process has this token: it is wrong, from another process, or its wait already '
                'ended because it was resolved, timed out or was cancelled.'
            )
        pending.payload, pending.error, pending.resolved = payload, error, True
    with suppress(RuntimeError):  # the waiting loop is gone (the wait ended meanwhile): nothing to wake
        pending.wake()


def _to_json(payload: object) -> JsonValue:
    try:
        found: JsonValue = to_jsonable_python(payload)
    except PydanticSerializationError as error:
        raise UserError(f'The payload for an external event must be JSON-serializable: {error}') from error
    return found


def check_timeout(timeout: timedelta | None) -> None:
    """Refuse a `timeout` that is not positive.

    Raises:
        UserError: it is zero or negative.
    """
    if timeout is not None and timeout <= timedelta(0):
        raise UserError(f'`timeout` must be positive, got {timeout!r}.')

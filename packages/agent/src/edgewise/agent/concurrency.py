"""Concurrency limits: how many runs (of an agent) go at once, and how many may wait for a slot.

`Agent(max_concurrency=...)` takes an `int` (that many at once, any number waiting), a `ConcurrencyLimit`
(with `max_queued`: one more waiter fails with `ConcurrencyLimitExceeded`), or a limiter, which several agents
can share (a `ConcurrencyLimiter`, or your own `AbstractConcurrencyLimiter`, e.g. one backed by a database).
"""

from __future__ import annotations as _annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Iterator
from contextlib import (
    AbstractAsyncContextManager,
    AbstractContextManager,
    asynccontextmanager,
    contextmanager,
    nullcontext,
)
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Self, TypeAlias

import anyio

from . import _instrument
from .exceptions import ConcurrencyLimitExceeded

__all__ = (
    'AbstractConcurrencyLimiter',
    'ConcurrencyLimit',
    'ConcurrencyLimiter',
    'AnyConcurrencyLimit',
    'normalize_to_limiter',
    'concurrency_slot',
    'get_concurrency_context',
    'holds_slot_of',
    'marked_held',
)


def _check_limits(max_running: int, max_queued: int | None) -> None:
    if max_running < 1:
        raise ValueError(f'max_running must be at least 1, not {max_running} (use `None` for no limit)')
    if max_queued is not None and max_queued < 0:
        raise ValueError(f'max_queued must be at least 0, not {max_queued} (use `None` for no bound)')


class AbstractConcurrencyLimiter(ABC):
    """A source of slots: `acquire` waits for one (or refuses), `release` gives it back."""

    @abstractmethod
    async def acquire(self, source: str) -> None:
        """Take a slot, waiting for one if needed; `source` names who asks (e.g. `'agent:support'`)."""

    @abstractmethod
    def release(self) -> None:
        """Give a slot back."""


@dataclass
class ConcurrencyLimit:
    """At most `max_running` at once; at most `max_queued` waiting (`None`: no bound), more fail with
    `ConcurrencyLimitExceeded`."""

    max_running: int
    """How many may run at once."""
    max_queued: int | None = None
    """How many may wait for a slot; `None` for no bound."""

    def __post_init__(self) -> None:
        _check_limits(self.max_running, self.max_queued)


class ConcurrencyLimiter(AbstractConcurrencyLimiter):
    """A limiter in this process: `max_running` slots, at most `max_queued` waiters (a span while one waits)."""

    def __init__(
        self, max_running: int, *, max_queued: int | None = None, name: str | None = None, tracer: Any = None
    ) -> None:
        """Make a limiter.

        Args:
            max_running: How many slots there are (at least 1).
            max_queued: How many may wait for a slot (at least 0); `None` for no bound.
            name: Shown in errors and in the waiting span instead of the source.
            tracer: An OpenTelemetry `Tracer` for the waiting span; without one, the span goes through logfire.

        Raises:
            ValueError: `max_running` is below 1 or `max_queued` below 0.
        """
        _check_limits(max_running, max_queued)
        self._slots = anyio.Semaphore(max_running, max_value=max_running)
        self._max_running = max_running
        self._max_queued = max_queued
        self._name = name
        self._tracer = tracer
        self._waiting = 0

    @classmethod
    def from_limit(cls, limit: int | ConcurrencyLimit, *, name: str | None = None, tracer: Any = None) -> Self:
        """A limiter for `limit` (a number of slots, or a `ConcurrencyLimit`)."""
        if isinstance(limit, int):
            return cls(limit, name=name, tracer=tracer)
        return cls(limit.max_running, max_queued=limit.max_queued, name=name, tracer=tracer)

    @property
    def name(self) -> str | None:
        """The limiter's name (shown in errors and spans instead of the source)."""
        return self._name

    @property
    def waiting_count(self) -> int:
        """How many wait for a slot."""
        return self._waiting

    @property
    def running_count(self) -> int:
        """How many slots are taken."""
        return self._max_running - self._slots.value

    @property
    def available_count(self) -> int:
        """How many slots are free."""
        return self._slots.value

    @property
    def max_running(self) -> int:
        """How many slots there are."""
        return self._max_running

    async def acquire(self, source: str) -> None:
        """Take a slot at once if one is free, else wait in line.

        Raises:
            ConcurrencyLimitExceeded: `max_queued` others already wait.
        """
        try:
            self._slots.acquire_nowait()
        except anyio.WouldBlock:
            pass
        else:
            return
        label = self._name or source
        if self._max_queued is not None and self._waiting >= self._max_queued:
            raise ConcurrencyLimitExceeded(
                f'Concurrency queue depth ({self._waiting + 1}) exceeds max_queued ({self._max_queued})'
                + (f' for {label}' if label else '')
            )
        self._waiting += 1
        try:
            with self._waiting_span(label, source):
                await self._slots.acquire()
        finally:
            self._waiting -= 1

    def _waiting_span(self, label: str, source: str) -> AbstractContextManager[Any]:
        if self._tracer is None:
            return _instrument.span(
                'waiting for {limiter} concurrency', limiter=label, source=source, waiting_count=self._waiting
            )
        attributes: dict[str, str | int] = {
            'source': source,
            'waiting_count': self._waiting,
            'max_running': self._max_running,
        }
        if self._name is not None:
            attributes['limiter_name'] = self._name
        if self._max_queued is not None:
            attributes['max_queued'] = self._max_queued
        span: AbstractContextManager[Any] = self._tracer.start_as_current_span(
            f'waiting for {label} concurrency', attributes=attributes
        )
        return span

    def release(self) -> None:
        """Give a slot back (any task may give back a slot another took)."""
        self._slots.release()


AnyConcurrencyLimit: TypeAlias = 'int | ConcurrencyLimit | AbstractConcurrencyLimiter | None'
"""What `max_concurrency` takes: a number of slots, a `ConcurrencyLimit`, a limiter, or `None` for no limit."""


def normalize_to_limiter(limit: AnyConcurrencyLimit, *, name: str | None = None) -> AbstractConcurrencyLimiter | None:
    """The limiter for `limit` (`None` for no limit)."""
    if limit is None or isinstance(limit, AbstractConcurrencyLimiter):
        return limit
    return ConcurrencyLimiter.from_limit(limit, name=name)


_NO_SLOT: AbstractAsyncContextManager[None] = nullcontext()

# The limiters whose slots the current task holds for what it is doing (a run, a model request), so that what it
# does next can refuse to wait for a second slot of one of them: with every slot held that way, it would wait
# for itself.
_held: ContextVar[tuple[AbstractConcurrencyLimiter, ...]] = ContextVar('edgewise_held_limiters', default=())


def holds_slot_of(limiter: AbstractConcurrencyLimiter) -> bool:
    """Whether the current task holds a slot of `limiter` (taken with `held=True`, or inside `marked_held`)."""
    return any(held is limiter for held in _held.get())


@contextmanager
def marked_held(limiter: AbstractConcurrencyLimiter) -> Iterator[None]:
    """Inside the block, `holds_slot_of(limiter)` is true."""
    token = _held.set((*_held.get(), limiter))
    try:
        yield
    finally:
        _held.reset(token)


def concurrency_slot(
    limiter: AbstractConcurrencyLimiter | None, source: str, *, held: bool = False
) -> AbstractAsyncContextManager[None]:
    """Hold a slot of `limiter` (if any) inside the block; with `held`, marked for `holds_slot_of` there."""
    if limiter is None:
        return _NO_SLOT
    return _held_slot(limiter, source, held)


def get_concurrency_context(
    limiter: AbstractConcurrencyLimiter | None, source: str = 'unnamed'
) -> AbstractAsyncContextManager[None]:
    """An async context manager holding a slot of `limiter` inside its block (doing nothing for `None`).

    Args:
        limiter: The limiter to take a slot of, or `None` for no limit.
        source: Who asks, e.g. `'model:gpt-5'` (shown in the waiting span and in errors of unnamed limiters).
    """
    return concurrency_slot(limiter, source)


@asynccontextmanager
async def _held_slot(limiter: AbstractConcurrencyLimiter, source: str, held: bool) -> AsyncIterator[None]:
    await limiter.acquire(source)
    before = _held.get()
    if held:
        _held.set((*before, limiter))
    try:
        yield
    finally:
        limiter.release()
        if held:
            # Not a token reset: the block may be left in another context than it was entered in.
            _held.set(before)

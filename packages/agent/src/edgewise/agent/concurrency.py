"""Concurrency limits: how many runs (of an agent) go at once, and how many may wait for a slot.

`Agent(max_concurrency=...)` takes an `int` (that many at once, any number waiting), a `ConcurrencyLimit`
(with `max_queued`: one more waiter fails with `ConcurrencyLimitExceeded`), or a limiter, which several agents
can share (a `ConcurrencyLimiter`, or your own `AbstractConcurrencyLimiter`, e.g. one backed by a database).
"""

from __future__ import annotations as _annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from dataclasses import dataclass
from typing import Self, TypeAlias

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
)


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


class ConcurrencyLimiter(AbstractConcurrencyLimiter):
    """A limiter in this process: `max_running` slots, at most `max_queued` waiters (a span while one waits)."""

    def __init__(self, max_running: int, *, max_queued: int | None = None, name: str | None = None) -> None:
        if max_running < 1:
            raise ValueError(f'max_running must be at least 1, not {max_running}')
        self._slots = anyio.Semaphore(max_running)
        self._max_running = max_running
        self._max_queued = max_queued
        self._name = name
        self._waiting = 0

    @classmethod
    def from_limit(cls, limit: int | ConcurrencyLimit, *, name: str | None = None) -> Self:
        """A limiter for `limit` (a number of slots, or a `ConcurrencyLimit`)."""
        if isinstance(limit, int):
            return cls(limit, name=name)
        return cls(limit.max_running, max_queued=limit.max_queued, name=name)

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
            with _instrument.span(
                'waiting for {limiter} concurrency', limiter=label, source=source, waiting_count=self._waiting
            ):
                await self._slots.acquire()
        finally:
            self._waiting -= 1

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


def concurrency_slot(limiter: AbstractConcurrencyLimiter | None, source: str) -> AbstractAsyncContextManager[None]:
    """Hold a slot of `limiter` (if any) inside the block."""
    return _NO_SLOT if limiter is None else _held_slot(limiter, source)


@asynccontextmanager
async def _held_slot(limiter: AbstractConcurrencyLimiter, source: str) -> AsyncIterator[None]:
    await limiter.acquire(source)
    try:
        yield
    finally:
        limiter.release()

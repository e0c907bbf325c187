"""Cancelling a run from the application: `CancellationToken` (handed to `run(cancellation_token=...)`) and
`RunCancellation`, the one per run that `AgentRun.cancel()`, `RunContext.cancel()` and the token go through.

A run is driven inside an anyio cancel scope (opened by the run setup around the whole `iter` block); cancelling
the run cancels that scope. Everything the run is waiting on (the model's response, running tools, a concurrency
slot) is torn down the way any cancellation tears it down, and the setup turns the scope's own cancellation into
`RunCancelled` when the block ends. A cancellation from outside (a scope around the run, a cancelled task) is the
outside scope's, never the run's: anyio gives it to the scope that sent it, so it wins over the run's.

Both classes may be used from any thread: a call from another thread than the run's event loop is handed to that
loop (through its anyio token) and waits until the loop has taken it.
"""

from __future__ import annotations as _annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from contextvars import ContextVar, Token
from dataclasses import dataclass
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:
    from anyio.abc import AsyncBackend

__all__ = (
    'CancellationToken',
    'RunCancellation',
    'RunDeadline',
    'inherited_run_deadline',
    'starting_run_token',
    'take_starting_run_token',
)


class CancellationToken:
    """Cancels the runs it is given to (`agent.run(..., cancellation_token=token)`), from any task or thread.

    Once `cancel()` is called the token stays cancelled: a run started with it afterwards is cancelled before it
    does anything. One token may serve several runs at once; `cancel()` cancels all of them.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cancelled = False
        self._runs: set[RunCancellation] = set()

    @property
    def cancelled(self) -> bool:
        """Whether `cancel()` was called."""
        with self._lock:
            return self._cancelled

    def cancel(self) -> None:
        """Cancel every run holding the token (and every run given it later). Calling it again does nothing."""
        with self._lock:
            if self._cancelled:
                return
            self._cancelled = True
            runs = list(self._runs)
        for run in runs:
            run.cancel()

    def register(self, run: RunCancellation) -> None:
        """Follow `run` until `unregister`; a token already cancelled cancels it at once."""
        with self._lock:
            cancelled = self._cancelled
            if not cancelled:
                self._runs.add(run)
        if cancelled:
            run.cancel()

    def unregister(self, run: RunCancellation) -> None:
        """Stop following `run` (it has ended)."""
        with self._lock:
            self._runs.discard(run)

    def __repr__(self) -> str:
        return f'CancellationToken(cancelled={self.cancelled})'


_starting: ContextVar[CancellationToken | None] = ContextVar('edgewise_starting_run_token', default=None)


@contextmanager
def starting_run_token(token: CancellationToken) -> Iterator[None]:
    """Inside the block, the next run to start (and only it) also follows `token`: how a handle that starts a
    run (`AgentRunEvents`) cancels it from its very setup on, without being given to `run`."""
    reset = _starting.set(token)
    try:
        yield
    finally:
        _starting.reset(reset)


@dataclass(eq=False)
class RunDeadline:
    """The deadline of a run (wall-clock, UTC), seen by the runs started inside it while it is active."""

    at: datetime
    active: bool = True


_run_deadline: ContextVar[RunDeadline | None] = ContextVar('edgewise_run_deadline', default=None)


def inherited_run_deadline() -> datetime | None:
    """The deadline of the run this code runs inside (from a tool, say), if it has one and is still going."""
    current = _run_deadline.get()
    return current.at if current is not None and current.active else None


def take_starting_run_token() -> CancellationToken | None:
    """The token of `starting_run_token`, taken by the run starting (so that a run nested in it does not)."""
    token = _starting.get()
    if token is not None:
        _starting.set(None)
    return token


class RunCancellation:
    """The cancellation of one run: whether it was asked for, and the cancel scope it cancels.

    A request made before the run's scope is open (in a capability's `for_run`, or by a token cancelled early) is
    kept and cancels the scope as it opens; a request after the run has ended does nothing.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.cancel_requested = False
        """Whether the run was cancelled (stays `True` once it is): a plain attribute, read at every step without a
        lock (a flag that only goes from False to True), set under the lock by `cancel`."""
        self._finished = False
        self._scope: anyio.CancelScope | None = None
        self._loop_thread: int | None = None
        self._backend: type[AsyncBackend] | None = None
        self._native_token: object = None
        self._tokens: list[CancellationToken] = []

    def cancel(self) -> None:
        """Ask for the run's cancellation, from any task or thread; only the first call counts."""
        with self._lock:
            if self.cancel_requested or self._finished:
                return
            self.cancel_requested = True
            scope, thread, backend, native_token = self._scope, self._loop_thread, self._backend, self._native_token
        if scope is None:
            return  # the scope cancels itself as it opens
        if thread == threading.get_ident():
            scope.cancel()
            return
        assert backend is not None  # set with the scope
        import anyio.from_thread  # (only a cancel from another thread needs it: not loaded with the agent)
        from anyio.lowlevel import EventLoopToken

        with suppress(anyio.RunFinishedError):  # the loop may have stopped since (the run is over then)
            anyio.from_thread.run_sync(scope.cancel, token=EventLoopToken(backend, native_token))

    def scope(
        self, *tokens: CancellationToken | None, provides: datetime | None = None
    ) -> AbstractContextManager[anyio.CancelScope]:
        """The run's cancel scope (to enter in the run's event loop), following `tokens` (those not `None`) while
        it is open; once it is closed, the run is over and `cancel()` does nothing. Inside it, runs started there
        inherit the deadline `provides` (none when `None`); it stops applying when the scope closes, also where it
        closes in another context than it opened."""
        return _OpenRunScope(self, tokens, provides)

    async def checkpoint(self) -> None:
        """Inside the open scope: raise the cancellation now if a scope around this code (the run's own included)
        was cancelled."""
        assert self._backend is not None  # set as the scope opens
        await self._backend.checkpoint_if_cancelled()


def _loaded_backend() -> Callable[[], type[AsyncBackend]]:
    """The function giving the running event loop's anyio backend: anyio's own where it has one, else through
    `anyio.lowlevel.current_token()` (public, but it also makes a frozen token object, at three times the cost)."""
    try:
        from anyio._core._eventloop import get_async_backend
    except ImportError:  # pragma: no cover - anyio moved it
        from anyio.lowlevel import current_token

        return lambda: current_token().backend_class
    return get_async_backend


_current_backend: Callable[[], type[AsyncBackend]] | None = None
"""The running loop's anyio backend class (`_loaded_backend()`), once a run has imported it."""


class _OpenRunScope:
    """`RunCancellation.scope`: a class rather than a generator (every run opens one), and the event loop's anyio
    backend looked up once for both the loop token and the scope."""

    __slots__ = ('_cancellation', '_deadline', '_provides', '_reset', '_scope', '_tokens')

    def __init__(
        self, cancellation: RunCancellation, tokens: tuple[CancellationToken | None, ...], provides: datetime | None
    ) -> None:
        self._cancellation = cancellation
        self._tokens = tokens
        self._provides = provides
        self._scope: anyio.CancelScope | None = None
        self._deadline: RunDeadline | None = None
        self._reset: Token[RunDeadline | None] | None = None

    def __enter__(self) -> anyio.CancelScope:
        global _current_backend
        if _current_backend is None:  # (loaded by the first run, not with the agent; an import statement costs a run
            _current_backend = _loaded_backend()  # as much as a scope's enter and exit)
        cancellation = self._cancellation
        backend = _current_backend()
        scope = backend.create_cancel_scope()
        with cancellation._lock:
            cancellation._scope = scope
            cancellation._loop_thread = threading.get_ident()
            cancellation._backend = backend
            cancellation._native_token = backend.current_token()  # (a cancel from another thread is sent to it)
            if cancellation.cancel_requested:
                scope.cancel()
        try:
            for token in self._tokens:
                if token is not None:
                    cancellation._tokens.append(token)
                    token.register(cancellation)
            scope.__enter__()
        except BaseException:
            self._close()
            raise
        self._scope = scope
        if self._provides is not None:  # seen by the runs started inside (`inherited_run_deadline`)
            held = self._deadline = RunDeadline(self._provides)
            self._reset = _run_deadline.set(held)
        return scope

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> bool:
        assert self._scope is not None  # entered
        if (held := self._deadline) is not None:
            held.active = False
            with suppress(ValueError):  # left in another context (a stream read from another task): it is inactive
                _run_deadline.reset(self._reset)  # type: ignore[arg-type]
        try:
            return bool(self._scope.__exit__(exc_type, exc, traceback))
        finally:
            self._close()

    def _close(self) -> None:
        cancellation = self._cancellation
        with cancellation._lock:
            cancellation._finished = True
            cancellation._scope = None
        for held in cancellation._tokens:
            held.unregister(cancellation)
        cancellation._tokens.clear()

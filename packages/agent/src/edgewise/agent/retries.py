"""HTTP retries driven by tenacity: httpx transports that try a request again, and a `Retry-After` wait.

Give a provider an `httpx.AsyncClient(transport=AsyncTenacityTransport(...))` and every request the client
sends is retried as the `RetryConfig` says (which failures, how long to wait, when to give up); a
`validate_response` callable turns unwanted responses (a 429, a 503) into exceptions that the config can
retry on. `wait_retry_after` waits as long as the server's `Retry-After` header asks, within a bound.

The providers' models retry 408, 409, 429 and 5xx answers themselves (`max_retries=`, 2 by default); a
retrying client adds its attempts to those: pass `max_retries=0` to the provider to leave retrying to the
transport alone.

This module needs tenacity, the `retries` extra: `pip install 'edgewise-agent[retries]'`.
"""

from __future__ import annotations as _annotations

from collections.abc import Awaitable, Callable
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

import anyio
import httpx
from typing_extensions import TypedDict

try:
    import tenacity
except ImportError as _error:  # pragma: no cover - exercised in a subprocess by tests/agent/test_retries.py
    # A ModuleNotFoundError naming `tenacity`, so that tools (and the wheel check) see which distribution is missing.
    raise ModuleNotFoundError(
        "edgewise.agent.retries needs tenacity: install the `retries` extra, `pip install 'edgewise-agent[retries]'`.",
        name='tenacity',
    ) from _error

if TYPE_CHECKING:
    from tenacity import RetryCallState, RetryError
    from tenacity.asyncio.retry import RetryBaseT as AsyncRetryBaseT
    from tenacity.retry import RetryBaseT
    from tenacity.stop import StopBaseT
    from tenacity.wait import WaitBaseT

__all__ = ['RetryConfig', 'TenacityTransport', 'AsyncTenacityTransport', 'wait_retry_after']


class RetryConfig(TypedDict, total=False):
    """The keyword arguments of tenacity's `retry` decorator, which the transports wrap each request in.

    Every key is optional; a key left out takes tenacity's default. Note that tenacity's defaults retry every
    exception, forever, without waiting: give at least `stop` (and usually `retry` and `wait`).
    """

    sleep: Callable[[int | float], Awaitable[None] | None]
    """How to wait between attempts (tenacity's `time.sleep` for `TenacityTransport`; `anyio.sleep` for
    `AsyncTenacityTransport`, so that it waits on asyncio and trio alike, a negative wait taken as none)."""

    stop: StopBaseT
    """When to give up, e.g. `stop_after_attempt(5)` (tenacity's default, `stop_never`, never gives up)."""

    wait: WaitBaseT
    """How long to wait before the next attempt, e.g. `wait_retry_after()` (tenacity's default: no wait)."""

    retry: RetryBaseT | AsyncRetryBaseT
    """Which outcomes are retried, e.g. `retry_if_exception_type(httpx.HTTPStatusError)` (tenacity's
    default: any exception)."""

    before: Callable[[RetryCallState], Awaitable[None] | None]
    """Called before every attempt (tenacity's default does nothing)."""

    after: Callable[[RetryCallState], Awaitable[None] | None]
    """Called after every failed attempt (tenacity's default does nothing)."""

    before_sleep: Callable[[RetryCallState], Awaitable[None] | None] | None
    """Called before waiting for the next attempt, e.g. to log it (tenacity's default: `None`)."""

    reraise: bool
    """When attempts run out, raise the last attempt's own exception rather than a `RetryError`
    (tenacity's default: `False`)."""

    retry_error_cls: type[RetryError]
    """The exception raised when attempts run out and `reraise` is false (tenacity's default: `RetryError`)."""

    retry_error_callback: Callable[[RetryCallState], Any | Awaitable[Any]] | None
    """Called instead of raising when attempts run out and `reraise` is false; what it returns is returned
    (tenacity's default: `None`)."""


class TenacityTransport(httpx.BaseTransport):
    """A synchronous httpx transport that sends each request through another transport, retrying it.

    Each request is sent under tenacity's `retry(**config)`. A response goes to `validate_response` first (with
    its `request` set and its body not read yet): whatever that raises is the attempt's failure, which
    `config['retry']` may retry; the response is closed before the next attempt. Without `validate_response`,
    only exceptions of the wrapped transport (timeouts, refused or dropped connections) can cause a retry.

    Example:
        ```python
        import httpx
        from tenacity import retry_if_exception_type, stop_after_attempt

        from edgewise.agent.retries import RetryConfig, TenacityTransport, wait_retry_after

        transport = TenacityTransport(
            RetryConfig(
                retry=retry_if_exception_type(httpx.HTTPStatusError),
                wait=wait_retry_after(max_wait=60),
                stop=stop_after_attempt(4),
                reraise=True,
            ),
            validate_response=lambda response: response.raise_for_status(),
        )
        client = httpx.Client(transport=transport)
        ```
    """

    def __init__(
        self,
        config: RetryConfig,
        wrapped: httpx.BaseTransport | None = None,
        validate_response: Callable[[httpx.Response], Any] | None = None,
    ) -> None:
        """Retry as `config` says, sending through `wrapped` (a new `httpx.HTTPTransport()` when `None`)."""
        self.config = config
        """The arguments of tenacity's `retry` decorator."""
        self.wrapped = wrapped or httpx.HTTPTransport()
        """The transport each attempt goes through."""
        self.validate_response = validate_response
        """Called with each response; an exception it raises fails the attempt."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Send the request, again as the config allows, and return the first response that passed validation.

        Raises:
            Exception: the last attempt's exception when attempts run out with `reraise`, else tenacity's
                `RetryError` (or `retry_error_cls`); an exception the config does not retry, at once.
        """

        def attempt() -> httpx.Response:
            response = self.wrapped.handle_request(request)
            # httpx sets this only once the transport returns; the validator may need it (raise_for_status does).
            response.request = request
            if self.validate_response is not None:
                try:
                    self.validate_response(response)
                except Exception:
                    response.close()
                    raise
            return response

        config: dict[str, Any] = dict(self.config)
        return tenacity.Retrying(**config)(attempt)

    def __enter__(self) -> Self:
        self.wrapped.__enter__()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None = None,
        exc_value: BaseException | None = None,
        traceback: TracebackType | None = None,
    ) -> None:
        self.wrapped.__exit__(exc_type, exc_value, traceback)

    def close(self) -> None:
        """Close the wrapped transport."""
        self.wrapped.close()


class AsyncTenacityTransport(httpx.AsyncBaseTransport):
    """An async httpx transport that sends each request through another transport, retrying it.

    It works as `TenacityTransport` does, for `httpx.AsyncClient` (the client providers take as
    `http_client=`). `validate_response` is a plain function (it is not awaited); the response's body is not
    read yet when it is called. Without `sleep` in the config, waits go through `anyio.sleep` (a negative wait,
    which a negative `Retry-After` can ask for, is taken as none).

    Example:
        ```python
        import httpx
        from tenacity import retry_if_exception_type, stop_after_attempt

        from edgewise.agent.retries import AsyncTenacityTransport, RetryConfig, wait_retry_after

        transport = AsyncTenacityTransport(
            RetryConfig(
                retry=retry_if_exception_type((httpx.HTTPStatusError, httpx.TransportError)),
                wait=wait_retry_after(max_wait=60),
                stop=stop_after_attempt(4),
                reraise=True,
            ),
            validate_response=lambda response: response.raise_for_status(),
        )
        client = httpx.AsyncClient(transport=transport)
        ```
    """

    def __init__(
        self,
        config: RetryConfig,
        wrapped: httpx.AsyncBaseTransport | None = None,
        validate_response: Callable[[httpx.Response], Any] | None = None,
    ) -> None:
        """Retry as `config` says, sending through `wrapped` (a new `httpx.AsyncHTTPTransport()` when `None`)."""
        self.config = config
        """The arguments of tenacity's `retry` decorator."""
        self.wrapped = wrapped or httpx.AsyncHTTPTransport()
        """The transport each attempt goes through."""
        self.validate_response = validate_response
        """Called with each response; an exception it raises fails the attempt."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send the request, again as the config allows, and return the first response that passed validation.

        Raises:
            Exception: the last attempt's exception when attempts run out with `reraise`, else tenacity's
                `RetryError` (or `retry_error_cls`); an exception the config does not retry, at once.
        """

        async def attempt() -> httpx.Response:
            response = await self.wrapped.handle_async_request(request)
            # httpx sets this only once the transport returns; the validator may need it (raise_for_status does).
            response.request = request
            if self.validate_response is not None:
                try:
                    self.validate_response(response)
                except Exception:
                    await response.aclose()
                    raise
            return response

        config: dict[str, Any] = {'sleep': _sleep, **self.config}
        return await tenacity.AsyncRetrying(**config)(attempt)

    async def __aenter__(self) -> Self:
        await self.wrapped.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None = None,
        exc_value: BaseException | None = None,
        traceback: TracebackType | None = None,
    ) -> None:
        await self.wrapped.__aexit__(exc_type, exc_value, traceback)

    async def aclose(self) -> None:
        """Close the wrapped transport."""
        await self.wrapped.aclose()


async def _sleep(seconds: float) -> None:
    """The async transport's default sleep: anyio's, on whichever loop runs (tenacity's own default was asyncio's
    before tenacity 9), with a negative wait (a negative `Retry-After`) taken as none, as `asyncio.sleep` does."""
    await anyio.sleep(max(seconds, 0))


def wait_retry_after(
    fallback_strategy: Callable[[RetryCallState], float] | None = None, max_wait: float = 300
) -> Callable[[RetryCallState], float]:
    """A tenacity wait that follows the server's `Retry-After` header, for use as `RetryConfig(wait=...)`.

    When the attempt failed with an `httpx.HTTPStatusError` (as `response.raise_for_status()` in a
    `validate_response` raises) whose response has a `Retry-After` header, the wait is what the header asks,
    at most `max_wait`: a whole number of seconds (`'30'`), or an HTTP date (`'Wed, 21 Oct 2015 07:28:00 GMT'`)
    still in the future. Otherwise (no such error or header, an unreadable value, a date already past) the
    wait is `fallback_strategy`'s, which `max_wait` does not bound.

    Args:
        fallback_strategy: The wait when the server asks for none; by default exponential, 1, 2, 4, ... seconds
            up to 60 (tenacity's `wait_exponential(multiplier=1, max=60)`).
        max_wait: The longest wait in seconds that a `Retry-After` header can ask for.

    Example:
        ```python
        from tenacity import wait_fixed

        from edgewise.agent.retries import wait_retry_after

        wait = wait_retry_after(fallback_strategy=wait_fixed(2), max_wait=120)
        ```
    """
    fallback: Callable[[RetryCallState], float] = (
        tenacity.wait_exponential(multiplier=1, max=60) if fallback_strategy is None else fallback_strategy
    )

    def wait(state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome is not None else None
        if isinstance(error, httpx.HTTPStatusError) and (value := error.response.headers.get('retry-after')):
            asked = _asked_wait(value)
            if asked is not None:
                return min(asked, max_wait)
        return fallback(state)

    return wait


def _asked_wait(value: str) -> float | None:
    """The seconds a `Retry-After` value asks to wait, or None to fall back (unreadable, or a date past).

    As in pydantic-ai, a number is read with `int()` (so `' 7 '` and `'-3'` are numbers, `'1.5'` is not), and
    a date without a time zone (`-0000`) cannot be compared with the time now, so it falls back.
    """
    try:
        return float(int(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
        seconds = (when - datetime.now(timezone.utc)).total_seconds()
    except (TypeError, ValueError):
        return None
    return seconds if seconds > 0 else None

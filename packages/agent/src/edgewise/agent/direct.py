"""Ask a model directly, without an agent: one request, one response (or one streamed response).

These are thin wrappers around `Model.request` and `Model.request_stream` for code that builds the messages itself
and needs none of an agent's loop (no tools run, no output validated, no retries of the run). A model may be given
by name (`'openai:gpt-5.2'`, `'anthropic:claude-sonnet-4-5'`, `'test'`), as for `Agent`::

    from edgewise.agent import ModelRequest
    from edgewise.agent.direct import model_request_sync

    response = model_request_sync('anthropic:claude-haiku-4-5', [ModelRequest.user_text_prompt('Capital of France?')])
    print(response.text)

The synchronous forms start an event loop of their own, so they cannot be called from async code.

`model_request_batch` sends many requests through the model's batch API (cheaper, slower) and waits for them.
"""

from __future__ import annotations as _annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from types import TracebackType
from typing import TYPE_CHECKING

from ._streaming.sync_bridge import SyncStreamBridge
from ._threads import run_in_new_loop
from .capabilities.batch_model_requests import (
    DEFAULT_MAX_POLL_INTERVAL,
    DEFAULT_MAX_RESUBMISSIONS,
    DEFAULT_POLL_INTERVAL,
    send_in_batches,
)
from .exceptions import ModelAPIError, UserError
from .messages import ModelMessage, ModelResponse, ModelResponseStreamEvent
from .models import KnownModelName, Model, ModelRequestParameters, infer_model
from .models.batch import BatchRequest
from .models.instrumented import InstrumentationSettings, instrument_model
from .settings import ModelSettings, merge_model_settings
from .usage import RequestUsage

if TYPE_CHECKING:
    from .models import StreamedResponse

__all__ = (
    'model_request',
    'model_request_sync',
    'model_request_stream',
    'model_request_stream_sync',
    'model_request_batch',
    'StreamedResponseSync',
)


def _prepare_model(model: Model | KnownModelName | str, instrument: InstrumentationSettings | bool | None) -> Model:
    """The model of `model`, in an `InstrumentedModel` when the request is traced: `instrument` if given, else what
    `Agent.instrument_all()` set (on by default)."""
    if instrument is None:
        from .agent import Agent

        instrument = Agent._instrument_default  # pyright: ignore[reportPrivateUsage]
    return instrument_model(infer_model(model), instrument)


async def model_request(
    model: Model | KnownModelName | str,
    messages: Sequence[ModelMessage],
    *,
    model_settings: ModelSettings | None = None,
    model_request_parameters: ModelRequestParameters | None = None,
    instrument: InstrumentationSettings | bool | None = None,
) -> ModelResponse:
    """Send `messages` to `model` and return its response.

    Args:
        model: The model, or its name (`'<provider>:<model>'`, or `'test'`).
        messages: The conversation to send (`ModelRequest.user_text_prompt(...)` makes a one-message one).
        model_settings: Settings of this request (temperature, max tokens, ...).
        model_request_parameters: The tools the model may call and the output it is asked for (none by default).
        instrument: Whether the request gets a `chat <model>` span (`InstrumentationSettings` say what it records,
            as an `InstrumentedModel`'s); `None` follows `Agent.instrument_all()`.

    Raises:
        UserError: the model name is unknown, or its provider's API key is not set.
        ModelHTTPError: the provider answered with an error.
    """
    model_instance = _prepare_model(model, instrument)
    params = model_request_parameters or ModelRequestParameters()
    return await model_instance.request(list(messages), model_settings, params)


async def model_request_batch(
    model: Model | KnownModelName | str,
    requests: Sequence[BatchRequest],
    *,
    max_requests: int | None = None,
    max_resubmissions: int = DEFAULT_MAX_RESUBMISSIONS,
    poll_interval: timedelta = DEFAULT_POLL_INTERVAL,
    max_poll_interval: timedelta = DEFAULT_MAX_POLL_INTERVAL,
) -> list[ModelResponse | ModelAPIError]:
    """Send `requests` through the model's batch API (typically half the price; a result can take up to a day) and
    wait for their responses.

    The requests are submitted at once, in as few batches as the provider (or `max_requests`) allows, grouped as in
    pydantic-ai 2.68: requests go in one batch only when they can share it (the same endpoint and model, the same
    Anthropic beta flags...). Each batch is checked after `poll_interval`, then half as long again after each check,
    up to `max_poll_interval`. A request the provider left unrun, or that failed with a rate limit, a timeout or a
    server error, is submitted again in a new batch, up to `max_resubmissions` times. Cancelling the call cancels
    the batches still running. The requests are not traced.

    Args:
        model: The model, or its name (`'<provider>:<model>'`, or `'test'`); it must have a batch API.
        requests: The requests, each with its messages, settings and parameters, and a `custom_id` of its own.
        max_requests: The most requests in one batch; by default, and at most, the provider's limit.
        max_resubmissions: How many times a request left unrun or failed with a transient error is submitted again
            (`0`: its error is returned).
        poll_interval: How long to wait before first checking a batch.
        max_poll_interval: The longest wait between two checks of a batch.

    Returns:
        One item per request, in order: its response, or the `ModelAPIError` it failed with.

    Raises:
        UserError: the model has no batch API, two requests share a `custom_id`, a request sets `request_timeout`
            (one request of a batch cannot be timed out), or an argument is out of range.
        ModelAPIError: a batch could not be created or checked (the other batches are cancelled first).
    """
    model_instance = infer_model(model)
    limit = model_instance.batch_max_requests
    if limit is None:
        raise UserError(
            f'`model_request_batch` needs a model with a batch API; `{type(model_instance).__name__}` '
            f'({model_instance.model_name!r}) has none.'
        )
    if max_requests is not None and max_requests < 1:
        raise UserError('`max_requests` must be at least 1.')
    if len({request.custom_id for request in requests}) != len(requests):
        raise UserError('Each batch request needs a `custom_id` of its own.')
    for request in requests:
        if 'request_timeout' in (merge_model_settings(model_instance.settings, request.model_settings) or {}):
            raise UserError(
                f'Batch request {request.custom_id!r} sets `request_timeout`, which a batch cannot honour (it can '
                'take up to a day): cancel the call to stop waiting.'
            )
    outcomes = await send_in_batches(
        model_instance,
        requests,
        batch_size=limit if max_requests is None else min(max_requests, limit),
        max_resubmissions=max_resubmissions,
        poll_interval=poll_interval,
        max_poll_interval=max_poll_interval,
    )
    results: list[ModelResponse | ModelAPIError] = []
    for outcome in outcomes:
        if not isinstance(outcome, ModelResponse | ModelAPIError):
            raise outcome  # not an answer of the provider (a bug in a test model's function, say): the call fails
        results.append(outcome)
    return results


def model_request_sync(
    model: Model | KnownModelName | str,
    messages: Sequence[ModelMessage],
    *,
    model_settings: ModelSettings | None = None,
    model_request_parameters: ModelRequestParameters | None = None,
    instrument: InstrumentationSettings | bool | None = None,
) -> ModelResponse:
    """`model_request` from synchronous code: it runs in an event loop of its own, so not inside async code.

    Takes the same arguments as `model_request`.
    """
    return run_in_new_loop(
        partial(
            model_request,
            model,
            list(messages),
            model_settings=model_settings,
            model_request_parameters=model_request_parameters,
            instrument=instrument,
        )
    )


def model_request_stream(
    model: Model | KnownModelName | str,
    messages: Sequence[ModelMessage],
    *,
    model_settings: ModelSettings | None = None,
    model_request_parameters: ModelRequestParameters | None = None,
    instrument: InstrumentationSettings | bool | None = None,
) -> AbstractAsyncContextManager[StreamedResponse]:
    """Send `messages` to `model` as a streamed request: `async with model_request_stream(...) as stream:`.

    Iterating the stream gives its events (`PartStartEvent`, `PartDeltaEvent`, ...) as they arrive;
    `stream.get()` is the response so far. Leaving the block early closes the connection. Takes the same
    arguments as `model_request`.
    """
    model_instance = _prepare_model(model, instrument)
    params = model_request_parameters or ModelRequestParameters()
    return model_instance.request_stream(list(messages), model_settings, params)


def model_request_stream_sync(
    model: Model | KnownModelName | str,
    messages: Sequence[ModelMessage],
    *,
    model_settings: ModelSettings | None = None,
    model_request_parameters: ModelRequestParameters | None = None,
    instrument: InstrumentationSettings | bool | None = None,
) -> StreamedResponseSync:
    """`model_request_stream` from synchronous code: `with model_request_stream_sync(...) as stream:`, then
    `for event in stream:`. The stream runs in an event loop of its own; use it and close it on the thread that
    entered it, and not inside async code. Takes the same arguments as `model_request`.
    """
    return StreamedResponseSync(
        model_request_stream(
            model,
            list(messages),
            model_settings=model_settings,
            model_request_parameters=model_request_parameters,
            instrument=instrument,
        )
    )


@dataclass
class StreamedResponseSync:
    """A streamed model response read from synchronous code (made by `model_request_stream_sync`).

    Used as a context manager: the request starts on entering the `with` block, and leaving it (also early)
    closes the stream and its connection.
    """

    _async_stream_cm: AbstractAsyncContextManager[StreamedResponse]
    _bridge: SyncStreamBridge[StreamedResponse] | None = field(default=None, init=False)
    _context_entered: bool = field(default=False, init=False)

    def __enter__(self) -> StreamedResponseSync:
        self._context_entered = True
        self._bridge = SyncStreamBridge(self._async_stream_cm, async_alternative='`model_request_stream`')
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc_val: BaseException | None, exc_tb: TracebackType | None
    ) -> None:
        if self._bridge is not None:
            self._bridge.shutdown((exc_type, exc_val, exc_tb))

    def __iter__(self) -> Iterator[ModelResponseStreamEvent]:
        """The response's events, as they arrive."""
        bridge = self._ensure_bridge()
        stream = bridge.stream  # not the bridge: the iterator must not keep the bridge alive
        return bridge.stream_sync(lambda: aiter(stream))

    def __repr__(self) -> str:
        if self._bridge is not None:
            return repr(self._bridge.stream)
        return f'{type(self).__name__}(context_entered={self._context_entered})'

    __str__ = __repr__

    def _ensure_bridge(self) -> SyncStreamBridge[StreamedResponse]:
        if self._bridge is None:
            raise RuntimeError(
                'StreamedResponseSync must be used as a context manager: '
                '`with model_request_stream_sync(...) as stream:`'
            )
        return self._bridge

    @property
    def response(self) -> ModelResponse:
        """The response as streamed so far."""
        bridge = self._ensure_bridge()
        return bridge.call(bridge.stream.get)

    @property
    def usage(self) -> RequestUsage:
        """The usage of the response so far."""
        bridge = self._ensure_bridge()
        return bridge.call(lambda: bridge.stream.usage)

    @property
    def model_name(self) -> str:
        """The name of the model that answers."""
        bridge = self._ensure_bridge()
        return bridge.call(lambda: bridge.stream.model_name)

    @property
    def timestamp(self) -> datetime:
        """When the response started."""
        bridge = self._ensure_bridge()
        return bridge.call(lambda: bridge.stream.timestamp)

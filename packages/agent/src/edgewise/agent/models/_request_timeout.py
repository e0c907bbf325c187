"""The `request_timeout` and `first_event_timeout` model settings: deadlines over one request to one model.

Both are fixed on anyio's clock when the request starts. `request_timeout` covers the whole request: every attempt
the HTTP layer makes, and, for a stream, opening it and reading it to its last event. `first_event_timeout` (streams
only) covers opening the stream and waiting for its first event. Each wait runs in a cancel scope with the earlier
deadline, and never across a `yield`, so a stream can be read from any task and the time a reader spends between
events counts too. When a deadline passes, the wait is cancelled and `ModelRequestTimeout` says which setting ran
out.

A `FallbackModel` starts no deadline of its own: it starts one for each model it tries, so one slow model does not
use up the others' time.
"""

from __future__ import annotations as _annotations

import math
from collections.abc import AsyncIterator, Generator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from ..exceptions import ModelRequestTimeout
from ..settings import ModelSettings, merge_model_settings

if TYPE_CHECKING:
    from ..messages import ModelMessage, ModelResponse
    from ._model import Model, RunContext
    from ._request_parameters import ModelRequestParameters
    from ._streamed_response import StreamedResponse

__all__ = ('RequestDeadline', 'timed_request', 'timed_stream')

_T = TypeVar('_T')


@dataclass(frozen=True)
class RequestDeadline:
    """The deadlines of one request to one model (at least one of the two timeouts is set)."""

    model_name: str
    """The model, named in the error."""
    timeout: float | None
    """The `request_timeout` in seconds, if set."""
    deadline: float = math.inf
    """When the request times out, on anyio's clock."""
    first_event_timeout: float | None = None
    """The `first_event_timeout` of a streamed request in seconds, if set."""
    first_event_deadline: float = math.inf
    """When a stream without an event yet times out, on anyio's clock (never, once an event came)."""

    @classmethod
    def start(cls, model_name: str, settings: Mapping[str, Any] | None, *, stream: bool) -> RequestDeadline | None:
        """The deadlines of a request starting now; `None` when neither setting applies."""
        settings = settings or {}
        timeout = settings.get('request_timeout')
        first_event_timeout = settings.get('first_event_timeout') if stream else None
        if timeout is None and first_event_timeout is None:
            return None
        now = anyio.current_time()
        return cls(
            model_name=model_name,
            timeout=timeout,
            deadline=math.inf if timeout is None else now + timeout,
            first_event_timeout=first_event_timeout,
            first_event_deadline=math.inf if first_event_timeout is None else now + first_event_timeout,
        )

    @contextmanager
    def enforce(self) -> Generator[None, None, None]:
        """Cancel the enclosed wait at the earlier deadline, and raise `ModelRequestTimeout` in its place."""
        with anyio.CancelScope(deadline=min(self.deadline, self.first_event_deadline)) as scope:
            yield
        if scope.cancelled_caught:
            if self.first_event_deadline < self.deadline:
                assert self.first_event_timeout is not None
                raise ModelRequestTimeout(self.model_name, self.first_event_timeout, setting='first_event_timeout')
            assert self.timeout is not None
            raise ModelRequestTimeout(self.model_name, self.timeout)

    def after_first_event(self) -> RequestDeadline:
        """What is left once the stream produced an event: the `request_timeout` deadline only."""
        return self if self.first_event_deadline == math.inf else replace(self, first_event_deadline=math.inf)

    def iterate(self, iterator: AsyncIterator[_T]) -> AsyncIterator[_T]:
        """The items of `iterator`, each pulled under the deadlines (the first-event one until the first item)."""
        return _UnderDeadline(iterator, self)


class _UnderDeadline(AsyncIterator[_T]):
    """Pulls each item of an iterator under a deadline (a plain iterator: nothing for the event loop to finalize)."""

    def __init__(self, iterator: AsyncIterator[_T], deadline: RequestDeadline) -> None:
        self._iterator = iterator
        self._deadline = deadline

    async def __anext__(self) -> _T:
        with self._deadline.enforce():
            item = await self._iterator.__anext__()
        self._deadline = self._deadline.after_first_event()
        return item


def _start(model: Model, settings: ModelSettings | None, *, stream: bool) -> RequestDeadline | None:
    if not model._starts_request_deadline():  # a `FallbackModel` starts one per model it tries
        return None
    return RequestDeadline.start(model.model_name, merge_model_settings(model.settings, settings), stream=stream)


async def timed_request(
    model: Model, messages: list[ModelMessage], settings: ModelSettings | None, params: ModelRequestParameters
) -> ModelResponse:
    """`model.request(...)` under its `request_timeout`, when one is set (in `settings` or the model's own).

    Raises:
        ModelRequestTimeout: the request did not finish in time.
    """
    deadline = _start(model, settings, stream=False)
    if deadline is None:
        return await model.request(messages, settings, params)
    with deadline.enforce():
        response = await model.request(messages, settings, params)
    return response


@asynccontextmanager
async def timed_stream(
    model: Model,
    messages: list[ModelMessage],
    settings: ModelSettings | None,
    params: ModelRequestParameters,
    run_context: RunContext[Any] | None,
) -> AsyncIterator[StreamedResponse]:
    """`model.request_stream(...)` under its `request_timeout` and `first_event_timeout`, when set: opening the
    stream and each pull of its next event.

    Raises:
        ModelRequestTimeout: the stream did not open, produce its first event, or end in time.
    """
    deadline = _start(model, settings, stream=True)
    stream = model.request_stream(messages, settings, params, run_context)
    if deadline is None:
        async with stream as response:
            yield response
        return
    async with AsyncExitStack() as stack:
        with deadline.enforce():
            response = await stack.enter_async_context(stream)
        response._request_deadline = deadline
        yield response

"""The `request_timeout` and `first_event_timeout` model settings: deadlines over one request to one model.

`request_timeout` covers the whole request: every attempt the HTTP layer makes, and, for a stream, opening it and
reading it to its last event. `first_event_timeout` (streams only) covers opening the stream and waiting for its first
event. The deadlines themselves are `_deadline.RequestDeadline`.

A `FallbackModel` starts no deadline of its own: it starts one for each model it tries, so one slow model does not
use up the others' time.
"""

from __future__ import annotations as _annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any

from ..settings import ModelSettings, merge_model_settings
from ._deadline import RequestDeadline

if TYPE_CHECKING:
    from ..messages import ModelMessage, ModelResponse
    from ._model import Model, RunContext
    from ._request_parameters import ModelRequestParameters
    from ._streamed_response import StreamedResponse

__all__ = ('timed_request', 'timed_stream')


def _start(model: Model, settings: ModelSettings | None, *, stream: bool) -> RequestDeadline | None:
    if not settings and not model.settings:  # (most requests: no setting, so no deadline to merge settings for)
        return None
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

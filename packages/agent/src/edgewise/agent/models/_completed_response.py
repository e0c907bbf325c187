"""`CompletedStreamedResponse`: a `StreamedResponse` over a `ModelResponse` that is already whole (re-exported by
`models`, and by `models.wrapper` where pydantic-ai 1.x had it).

A run streams one when no live stream exists: a capability's `wrap_model_request` answered without calling the
model, or a durable step made the response elsewhere. `replay_events` says what it yields: nothing (`False`), one
`PartStartEvent` per part carrying the whole part (`True`, so that event handlers still see the parts), or the
events captured off the live stream (a list, replayed as they were).
"""

from __future__ import annotations as _annotations

import dataclasses
import warnings
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any

from .._message_flow.events import ModelResponseStreamEvent
from .._messages.model_messages import ModelResponse
from .._messages.usage_counts import RequestUsage
from .._warnings import PydanticAIDeprecationWarning
from ._request_parameters import ModelRequestParameters
from ._streamed_response import CallableRequestUsage, StreamedResponse

__all__ = ('CompletedStreamedResponse',)

_UNSET: Any = object()


class CompletedStreamedResponse(StreamedResponse):
    """A streamed response whose `ModelResponse` is already whole; `get()` returns it (see the module docstring)."""

    response: ModelResponse
    """The whole response."""

    def __init__(
        self,
        response: ModelResponse | ModelRequestParameters,
        model_request_parameters: ModelRequestParameters | ModelResponse | None = None,
        *,
        replay_events: bool | list[ModelResponseStreamEvent] = _UNSET,
        events: bool | list[ModelResponseStreamEvent] | None = None,
    ) -> None:
        """Wrap `response`.

        Args:
            response: The whole response.
            model_request_parameters: The parameters of the request it answers.
            replay_events: What the stream yields (see the module docstring); `False` by default.
            events: The deprecated name of `replay_events` (an explicit `replay_events` wins).
        """
        if events is not None:
            warnings.warn('`events` is deprecated; use `replay_events` instead.', PydanticAIDeprecationWarning, 2)
            if replay_events is _UNSET:
                replay_events = events
        if isinstance(response, ModelRequestParameters):  # the order of pydantic-ai 1.x, `models.wrapper`
            warnings.warn(
                '`CompletedStreamedResponse(model_request_parameters, response)` is deprecated; pass the response '
                'first and `model_request_parameters` as a keyword argument: '
                '`CompletedStreamedResponse(response, model_request_parameters=...)`.',
                PydanticAIDeprecationWarning,
                stacklevel=2,
            )
            response, model_request_parameters = model_request_parameters, response  # type: ignore[assignment]
        if not isinstance(response, ModelResponse) or not isinstance(model_request_parameters, ModelRequestParameters):
            raise TypeError('CompletedStreamedResponse takes a `ModelResponse` and `model_request_parameters=`')
        super().__init__(model_request_parameters)
        self.response = response
        self._replay: bool | list[ModelResponseStreamEvent] = False if replay_events is _UNSET else replay_events
        self._usage = response.usage
        self._timestamp = response.timestamp
        self.finish_reason = response.finish_reason
        self.provider_response_id = response.provider_response_id

    def __aiter__(self) -> AsyncIterator[ModelResponseStreamEvent]:
        if not isinstance(self._replay, list):
            return super().__aiter__()
        # Captured events already hold their part ends and final-result event: replayed as they are.
        if self._events is None:
            self._events = self._replay_captured(self._replay)
        return self._events

    async def _replay_captured(self, events: list[ModelResponseStreamEvent]) -> AsyncIterator[ModelResponseStreamEvent]:
        for event in events:
            yield event
        self._complete = True

    async def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:
        if self._replay is False:
            return
        for part in self.response.parts:
            # The whole part in its start event, and no delta: reducing the events gives the response back.
            yield self._parts_manager.handle_part(vendor_part_id=None, part=part)

    async def close(self) -> None:
        """Nothing to release: there is no live stream."""

    def get(self) -> ModelResponse:
        """The whole response (with the attempts that failed before it, when any were set on the stream)."""
        response = self._marked(self.response)
        if self.failed_attempts:
            earlier = [*self.failed_attempts, *(response.failed_attempts or ())]
            return dataclasses.replace(response, failed_attempts=earlier)
        return response

    @property
    def usage(self) -> RequestUsage:
        """The response's usage (calling it, the 1.x spelling, still works and warns)."""
        return CallableRequestUsage.of(self.response.usage)

    @property
    def timestamp(self) -> datetime:
        """When the response was made."""
        return self.response.timestamp

    @property
    def model_name(self) -> str:
        """The name of the model that answered."""
        return self.response.model_name or ''

    @property
    def provider_name(self) -> str | None:
        """The provider that answered."""
        return self.response.provider_name

    @property
    def provider_url(self) -> str | None:
        """The base URL of the provider that answered."""
        return self.response.provider_url

"""`WrapperModel`: a model that hands every request to another; and `CompletedStreamedResponse`, a streamed
response that arrives already whole (a stream consumed elsewhere, such as in a durable step)."""

from __future__ import annotations as _annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

from .._message_flow.events import ModelResponseStreamEvent
from .._messages.model_messages import ModelMessage, ModelResponse
from .._messages.usage_counts import RequestUsage
from ..profiles import ModelProfile
from ..settings import ModelSettings
from ._model import Model, RunContext
from ._request_parameters import ModelRequestParameters
from ._streamed_response import CallableRequestUsage, StreamedResponse

__all__ = ('WrapperModel', 'CompletedStreamedResponse')


class WrapperModel(Model):
    """Sends every request to `wrapped`; subclass it and override what you want to change."""

    wrapped: Model
    """The model requests go to."""

    def __init__(self, wrapped: Model) -> None:
        self.wrapped = wrapped

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        """The wrapped model's response."""
        return await self.wrapped.request(messages, model_settings, model_request_parameters)

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncIterator[StreamedResponse]:
        """The wrapped model's streamed response."""
        async with self.wrapped.request_stream(
            messages, model_settings, model_request_parameters, run_context
        ) as response:
            yield response

    def prepare_messages(
        self, messages: list[ModelMessage], model_request_parameters: ModelRequestParameters | None = None
    ) -> list[ModelMessage]:
        """The history as the wrapped model prepares it."""
        return self.wrapped.prepare_messages(messages, model_request_parameters)

    def customize_request_parameters(self, parameters: ModelRequestParameters) -> ModelRequestParameters:
        """As the wrapped model adapts them."""
        return self.wrapped.customize_request_parameters(parameters)

    @property
    def profile(self) -> ModelProfile:
        """The wrapped model's profile."""
        return self.wrapped.profile

    @property
    def settings(self) -> ModelSettings | None:
        """The wrapped model's default settings."""
        return self.wrapped.settings

    @property
    def provider(self) -> Any:
        """The wrapped model's provider."""
        return self.wrapped.provider

    @property
    def model_name(self) -> str:
        """The wrapped model's name."""
        return self.wrapped.model_name

    @property
    def system(self) -> str:
        """The wrapped model's provider name."""
        return self.wrapped.system


class CompletedStreamedResponse(StreamedResponse):
    """A streamed response whose `ModelResponse` is already whole: it yields no events and `get()` returns
    `response`."""

    response: ModelResponse
    """The whole response."""

    def __init__(self, model_request_parameters: ModelRequestParameters, response: ModelResponse) -> None:
        super().__init__(model_request_parameters)
        self.response = response
        self._usage = response.usage
        self._timestamp = response.timestamp
        self.finish_reason = response.finish_reason
        self.provider_response_id = response.provider_response_id

    async def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:
        return
        yield  # an async generator with no events

    def get(self) -> ModelResponse:
        """The whole response."""
        return self.response

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

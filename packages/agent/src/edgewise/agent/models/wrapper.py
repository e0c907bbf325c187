"""`WrapperModel`: a model that hands every request to another.

`CompletedStreamedResponse` was here in pydantic-ai 1.x: it still imports from here, with a warning naming its
place in 2.x, `edgewise.agent.models`."""

from __future__ import annotations as _annotations

import warnings
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import timedelta
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from .._messages.model_messages import ModelMessage, ModelResponse, ModelResponsePart
from .._warnings import PydanticAIDeprecationWarning
from ..profiles import ModelProfile, ToolAdditionMode, ToolDeferralMode
from ..settings import ModelSettings, merge_model_settings
from ._model import Model, RunContext
from ._request_parameters import ModelRequestParameters
from ._streamed_response import StreamedResponse

if TYPE_CHECKING:
    from .batch import Batch, BatchRequest, BatchResult, BatchResultStatus, EncodedBatchRequest

__all__ = ('WrapperModel',)


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

    async def __aenter__(self) -> Self:
        """Enter the wrapped model's context (its provider's HTTP client, or each model of a `FallbackModel`)."""
        await self.wrapped.__aenter__()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        """Leave the wrapped model's context."""
        await self.wrapped.__aexit__(exc_type, exc, tb)

    def _starts_request_deadline(self) -> bool:
        return self.wrapped._starts_request_deadline()

    def continuation_delay(self, response: ModelResponse) -> float | None:
        """The wrapped model's wait before continuing a suspended response."""
        return self.wrapped.continuation_delay(response)

    async def cancel_suspended_response(self, response: ModelResponse) -> None:
        """Has the wrapped model stop the provider's work on a suspended response."""
        await self.wrapped.cancel_suspended_response(response)

    @property
    def batch_max_requests(self) -> int | None:
        """The wrapped model's batch limit (its batch API is the wrapper's)."""
        return self.wrapped.batch_max_requests

    @property
    def batch_max_bytes(self) -> int | None:
        """The wrapped model's batch size limit in bytes."""
        return self.wrapped.batch_max_bytes

    def batch_request_size(self, request: EncodedBatchRequest) -> int:
        """The wrapped model's `batch_request_size`."""
        return self.wrapped.batch_request_size(request)

    def _no_batch_api_message(self) -> str:
        return self.wrapped._no_batch_api_message()

    def _batch_unlisted_status(self, batch: Batch) -> BatchResultStatus | None:
        return self.wrapped._batch_unlisted_status(batch)

    async def batch_encode(self, request: BatchRequest) -> EncodedBatchRequest:
        """The wrapped model's `batch_encode`."""
        return await self.wrapped.batch_encode(request)

    async def batch_create(self, requests: Sequence[EncodedBatchRequest]) -> Batch:
        """The wrapped model's `batch_create`."""
        return await self.wrapped.batch_create(requests)

    async def batch_status(self, batch: Batch) -> Batch:
        """The wrapped model's `batch_status`."""
        return await self.wrapped.batch_status(batch)

    async def batch_results(self, batch: Batch) -> list[BatchResult]:
        """The wrapped model's `batch_results`."""
        return await self.wrapped.batch_results(batch)

    async def batch_cancel(self, batch: Batch) -> Batch:
        """The wrapped model's `batch_cancel`."""
        return await self.wrapped.batch_cancel(batch)

    def batch_decode(self, result: BatchResult, request: BatchRequest) -> ModelResponse:
        """The wrapped model's `batch_decode`."""
        return self.wrapped.batch_decode(result, request)

    def prepare_messages(
        self, messages: list[ModelMessage], model_request_parameters: ModelRequestParameters | None = None
    ) -> list[ModelMessage]:
        """The history as the wrapped model prepares it."""
        return self.wrapped.prepare_messages(messages, model_request_parameters)

    def customize_request_parameters(self, parameters: ModelRequestParameters) -> ModelRequestParameters:
        """As the wrapped model adapts them."""
        return self.wrapped.customize_request_parameters(parameters)

    def prepare_request(
        self, model_settings: ModelSettings | None, model_request_parameters: ModelRequestParameters
    ) -> tuple[ModelSettings | None, ModelRequestParameters]:
        """As the wrapped model prepares them: its native tools, tool visibility and thinking (the wrapper's class
        maps no native tools of its own)."""
        return self.wrapped.prepare_request(model_settings, model_request_parameters)

    @property
    def profile(self) -> ModelProfile:
        """The wrapped model's profile."""
        return self.wrapped.profile

    @property
    def context_window(self) -> int | None:
        """The wrapped model's."""
        return self.wrapped.context_window

    def resolve_cache_retention(self, model_settings: ModelSettings | None) -> timedelta | None:
        """The wrapped model's, under this model's own settings."""
        return self.wrapped.resolve_cache_retention(merge_model_settings(self.settings, model_settings))

    def _caching_not_enabled(self, model_settings: ModelSettings | None) -> bool:
        return self.wrapped._caching_not_enabled(merge_model_settings(self.settings, model_settings))

    @property
    def tool_deferral_mode(self) -> ToolDeferralMode | None:
        """The wrapped model's."""
        return self.wrapped.tool_deferral_mode

    @property
    def tool_addition_mode(self) -> ToolAdditionMode | None:
        """The wrapped model's."""
        return self.wrapped.tool_addition_mode

    @property
    def settings(self) -> ModelSettings | None:
        """The wrapped model's default settings."""
        return self.wrapped.settings

    @property
    def provider(self) -> Any:
        """The wrapped model's provider."""
        return self.wrapped.provider

    @property
    def base_url(self) -> str | None:
        """The wrapped model's base URL."""
        return self.wrapped.base_url

    @property
    def model_name(self) -> str:
        """The wrapped model's name."""
        return self.wrapped.model_name

    @property
    def system(self) -> str:
        """The wrapped model's provider name."""
        return self.wrapped.system

    @property
    def canonical_system(self) -> str:
        """The wrapped model's."""
        return self.wrapped.canonical_system

    @property
    def compatible_systems(self) -> frozenset[str]:
        """The wrapped model's."""
        return self.wrapped.compatible_systems

    def accepts_stateless_artifacts(self, response: ModelResponse, part: ModelResponsePart | None = None) -> bool:
        """The wrapped model's answer (asked, not derived from its systems: it may decide otherwise)."""
        return self.wrapped.accepts_stateless_artifacts(response, part)

    def accepts_server_state(self, response: ModelResponse) -> bool:
        """The wrapped model's answer (asked, as `accepts_stateless_artifacts` is)."""
        return self.wrapped.accepts_server_state(response)

    @property
    def model_id(self) -> str:
        """The wrapped model's id (which a wrapped `FallbackModel` makes from its models' ids)."""
        return self.wrapped.model_id


def __getattr__(name: str) -> Any:
    if name == 'CompletedStreamedResponse':  # here in pydantic-ai 1.x; `models` in 2.x
        warnings.warn(
            '`CompletedStreamedResponse` has moved from `edgewise.agent.models.wrapper` to `edgewise.agent.models`; '
            'import it from there.',
            PydanticAIDeprecationWarning,
            stacklevel=2,
        )
        from ._completed_response import CompletedStreamedResponse

        return CompletedStreamedResponse
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')

"""`ProviderModel`: what the Anthropic, Gemini, Chat Completions and Responses models share around their pure mappings.

Each subclass names its endpoint, builds its body and parses its answer with the mapping module of its API;
this class owns the provider, the profile, the settings and the two requests, both sent through `_http`.
"""

from __future__ import annotations as _annotations

from abc import abstractmethod
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import aclosing, asynccontextmanager
from importlib import import_module
from typing import TYPE_CHECKING, Any, ClassVar, cast

import pydantic_core

from ..exceptions import UnexpectedModelBehavior
from ..messages import FileUrl, ModelMessage, ModelResponse
from ..native_tools import SUPPORTED_NATIVE_TOOLS, AbstractNativeTool
from ..profiles import ModelProfile, ModelProfileSpec, resolve_profile
from ..providers import Provider, infer_provider
from ..settings import ModelSettings, merge_model_settings
from . import _http
from ._downloads import download_files
from ._error_categories import generic_http_error
from ._mapping import EventStreamedResponse, customize_request_parameters
from ._model import Model, check_allow_model_requests
from ._native_support import resolve_model_tools
from ._request_parameters import ModelRequestParameters
from ._special_tokens import restore_special_tokens_in_response
from ._speech_history import unprepared_speech_error
from ._streamed_response import StreamedResponse
from ._system_frames import wire_messages
from ._thinking import resolve_thinking

if TYPE_CHECKING:
    from ._model import RunContext
    from .batch import Batch, BatchRequest, BatchResult, BatchResultStatus, EncodedBatchRequest

__all__ = ('ProviderModel',)


class ProviderModel(Model):
    """A model reached over HTTP through a provider, its JSON made and read by a mapping module."""

    _default_provider: ClassVar[str]
    _endpoint_name: ClassVar[str] = 'API'
    _error_key: ClassVar[str | None] = None

    def __init__(
        self,
        model_name: str,
        *,
        provider: str | Provider[Any] | None = None,
        profile: ModelProfileSpec | None = None,
        settings: ModelSettings | None = None,
    ) -> None:
        """Configure the model.

        Args:
            model_name: The model's name, as the API knows it.
            provider: The provider or its name; the model's usual provider by default.
            profile: A (partial) profile merged over the provider's profile for this model name, or a function
                given that profile and returning the one to use.
            settings: Default settings of this model's requests.
        """
        if provider is None:
            provider = self._default_provider
        elif provider == 'gateway':  # as in pydantic-ai 2.x: this model's own API through the Pydantic AI Gateway
            provider = f'gateway/{self._default_provider}'
        self._model_name = model_name
        self._provider = infer_provider(provider) if isinstance(provider, str) else provider
        self._profile_spec = profile
        self._profile: ModelProfile | None = None
        self._settings = settings

    @property
    def model_name(self) -> str:
        """The model's name."""
        return self._model_name

    @property
    def system(self) -> str:
        """The provider's name (`gen_ai.system`)."""
        return self._provider.name

    @property
    def provider(self) -> Provider[Any]:
        """The provider requests go through."""
        return self._provider

    @property
    def base_url(self) -> str:
        """The provider's base URL."""
        return self._provider.base_url

    @property
    def profile(self) -> ModelProfile:
        """The model's profile: `DEFAULT_PROFILE`, the provider's for this model name and `profile=` merged."""
        if self._profile is None:
            self._profile = resolve_profile(self._provider.model_profile(self._model_name), self._profile_spec)
        return self._profile

    def _sets_context_window(self) -> bool:
        """Whether the provider's profile for the model or a dict `profile=` holds `context_window`."""
        return super()._sets_context_window() or 'context_window' in (
            self._provider.model_profile(self._model_name) or {}
        )

    def customize_request_parameters(self, parameters: ModelRequestParameters) -> ModelRequestParameters:
        """Tool and output schemas rewritten by the profile's JSON-schema transformer, if it has one.

        Raises:
            UserError: the output mode asks for what the model cannot do.
        """
        return customize_request_parameters(parameters, self.profile)

    _http_error: ClassVar[_http.HTTPErrorBuilder] = staticmethod(generic_http_error)
    """How an error status becomes an error: of the category the API's error body names (by the status alone here)."""

    def _request_headers(self, params: ModelRequestParameters, settings: Mapping[str, Any]) -> dict[str, str]:
        """Headers the request needs for its parameters (applied over the `extra_headers` setting); none here."""
        return {}

    def _native_tools(self) -> frozenset[type[AbstractNativeTool]]:
        """The native tools this model can run: those its class maps that its profile allows."""
        return self.supported_native_tools() & self.profile.get('supported_native_tools', SUPPORTED_NATIVE_TOOLS)

    def _needs_download(self, file: FileUrl) -> bool:
        """Whether the API takes this file only as data: by default, only when the file asks to be downloaded."""
        return bool(file.force_download)

    async def _with_files(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        # Downloads go through the provider's client (its pool, proxies and transport), before the pure mapping.
        return await download_files(messages, self._needs_download, self._provider.client)

    @abstractmethod
    def _url(self, *, stream: bool) -> str:
        """The endpoint's URL."""
        raise NotImplementedError

    @abstractmethod
    def _body(
        self, messages: list[ModelMessage], settings: Any, params: ModelRequestParameters, *, stream: bool
    ) -> dict[str, Any]:
        """The request body, from the mapping module."""
        raise NotImplementedError

    @abstractmethod
    def _parse(self, data: Any) -> ModelResponse:
        """The `ModelResponse` of a JSON answer."""
        raise NotImplementedError

    def _streamed(self, params: ModelRequestParameters, events: AsyncIterator[dict[str, Any]]) -> EventStreamedResponse:
        """The streamed response reading the decoded events (models overriding `_stream_response` need not)."""
        raise NotImplementedError

    def _stream_response(
        self, params: ModelRequestParameters, sse: _http.SSEStream, settings: Mapping[str, Any]
    ) -> StreamedResponse:
        """The streamed response over the open event stream: by default `_streamed` over its decoded events."""
        return self._streamed(params, _decoded(sse, self._model_name))

    def _with_thinking(
        self, model_settings: ModelSettings | None, params: ModelRequestParameters
    ) -> ModelRequestParameters:
        """`params` with the unified `thinking` setting resolved against the profile (`params.thinking`)."""
        return resolve_thinking(self._merged_settings(model_settings), params, self.profile)

    def _merged_settings(self, model_settings: ModelSettings | None) -> Mapping[str, Any]:
        return cast(Mapping[str, Any], merge_model_settings(self._settings, model_settings) or {})

    def _call(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        params: ModelRequestParameters,
        *,
        stream: bool,
    ) -> _http.HTTPCall:
        check_allow_model_requests()
        if any(part.part_kind == 'speech' for message in messages for part in message.parts):
            raise unprepared_speech_error(self._model_name)
        params = resolve_model_tools(params, self._native_tools, self.tool_deferral_mode, self.tool_addition_mode)
        settings = self._merged_settings(model_settings)
        messages = wire_messages(
            messages, self.profile, params, settings.get('framing_announcement'), self.accepts_stateless_artifacts
        )
        body = self._body(messages, settings, params, stream=stream)
        provider = self._provider
        headers = provider.request_headers()
        if stream:
            headers['accept'] = 'text/event-stream'
        headers.update(settings.get('extra_headers') or {})
        headers.update(self._request_headers(params, settings))
        return _http.HTTPCall(
            client=provider.client,
            url=self._url(stream=stream),
            body=body,
            headers=headers,
            timeout=settings.get('timeout'),
            model_name=self._model_name,
            system=self.system,
            max_retries=provider.max_retries,
            error_key=self._error_key,
            endpoint_name=self._endpoint_name,
            base_url=provider.base_url,
            http_error=self._http_error,
            sign=getattr(provider, 'sign_request', None),  # AWS signs each attempt's exact request (Bedrock)
        )

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        """Send the conversation and return the model's response.

        Raises:
            ModelHTTPError: the API answered with a status of 400 or more (after retries).
            ModelAPIError: the API could not be reached or timed out (after retries).
            UnexpectedModelBehavior: the answer is not JSON.
        """
        messages = await self._with_files(messages)
        model_request_parameters = self._with_thinking(model_settings, model_request_parameters)
        call = self._call(messages, model_settings, model_request_parameters, stream=False)
        response = await _http.post_json(call, self._parse)
        if (canonical_system := self._canonical_system_stamp) is not None:
            response.canonical_system = canonical_system
        if self.profile.get('may_tokenize_special_tokens_in_content', False):
            return restore_special_tokens_in_response(response)
        return response

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncIterator[StreamedResponse]:
        """Stream the model's response over server-sent events; leaving the block closes the HTTP response.

        Raises:
            ModelHTTPError: the API answered with a status of 400 or more (after retries).
            ModelAPIError: the API could not be reached, timed out, or the stream broke.
        """
        messages = await self._with_files(messages)
        model_request_parameters = self._with_thinking(model_settings, model_request_parameters)
        call = self._call(messages, model_settings, model_request_parameters, stream=True)
        settings = self._merged_settings(model_settings)
        async with _http.stream_sse(call) as sse:
            streamed = self._stream_response(model_request_parameters, sse, settings)
            streamed.canonical_system = self._canonical_system_stamp
            if self.profile.get('may_tokenize_special_tokens_in_content', False):
                streamed._restores_special_tokens = True
            try:
                yield streamed
            finally:
                sse.record(streamed.get())

    _batch_backend: ClassVar[str | None] = None
    """The private module of this model's batch API (`'_openai_batch'`), imported on first use; `None`: none."""
    _batch_profile_key: ClassVar[str] = ''
    """The profile key saying whether the endpoint serves the batch API."""
    _batch_providers: ClassVar[frozenset[str]] = frozenset()
    """The providers serving the batch API when the profile does not say."""

    def _batch(self) -> Any:
        if self._batch_backend is None:
            raise NotImplementedError(f'`{type(self).__name__}` does not support batch requests.')
        return import_module(f'{__package__}.{self._batch_backend}')

    @property
    def batch_max_requests(self) -> int | None:
        """The most requests in one batch; `None` when this endpoint has no batch API (the profile says, else the
        provider: only the API's own serves it)."""
        if self._batch_backend is None:
            return None
        default = self._provider.name in self._batch_providers
        if not cast(Mapping[str, Any], self.profile).get(self._batch_profile_key, default):
            return None
        return int(self._batch().MAX_BATCH_REQUESTS)

    @property
    def batch_max_bytes(self) -> int | None:
        """The most bytes of requests in one batch; `None` without a batch API."""
        return None if self.batch_max_requests is None else int(self._batch().MAX_BATCH_BYTES)

    def batch_request_size(self, request: EncodedBatchRequest) -> int:
        """The bytes `request` adds to a batch, in the provider's batch format."""
        if self._batch_backend is None:
            return super().batch_request_size(request)
        return int(self._batch().request_size(request))

    async def batch_encode(self, request: BatchRequest) -> EncodedBatchRequest:
        """`request` as this provider's batch API takes it: the body the model would send on its own.

        Raises:
            UserError: the model has no batch API, or the request has what a batch cannot honour.
        """
        return cast('EncodedBatchRequest', await self._batch().batch_encode(self, request))

    async def batch_create(self, requests: Sequence[EncodedBatchRequest]) -> Batch:
        """Submit `requests` as one batch job.

        Raises:
            UserError: the requests do not share a group, or are too many bytes.
            ModelHTTPError: the provider refused the batch.
        """
        return cast('Batch', await self._batch().batch_create(self, requests))

    async def batch_status(self, batch: Batch) -> Batch:
        """The job's current state."""
        return cast('Batch', await self._batch().batch_status(self, batch))

    async def batch_results(self, batch: Batch) -> list[BatchResult]:
        """The results of an ended job."""
        return cast('list[BatchResult]', await self._batch().batch_results(self, batch))

    async def batch_cancel(self, batch: Batch) -> Batch:
        """Ask the provider to cancel the job; its updated state."""
        return cast('Batch', await self._batch().batch_cancel(self, batch))

    def batch_decode(self, result: BatchResult, request: BatchRequest) -> ModelResponse:
        """The response of a succeeded result; an errored, expired or cancelled one raises its error."""
        return cast(ModelResponse, self._batch().batch_decode(self, result, request))

    def _batch_unlisted_status(self, batch: Batch) -> BatchResultStatus | None:
        unlisted = getattr(self._batch(), 'unlisted_status', None) if self._batch_backend else None
        return None if unlisted is None else cast('BatchResultStatus | None', unlisted(batch))

    def __repr__(self) -> str:
        return f'{type(self).__name__}(model_name={self._model_name!r}, provider={self._provider!r})'


async def _decoded(sse: _http.SSEStream, model_name: str) -> AsyncIterator[dict[str, Any]]:
    """The JSON object of each event (keep-alive comments, empty events and `[DONE]` skipped)."""
    async with aclosing(sse.events()) as events:
        async for event in events:
            if not event.data or event.data == '[DONE]':
                continue
            try:
                data = pydantic_core.from_json(event.data)
            except ValueError as e:
                raise UnexpectedModelBehavior(f'Invalid event from model {model_name!r}', event.data) from e
            if not isinstance(data, dict):
                raise UnexpectedModelBehavior(f'Invalid event from model {model_name!r}', event.data)
            yield data

"""OpenAI's Chat Completions API, and every server that speaks it: `OpenAIChatModel`; the Responses API:
`OpenAIResponsesModel`.

Requests go over plain httpx through the provider's client (`edgewise.agent.providers.openai`); no OpenAI SDK
is needed. `OpenAIChatModel('gpt-4o')` reads `OPENAI_API_KEY`; `OpenAIChatModel('llama3.2', provider='ollama')`
or `OpenAIChatModel('my-model', provider=OpenAIProvider(base_url='http://localhost:8000/v1'))` reach other
servers.
"""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import AsyncIterator, Mapping
from contextlib import aclosing, asynccontextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, cast

import pydantic_core
from typing_extensions import deprecated

from ..exceptions import ModelAPIError, UnexpectedModelBehavior
from ..messages import (
    ModelMessage,
    ModelResponse,
    ModelResponseStreamEvent,
    PartStartEvent,
    ThinkingPart,
)
from ..profiles import DEFAULT_PROFILE, ModelProfile, ModelProfileSpec
from ..profiles.openai import OpenAIModelProfile
from ..providers import Provider, infer_provider
from ..settings import ModelSettings, merge_model_settings
from . import _http
from . import _openai_chat as _chat
from ._mapping import EventStreamedResponse
from ._model import Model, check_allow_model_requests
from ._openai_responses_mapping import (
    OpenAIResponsesModelSettings,
    OpenAIResponsesStreamedResponse,
    responses_model_response,
    responses_request_body,
)
from ._provider_model import ProviderModel
from ._request_parameters import ModelRequestParameters
from ._sse import ServerSentEvent
from ._streamed_response import StreamedResponse

if TYPE_CHECKING:
    from ..tools import RunContext

__all__ = (
    'OpenAIChatModel',
    'OpenAIChatModelSettings',
    'OpenAIModel',
    'OpenAIModelSettings',
    'OpenAIModelName',
    'OpenAIResponsesModel',
    'OpenAIResponsesModelSettings',
)

OpenAIModelName = str
"""The name of an OpenAI model (`'gpt-4o'`, `'o3-mini'`, ...), or of a model on a compatible server."""


class OpenAIChatModelSettings(ModelSettings, total=False):
    """Settings of a Chat Completions request: the common ones, and OpenAI's own (all `openai_`-prefixed)."""

    openai_reasoning_effort: Literal['none', 'minimal', 'low', 'medium', 'high', 'xhigh']
    """How hard a reasoning model thinks (`reasoning_effort`)."""
    openai_logprobs: bool
    """Return the log probabilities of the output tokens (in `ModelResponse.provider_details['logprobs']`)."""
    openai_top_logprobs: int
    """How many most likely tokens to return with each token's log probability."""
    openai_store: bool | None
    """Whether OpenAI stores the completion."""
    openai_user: str
    """An id of the end user, for OpenAI's abuse monitoring."""
    openai_service_tier: Literal['auto', 'default', 'flex', 'priority']
    """The service tier of the request."""
    openai_prediction: dict[str, Any]
    """A predicted output, for predictive outputs."""
    openai_prompt_cache_key: str
    """A key grouping requests that share a prompt prefix, for OpenAI's prompt cache."""
    openai_prompt_cache_retention: Literal['in_memory', '24h']
    """How long the prompt cache keeps a prefix."""
    openai_continuous_usage_stats: bool
    """Ask for cumulative usage in every streamed chunk (servers such as vLLM); the last one counts."""


@deprecated('Use `OpenAIChatModelSettings` instead.')
class OpenAIModelSettings(OpenAIChatModelSettings, total=False):
    """Deprecated alias of `OpenAIChatModelSettings`."""


class OpenAIChatModel(Model):
    """A model behind the Chat Completions API (`POST {base_url}/chat/completions`), streamed or not."""

    def __init__(
        self,
        model_name: OpenAIModelName,
        *,
        provider: str | Provider[Any] = 'openai',
        profile: ModelProfileSpec | None = None,
        settings: ModelSettings | None = None,
    ) -> None:
        """Configure the model.

        Args:
            model_name: The model's name, as the server knows it.
            provider: The provider or its name (`'openai'`, `'ollama'`, `'groq'`, ...).
            profile: The model's profile (or a function of the name giving it); the provider's by default.
            settings: Default settings of this model's requests.
        """
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
        """The model's profile: the one given, else the provider's for this model name."""
        if self._profile is None:
            spec = self._profile_spec
            if spec is None:
                spec = self._provider.model_profile
            found = spec(self._model_name) if callable(spec) else spec
            self._profile = found or DEFAULT_PROFILE
        return self._profile

    def customize_request_parameters(self, parameters: ModelRequestParameters) -> ModelRequestParameters:
        """Tool and output schemas rewritten by the profile's JSON-schema transformer, if it has one."""
        transformer = self.profile.json_schema_transformer
        if transformer is None:
            return parameters

        def tool(t: Any) -> Any:
            walker = transformer(t.parameters_json_schema, strict=t.strict)
            schema = walker.walk()
            strict = walker.is_strict_compatible if t.strict is None else t.strict
            return dataclasses.replace(t, parameters_json_schema=schema, strict=strict)

        output_object = parameters.output_object
        if output_object is not None:
            walker = transformer(output_object.json_schema, strict=output_object.strict)
            schema = walker.walk()
            strict = walker.is_strict_compatible if output_object.strict is None else output_object.strict
            output_object = dataclasses.replace(output_object, json_schema=schema, strict=strict)
        return dataclasses.replace(
            parameters,
            function_tools=[tool(t) for t in parameters.function_tools],
            output_tools=[tool(t) for t in parameters.output_tools],
            output_object=output_object,
        )

    def _call(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        params: ModelRequestParameters,
        *,
        stream: bool,
    ) -> _http.HTTPCall:
        check_allow_model_requests()
        settings = cast(Mapping[str, Any], merge_model_settings(self._settings, model_settings) or {})
        profile = self.profile
        mapped = _chat.map_messages(
            messages, OpenAIModelProfile.from_profile(profile), system=self.system, model_name=self._model_name
        )
        body = _chat.build_body(
            model_name=self._model_name, messages=mapped, settings=settings, params=params, profile=profile,
            stream=stream,
        )  # fmt: skip
        provider = self._provider
        headers = provider.request_headers()
        if stream:
            headers['accept'] = 'text/event-stream'
        headers.update(settings.get('extra_headers') or {})
        return _http.HTTPCall(
            client=provider.client,
            url=f'{provider.base_url}/chat/completions',
            body=body,
            headers=headers,
            timeout=settings.get('timeout'),
            model_name=self._model_name,
            system=self.system,
            max_retries=provider.max_retries,
            error_key='error',
            endpoint_name='chat completions',
        )

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        """Send the conversation and return the model's response.

        Raises:
            ModelHTTPError: the server answered with a status of 400 or more (after retries).
            ModelAPIError: the server could not be reached or timed out (after retries).
            UnexpectedModelBehavior: the answer is not a chat completion.
        """
        call = self._call(messages, model_settings, model_request_parameters, stream=False)

        def parse(data: Any) -> ModelResponse:
            return _chat.parse_response(
                data, profile=self.profile, system=self.system, model_name=self._model_name,
                provider_name=self._provider.name,
            )  # fmt: skip

        return await _http.post_json(call, parse)

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
            ModelHTTPError: the server answered with a status of 400 or more (after retries).
            ModelAPIError: the server could not be reached, timed out, or the stream broke.
        """
        call = self._call(messages, model_settings, model_request_parameters, stream=True)
        settings = cast(Mapping[str, Any], merge_model_settings(self._settings, model_settings) or {})
        async with _http.stream_sse(call) as sse:
            streamed = OpenAIStreamedResponse(
                model_request_parameters,
                sse=sse,
                model_name=self._model_name,
                profile=self.profile,
                provider_name=self._provider.name,
                continuous_usage=bool(settings.get('openai_continuous_usage_stats')),
            )
            try:
                yield streamed
            finally:
                sse.record(streamed.get())

    def __repr__(self) -> str:
        return f'{type(self).__name__}(model_name={self._model_name!r}, provider={self._provider!r})'


@deprecated('Use `OpenAIChatModel` instead.')
class OpenAIModel(OpenAIChatModel):
    """Deprecated alias of `OpenAIChatModel`."""


class OpenAIResponsesModel(ProviderModel):
    """A model behind OpenAI's Responses API (`POST {base_url}/responses`), streamed or not."""

    _default_provider = 'openai'
    _endpoint_name = 'responses'
    _error_key = 'error'

    def __init__(
        self,
        model_name: OpenAIModelName,
        *,
        provider: str | Provider[Any] = 'openai',
        profile: ModelProfileSpec | None = None,
        settings: ModelSettings | None = None,
    ) -> None:
        """Configure the model.

        Args:
            model_name: The model's name.
            provider: The provider or its name (`'openai'`, or an `OpenAIProvider` for another server).
            profile: The model's profile (or a function of the name giving it); the provider's by default.
            settings: Default settings of this model's requests (`OpenAIResponsesModelSettings`).
        """
        super().__init__(model_name, provider=provider, profile=profile, settings=settings)

    def _url(self, *, stream: bool) -> str:
        return f'{self._provider.base_url}/responses'

    def _body(
        self, messages: list[ModelMessage], settings: Any, params: ModelRequestParameters, *, stream: bool
    ) -> dict[str, Any]:
        return responses_request_body(
            self._model_name, messages, settings, params, self.profile, stream=stream,
            provider_name=self._provider.name,
        )  # fmt: skip

    def _parse(self, data: Any) -> ModelResponse:
        return responses_model_response(data, provider_name=self._provider.name)

    def _streamed(self, params: ModelRequestParameters, events: AsyncIterator[dict[str, Any]]) -> EventStreamedResponse:
        return OpenAIResponsesStreamedResponse(
            params, events, model_name=self._model_name, provider_name=self._provider.name
        )


class OpenAIStreamedResponse(StreamedResponse):
    """A streamed Chat Completions response: its chunks turned into part events as they arrive."""

    def __init__(
        self,
        model_request_parameters: ModelRequestParameters,
        *,
        sse: _http.SSEStream,
        model_name: str,
        profile: ModelProfile,
        provider_name: str,
        continuous_usage: bool = False,
    ) -> None:
        super().__init__(model_request_parameters)
        self._sse = sse
        self._model_name = model_name
        self._profile = OpenAIModelProfile.from_profile(profile)
        self._provider_name = provider_name
        self._continuous_usage = continuous_usage
        self.provider_details: dict[str, Any] | None = None
        self._thinking_ids: dict[int, str] = {}
        self._segment = 0  # bumped at each <think> tag: text and thinking alternate in new parts
        self._in_tags = False
        self._saw_text = False
        self._refusal: list[str] = []

    @property
    def model_name(self) -> str:
        """The name of the model that answers (as the server reports it)."""
        return self._model_name

    @property
    def provider_name(self) -> str:
        """The provider's name."""
        return self._provider_name

    async def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:
        async with aclosing(self._sse.events()) as events:
            async for event in events:
                for out in self._event(event):
                    yield out
        if self._refusal:
            self.provider_details = {**(self.provider_details or {}), 'refusal': ''.join(self._refusal)}

    def _event(self, event: ServerSentEvent) -> list[ModelResponseStreamEvent]:
        if event.data == '[DONE]':
            return []
        try:
            chunk = pydantic_core.from_json(event.data)
        except ValueError as e:
            raise UnexpectedModelBehavior(f'Invalid chunk from model {self._model_name!r}', event.data) from e
        if not isinstance(chunk, dict):
            raise UnexpectedModelBehavior(f'Invalid chunk from model {self._model_name!r}', event.data)
        if (error := chunk.get('error')) is not None:
            message = error.get('message') if isinstance(error, dict) else error
            raise ModelAPIError(self._model_name, f'Error while streaming: {message}')
        return self._chunk(chunk)

    def _chunk(self, chunk: dict[str, Any]) -> list[ModelResponseStreamEvent]:
        if usage := chunk.get('usage'):
            mapped = _chat.map_usage(usage)
            self._usage = mapped if self._continuous_usage else self._usage + mapped
        if chunk.get('id'):
            self.provider_response_id = chunk['id']
        if chunk.get('model'):
            self._model_name = chunk['model']
        if self.provider_details is None and (created := _chat.timestamp_of(chunk.get('created'))) is not None:
            self.provider_details = {'timestamp': created}
        choices = chunk.get('choices')
        if not choices:
            return []
        choice = choices[0]
        delta = choice.get('delta')
        if delta is None:
            return []
        if refusal := delta.get('refusal'):
            self._refusal.append(refusal)
            self.finish_reason = 'content_filter'
            return []
        if (raw_finish := choice.get('finish_reason')) and not self._refusal:
            self.finish_reason = _chat.FINISH_REASONS.get(raw_finish)
            self.provider_details = {**(self.provider_details or {}), 'finish_reason': raw_finish}
        events: list[ModelResponseStreamEvent] = []
        manager = self._parts_manager
        custom = self._profile.openai_chat_thinking_field
        for name in (custom, *_chat.THINKING_FIELDS):
            if name and isinstance(reasoning := delta.get(name), str) and reasoning:
                event = manager.thinking_delta(('field', name), reasoning)
                if isinstance(event, PartStartEvent):
                    self._start_thinking(event, name)
                if event is not None:
                    events.append(event)
                break
        if content := delta.get('content'):
            events.extend(self._text(content))
        for call in delta.get('tool_calls') or ():
            function = call.get('function') or {}
            event = manager.tool_call_delta(
                ('tool', call.get('index', 0)), function.get('name'), function.get('arguments'), call.get('id')
            )
            if event is not None:
                events.append(event)
        return events

    def _start_thinking(self, event: PartStartEvent, thinking_id: str) -> None:
        part = event.part
        assert isinstance(part, ThinkingPart)
        part.id, part.provider_name = thinking_id, self._provider_name
        self._thinking_ids[event.index] = thinking_id

    def _text(self, content: str) -> list[ModelResponseStreamEvent]:
        events: list[ModelResponseStreamEvent] = []
        start_tag, end_tag = self._profile.thinking_tags
        manager = self._parts_manager
        while content:
            tag = end_tag if self._in_tags else start_tag
            piece, found, content = content.partition(tag)
            if self._in_tags:
                event = manager.thinking_delta(('tags', self._segment), piece)
                if isinstance(event, PartStartEvent):
                    self._start_thinking(event, 'content')
            elif self._profile.ignore_streamed_leading_whitespace and not self._saw_text and not piece.strip():
                event = None
            else:
                self._saw_text = True
                event = manager.text_delta(('content', self._segment), piece)
            if event is not None:
                events.append(event)
            if found:
                self._in_tags = not self._in_tags
                self._segment += 1
        return events

    def get(self) -> ModelResponse:
        """The response so far, with the ids of its thinking parts and the provider's details."""
        response = super().get()
        for index, thinking_id in self._thinking_ids.items():
            part = response.parts[index]
            if isinstance(part, ThinkingPart):
                part.id, part.provider_name = thinking_id, self._provider_name
        response.provider_details = dict(self.provider_details) if self.provider_details else None
        return response

    @property
    def timestamp(self) -> datetime:
        """When the response started."""
        return self._timestamp

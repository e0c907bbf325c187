"""OpenAI's Chat Completions API, and every server that speaks it: `OpenAIChatModel`; the Responses API:
`OpenAIResponsesModel`.

Requests go over plain httpx through the provider's client (`edgewise.agent.providers.openai`); no OpenAI SDK
is needed. `OpenAIChatModel('gpt-4o')` reads `OPENAI_API_KEY`; `OpenAIChatModel('llama3.2', provider='ollama')`
or `OpenAIChatModel('my-model', provider=OpenAIProvider(base_url='http://localhost:8000/v1'))` reach other
servers.
"""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import aclosing, asynccontextmanager
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, ClassVar, Literal, cast

import pydantic_core
from typing_extensions import deprecated

from ..exceptions import UnexpectedModelBehavior
from ..messages import (
    FileUrl,
    ModelMessage,
    ModelResponse,
    ModelResponseStreamEvent,
    PartStartEvent,
    TextPart,
    ThinkingPart,
)
from ..native_tools import AbstractNativeTool, WebSearchTool
from ..profiles import DEFAULT_THINKING_TAGS, ModelProfile, ModelProfileSpec, resolve_profile
from ..profiles.openai import OpenAIModelProfile, validate_openai_profile
from ..providers import Provider
from ..settings import ModelSettings, merge_model_settings
from . import _http
from . import _openai_cache as _cache
from . import _openai_chat as _chat
from ._citations import openai_chat_citations
from ._compaction_mapping import openai_compaction_part
from ._error_categories import openai_http_error, openai_stream_error
from ._history_digest import HistoryHasher, continuation_digest, history_hasher, resolve_previous_response
from ._mapping import EventStreamedResponse, transformed_schema, transformed_tool
from ._openai_cache import OpenAIPromptCacheOptions
from ._openai_conversation import check_one_continuation, resolve_conversation
from ._openai_native_tools import MCP_SERVER_TOOL_CONNECTOR_URI_SCHEME, RESPONSES_NATIVE_TOOLS
from ._openai_responses_mapping import (
    OpenAIResponsesModelSettings,
    OpenAIResponsesStreamedResponse,
    responses_model_response,
    responses_request_body,
    responses_usage,
)
from ._provider_model import ProviderModel
from ._request_context import ModelRequestContext
from ._request_parameters import ModelRequestParameters, request_instructions
from ._sse import ServerSentEvent
from ._streamed_response import StreamedResponse

if TYPE_CHECKING:
    from ._model import RunContext
    from ._openai_annotations import (
        chat_annotation_ta,
        chat_annotations_ta,
        responses_output_text_annotation_ta,
        responses_output_text_annotations_ta,
    )

__all__ = (
    'DEPRECATED_OPENAI_MODELS',
    'MCP_SERVER_TOOL_CONNECTOR_URI_SCHEME',
    'OpenAIChatModel',
    'OpenAIChatModelSettings',
    'OpenAIModel',
    'OpenAIModelSettings',
    'OpenAIModelName',
    'OpenAIPromptCacheOptions',
    'OpenAIResponsesModel',
    'OpenAIResponsesModelSettings',
    'chat_annotation_ta',
    'chat_annotations_ta',
    'responses_output_text_annotation_ta',
    'responses_output_text_annotations_ta',
)

_ANNOTATION_ADAPTERS = frozenset(__all__[-4:])
"""pydantic-ai 2.68's validators of OpenAI's text annotations (`_openai_annotations`), loaded on first use."""

# Defined beside its request mapping; this module is its public home (and the one pydantic-ai names).
OpenAIResponsesModelSettings.__module__ = __name__
OpenAIPromptCacheOptions.__module__ = __name__

OpenAIModelName = str
"""The name of an OpenAI model (`'gpt-4o'`, `'o3-mini'`, ...), or of a model on a compatible server."""

DEPRECATED_OPENAI_MODELS: frozenset[str] = frozenset(
    {
        'chatgpt-4o-latest',
        'codex-mini-latest',
        'gpt-3.5-turbo-0613',
        'gpt-3.5-turbo-16k-0613',
        'gpt-4-0125-preview',
        'gpt-4-1106-preview',
        'gpt-4-turbo-preview',
        'gpt-4-32k',
        'gpt-4-32k-0314',
        'gpt-4-32k-0613',
        'gpt-4-vision-preview',
        'gpt-4o-audio-preview-2024-10-01',
        'gpt-5.1-mini',
        'o1-mini',
        'o1-mini-2024-09-12',
        'o1-preview',
        'o1-preview-2024-09-12',
    }
)
"""OpenAI model names that are retired or never existed, though OpenAI's SDK still lists them (as pydantic-ai 2.68)."""


class OpenAIChatModelSettings(ModelSettings, total=False):
    """Settings of a Chat Completions request: the common ones, and OpenAI's own (all `openai_`-prefixed)."""

    openai_reasoning_effort: Literal['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']
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
    """How long the prompt cache keeps a prefix (`prompt_cache_retention`); on GPT-5.6 and later a maximum, independent
    of `openai_prompt_cache_options`' `ttl`."""
    openai_prompt_cache_options: OpenAIPromptCacheOptions
    """The request-wide prompt cache options of GPT-5.6 and later models (`prompt_cache_options`): whether OpenAI
    places an implicit breakpoint, and the `ttl` of every breakpoint (`CachePoint.ttl` is ignored). Sent as given;
    Chat Completions rejects `ttl='12h'`."""
    openai_cache_instructions: bool
    """Put a prompt cache breakpoint after the instructions (or, without instructions, after the last leading system
    prompt), on models with `openai_supports_prompt_cache_breakpoints`; not with a `'user'` system prompt role, merged
    system messages or a dynamic system prompt. On the Responses API the instructions then go as the first input
    messages (the `instructions` field takes no breakpoint), except when `openai_previous_response_id` is set or the
    history holds a compaction item."""
    openai_continuous_usage_stats: bool
    """Ask for cumulative usage in every streamed chunk (servers such as vLLM); the last one counts."""


@deprecated('Use `OpenAIChatModelSettings` instead.')
class OpenAIModelSettings(OpenAIChatModelSettings, total=False):
    """Deprecated alias of `OpenAIChatModelSettings`."""


class _OpenAIModel(ProviderModel):
    """What OpenAI's two APIs share: how the prompt cache settings read (see `_openai_cache`)."""

    def resolve_cache_retention(self, model_settings: ModelSettings | None) -> timedelta | None:
        """How long the prompt cache keeps a prefix, as the request's settings ask: `openai_prompt_cache_options`
        and `openai_cache_instructions` on models with prompt cache breakpoints, `openai_prompt_cache_retention='24h'`
        on earlier ones, else the unified `cache` setting (see `Model.resolve_cache_retention`)."""
        merged = merge_model_settings(self.settings, model_settings) or {}
        decided, retention = _cache.cache_retention(merged, self.profile)
        return retention if decided else super().resolve_cache_retention(model_settings)

    def _caching_not_enabled(self, model_settings: ModelSettings | None) -> bool:
        # OpenAI caches prompts unasked too, so a request asking nothing about caching still caches.
        if self.profile.get('openai_supports_prompt_cache_breakpoints', False):
            return False
        return super()._caching_not_enabled(model_settings)


class OpenAIChatModel(_OpenAIModel):
    """A model behind the Chat Completions API (`POST {base_url}/chat/completions`), streamed or not."""

    _default_provider = 'openai'
    _streamed_response_class: ClassVar[type[OpenAIStreamedResponse] | None] = None
    """The streamed response a subclass reads its service's chunks with (`None`: `OpenAIStreamedResponse`)."""
    _endpoint_name = 'chat completions'
    _error_key = 'error'
    _http_error = staticmethod(openai_http_error)
    """How an error status becomes an error: of the category its error object's code, type or message names."""

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
        super().__init__(model_name, provider=provider, profile=profile, settings=settings)

    @property
    def profile(self) -> ModelProfile:
        """The model's profile: `DEFAULT_PROFILE`, the provider's for this model name (without the `'12h'` cache
        retention, which Chat Completions rejects) and `profile=` merged."""
        if self._profile is None:
            provider_profile = _cache.chat_profile(self._provider.model_profile(self._model_name))
            self._profile = resolve_profile(provider_profile, self._profile_spec)
        return self._profile

    def customize_request_parameters(self, parameters: ModelRequestParameters) -> ModelRequestParameters:
        """Tool and output schemas rewritten by the profile's JSON-schema transformer, if it has one."""
        transformer = self.profile.get('json_schema_transformer', None)
        if transformer is None:
            return parameters

        output_object = parameters.output_object
        if output_object is not None:
            schema, strict = transformed_schema(transformer, output_object.json_schema, output_object.strict)
            output_object = dataclasses.replace(output_object, json_schema=schema, strict=strict)
        return dataclasses.replace(
            parameters,
            function_tools=[transformed_tool(transformer, t) for t in parameters.function_tools],
            output_tools=[transformed_tool(transformer, t) for t in parameters.output_tools],
            output_object=output_object,
        )

    @classmethod
    def supported_native_tools(cls) -> frozenset[type[AbstractNativeTool]]:
        """Web search (as `web_search_options`), for the models whose profile allows it (`*-search-preview`)."""
        return frozenset[type[AbstractNativeTool]]({WebSearchTool})

    def _native_tools(self) -> frozenset[type[AbstractNativeTool]]:
        if not cast(OpenAIModelProfile, self.profile).get('openai_chat_supports_web_search', False):
            return frozenset()
        return super()._native_tools()

    def _needs_download(self, file: FileUrl) -> bool:
        # Chat Completions takes image URLs only: audio and documents are sent as data.
        return bool(file.force_download) or not _chat.takes_url(file)

    def _url(self, *, stream: bool) -> str:
        return self._provider.endpoint_url('/chat/completions', self._model_name)

    def _body(
        self, messages: list[ModelMessage], settings: Any, params: ModelRequestParameters, *, stream: bool
    ) -> dict[str, Any]:
        profile = self.profile
        validate_openai_profile(profile)
        settings = _cache.unified_cache_settings(settings, profile)
        settings, params = self._chat_settings(settings, params)
        mapped = _chat.map_messages(
            messages, cast(OpenAIModelProfile, profile), system=self.system, model_name=self._model_name,
            instructions=request_instructions(messages, params), reasoning_detail=self._reasoning_detail,
            cache_instructions=bool(settings.get('openai_cache_instructions')),
            accepts=self.accepts_stateless_artifacts,
        )  # fmt: skip
        _cache.keep_implicit_cache(cast(dict[str, Any], settings), mapped)
        return _chat.build_body(
            model_name=self._model_name, messages=mapped, settings=settings, params=params, profile=profile,
            stream=stream,
        )  # fmt: skip

    def _chat_settings(
        self, settings: Mapping[str, Any], params: ModelRequestParameters
    ) -> tuple[Mapping[str, Any], ModelRequestParameters]:
        """The settings and parameters the body is built from: as given here; a server with settings of its own
        (Cerebras, Z.AI) turns them into Chat Completions fields."""
        return settings, params

    def _reasoning_detail(self, message: ModelResponse, part: ThinkingPart) -> dict[str, Any] | None:
        """The `reasoning_details` item to send a thinking part of `message` back as, for servers that take them;
        `None` here."""
        return None

    def _parse(self, data: Any) -> ModelResponse:
        return _chat.parse_response(
            data, profile=self.profile, system=self.system, model_name=self._model_name,
            provider_name=self._provider.name,
        )  # fmt: skip

    def _stream_response(
        self, params: ModelRequestParameters, sse: _http.SSEStream, settings: Mapping[str, Any]
    ) -> StreamedResponse:
        # Chat Completions chunks are read straight off the stream: their errors and `[DONE]` are handled there.
        return (self._streamed_response_class or OpenAIStreamedResponse)(
            params,
            sse=sse,
            model_name=self._model_name,
            profile=self.profile,
            provider_name=self._provider.name,
            continuous_usage=bool(settings.get('openai_continuous_usage_stats')),
        )


@deprecated('Use `OpenAIChatModel` instead.')
class OpenAIModel(OpenAIChatModel):
    """Deprecated alias of `OpenAIChatModel`."""


class OpenAIResponsesModel(_OpenAIModel):
    """A model behind OpenAI's Responses API (`POST {base_url}/responses`), streamed or not."""

    _default_provider = 'openai'
    _endpoint_name = 'responses'
    _error_key = 'error'
    supported_tool_deferral_modes = frozenset({'with_tool_search'})
    """A deferred tool goes out with `defer_loading: true`, next to the `tool_search` tool (OpenAI takes it only
    then)."""
    supported_tool_addition_modes = frozenset({'with_definitions'})
    """A tool revealed mid-run goes in an `additional_tools` input item where it was revealed, out of `tools` (OpenAI's
    own API: `OpenAIProvider`'s profile sets the mode; the OpenAI-compatible servers' profiles do not)."""

    _http_error = staticmethod(openai_http_error)
    """How an error status becomes an error: of the category its error object's code, type or message names."""
    _batch_backend = '_openai_batch'
    _batch_profile_key = 'openai_supports_batch_api'
    _batch_providers = frozenset({'openai'})

    def __init__(
        self,
        model_name: OpenAIModelName,
        *,
        provider: str | Provider[Any] = 'openai',
        profile: ModelProfileSpec | None = None,
        settings: ModelSettings | None = None,
        history_digest_key: bytes | None = None,
    ) -> None:
        """Configure the model.

        Args:
            model_name: The model's name.
            provider: The provider or its name (`'openai'`, or an `OpenAIProvider` for another server).
            profile: The model's profile (or a function of the name giving it); the provider's by default.
            settings: Default settings of this model's requests (`OpenAIResponsesModelSettings`).
            history_digest_key: A secret to make each response's `history_digest` an HMAC-SHA256 rather than a plain
                SHA-256, so that a stored history cannot be used to check guesses at content removed from it later.
                Every model continuing the same conversations needs the same key: a response whose digest was made
                with another key (or none) is not continued from; the whole history is sent instead.
        """
        super().__init__(model_name, provider=provider, profile=profile, settings=settings)
        self._history_digest_key = history_digest_key

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        """Send the conversation and return the model's response (see `ProviderModel.request`). Under
        `openai_previous_response_id`, only the messages after the stored response continued from are sent, and the
        response records its `history_digest`. An endpoint that streams only (`openai_responses_requires_streaming`)
        is asked for a stream, read to its end."""
        if cast(OpenAIModelProfile, self.profile).get('openai_responses_requires_streaming', False):
            async with self.request_stream(messages, model_settings, model_request_parameters) as streamed:
                async for _ in streamed:
                    pass
            return streamed.get()
        sent, settings, history = self._continuation(messages, model_settings, model_request_parameters)
        response = await super().request(sent, settings, model_request_parameters)
        if history is not None:
            response.history_digest = continuation_digest(history, response.parts)
        return response

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncIterator[StreamedResponse]:
        """Stream the model's response (see `ProviderModel.request_stream`), continuing a stored response as
        `request` does; the streamed response's `get()` carries the `history_digest`."""
        sent, settings, history = self._continuation(messages, model_settings, model_request_parameters)
        async with super().request_stream(sent, settings, model_request_parameters, run_context) as streamed:
            if isinstance(streamed, OpenAIResponsesStreamedResponse):
                streamed._history = history
            yield streamed

    def _continuation(
        self, messages: list[ModelMessage], model_settings: ModelSettings | None, params: ModelRequestParameters
    ) -> tuple[list[ModelMessage], ModelSettings | None, HistoryHasher | None]:
        """The messages to send, the settings naming the response they continue, and the hash of `messages` for the
        response's digest (`None` when no `openai_previous_response_id` is set: nothing is recorded)."""
        merged = self._merged_settings(model_settings)
        check_one_continuation(merged)
        if (conversation := merged.get('openai_conversation_id')) is not None:
            conversation_id, sent = resolve_conversation(conversation, messages, ours=self.accepts_server_state)
            resolved_conversation = {**(model_settings or {}), 'openai_conversation_id': conversation_id or 'auto'}
            return sent, cast(ModelSettings, resolved_conversation), None
        setting = merged.get('openai_previous_response_id')
        if setting is None:
            return messages, model_settings, None
        response_id, sent = self._continued(setting, messages)
        resolved: dict[str, Any] = {**(model_settings or {}), 'openai_previous_response_id': response_id or 'auto'}
        if response_id is not None and len(sent) < len(messages):
            # The response continued from is not sent, but prompt cache diagnostics still compare with it.
            resolved[_cache.CONTINUED_RESPONSE_KEY] = response_id
        settings = cast(ModelSettings, resolved)
        prompted = params.output_mode == 'prompted' and self.profile.get('supports_json_object_output', False)
        return sent, settings, history_hasher(messages, self._history_digest_key, with_instructions=prompted)

    def _continued(
        self, setting: str, messages: list[ModelMessage], *, allow_empty: bool = False
    ) -> tuple[str | None, list[ModelMessage]]:
        return resolve_previous_response(
            setting, messages, ours=self.accepts_server_state, provider_name=self._provider.name,
            key=self._history_digest_key, allow_empty=allow_empty,
        )  # fmt: skip

    @classmethod
    def supported_native_tools(cls) -> frozenset[type[AbstractNativeTool]]:
        """Web search, code interpreter, file search, MCP servers and image generation (OpenAI's hosted tools)."""
        return RESPONSES_NATIVE_TOOLS

    def _url(self, *, stream: bool) -> str:
        return self._provider.endpoint_url('/responses', self._model_name)

    def _body(
        self, messages: list[ModelMessage], settings: Any, params: ModelRequestParameters, *, stream: bool
    ) -> dict[str, Any]:
        body = responses_request_body(
            self._model_name, messages, settings, params, self.profile, stream=stream,
            provider_name=self._provider.name, accepts=self.accepts_stateless_artifacts,
            ours=self.accepts_server_state, tool_additions=self.tool_addition_mode == 'with_definitions',
        )  # fmt: skip
        if cast(OpenAIModelProfile, self.profile).get('openai_responses_requires_store_false', False):
            body['store'] = False
        return body

    def _parse(self, data: Any) -> ModelResponse:
        return responses_model_response(data, provider_name=self._provider.name)

    async def compact_messages(
        self, request_context: ModelRequestContext, *, instructions: str | None = None
    ) -> ModelResponse:
        """Compact the context's history through `POST {base_url}/responses/compact`: a response holding one
        `CompactionPart` (OpenAI's encrypted summary) to send in place of that history.

        The history sent is the one from its latest compaction on, with the run's system prompt (so the new
        compaction carries it on: the part is marked so). `instructions` replace the request's instructions.

        Raises:
            ModelHTTPError: the API answered with a status of 400 or more (after retries).
            UnexpectedModelBehavior: the answer's last output item is not a compaction.
        """
        settings, params = self.prepare_request(
            request_context.model_settings, request_context.model_request_parameters
        )
        messages = request_context.messages
        setting = self._merged_settings(settings).get('openai_previous_response_id')
        if setting is not None:  # a compaction may continue a stored response without a message after it
            response_id, messages = self._continued(setting, messages, allow_empty=True)
            settings = cast(ModelSettings, {**(settings or {}), 'openai_previous_response_id': response_id or 'auto'})
        messages = await self._with_files(messages)
        call = self._call(messages, settings, params, stream=False)
        merged = self._merged_settings(settings)
        typed = cast(OpenAIResponsesModelSettings, merged)
        full = responses_request_body(
            self._model_name, messages, typed, params, self.profile, provider_name=self._provider.name,
            keeps_system=False, accepts=self.accepts_stateless_artifacts, ours=self.accepts_server_state,
            tool_additions=self.tool_addition_mode == 'with_definitions',
        )  # fmt: skip
        body: dict[str, Any] = {
            k: full[k] for k in ('model', 'input', 'instructions', 'previous_response_id') if k in full
        }
        if instructions is not None:
            body['instructions'] = instructions
        call = dataclasses.replace(
            call, url=self._provider.endpoint_url('/responses/compact', self._model_name), body=body
        )
        provider_name = self._provider.name

        def parse(data: Any) -> ModelResponse:
            output = data.get('output') or []
            if not output or output[-1].get('type') != 'compaction':
                kind = output[-1].get('type') if output else None
                raise UnexpectedModelBehavior(
                    f'Model {self._model_name!r}: the last output item of a compaction is not a compaction '
                    f'(got {kind!r})',
                    body=str(data),
                )
            return ModelResponse(
                parts=[openai_compaction_part(output[-1], provider_name, planted=True)],
                usage=responses_usage(data.get('usage')),
                model_name=self._model_name,
                provider_name=provider_name,
                provider_url=self._provider.base_url,
                provider_response_id=data.get('id'),
                # A compaction's id cannot continue a conversation (`previous_response_id`).
                provider_details={'compaction': True},
            )

        return await _http.post_json(call, parse)

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
        self._profile = cast(OpenAIModelProfile, profile)
        self._provider_name = provider_name
        self._continuous_usage = continuous_usage
        self.provider_details: dict[str, Any] | None = None
        self._thinking_ids: dict[int, str] = {}
        self._segment = 0  # bumped at each <think> tag: text and thinking alternate in new parts
        self._in_tags = False
        self._held = ''  # the end of the content so far, when it may be the start of a split tag
        self._saw_text = False
        self._refusal: list[str] = []
        self._raw_content: list[str] = []  # the content as sent: citations' offsets count into it
        self._annotations: list[Any] = []

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
        if self._held:  # the stream ended on what began like a tag: it was text (or thinking) after all
            held, self._held = self._held, ''
            if (last := self._piece(held)) is not None:
                yield last
        if self._refusal:
            self.provider_details = {**(self.provider_details or {}), 'refusal': ''.join(self._refusal)}
        for out in self._citations():
            yield out

    def _citations(self) -> Iterator[ModelResponseStreamEvent]:
        """The citations of the streamed annotations, once the text is whole: only on a single text part that is
        still the content as sent (not split by thinking, nor stripped)."""
        if not self._annotations:
            return
        manager = self._parts_manager
        texts = [part for part in manager.get_parts() if isinstance(part, TextPart)]
        if len(texts) != 1 or manager.get_part_by_vendor_id(('content', 0)) != texts[0]:
            return
        text = texts[0].content
        if text == ''.join(self._raw_content) and (cited := openai_chat_citations(self._annotations, text)) is not None:
            citations, raw = cited
            yield from manager.handle_text_delta(
                vendor_part_id=('content', 0), content='', provider_name=self._provider_name,
                provider_details={'citations': raw}, citations=citations,
            )  # fmt: skip

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
            raise openai_stream_error(self._model_name, f'Error while streaming: {message}', error)
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
        custom = self._profile.get('openai_chat_thinking_field', None)
        for name in (custom, *_chat.THINKING_FIELDS):
            if name and isinstance(reasoning := delta.get(name), str) and reasoning:
                event = manager.thinking_delta(('field', name), reasoning)
                if isinstance(event, PartStartEvent):
                    self._start_thinking(event, name)
                if event is not None:
                    events.append(event)
                break
        if annotations := delta.get('annotations'):
            self._annotations.extend(annotations)
        if content := delta.get('content'):
            self._raw_content.append(content)
            events.extend(self._text(content))
        for call in delta.get('tool_calls') or ():
            function = call.get('function') or {}
            name, arguments, call_id = function.get('name'), function.get('arguments'), call.get('id')
            vendor_id = ('tool', call.get('index', 0))
            if (details := _chat.tool_call_details(call)) is not None:
                call_event = manager.handle_tool_call_delta(
                    vendor_part_id=vendor_id, tool_name=name, args=arguments, tool_call_id=call_id,
                    provider_name=self._provider_name, provider_details=details,
                )  # fmt: skip
            else:
                call_event = manager.tool_call_delta(vendor_id, name, arguments, call_id)
            if call_event is not None:
                events.append(call_event)
        return events

    def _start_thinking(self, event: PartStartEvent, thinking_id: str) -> None:
        part = event.part
        assert isinstance(part, ThinkingPart)
        part.id, part.provider_name = thinking_id, self._provider_name
        self._thinking_ids[event.index] = thinking_id

    def _text(self, content: str) -> list[ModelResponseStreamEvent]:
        events: list[ModelResponseStreamEvent] = []
        start_tag, end_tag = self._profile.get('thinking_tags', DEFAULT_THINKING_TAGS)
        content = self._held + content
        self._held = ''
        while content:
            tag = end_tag if self._in_tags else start_tag
            piece, found, content = content.partition(tag)
            if not found and (kept := _tag_start_at_end(piece, tag)):
                # The chunk ends with what may be the start of a tag split across chunks: wait for the next.
                piece, self._held = piece[:-kept], piece[-kept:]
                if not piece:
                    break
            if (event := self._piece(piece)) is not None:
                events.append(event)
            if found:
                self._in_tags = not self._in_tags
                self._segment += 1
        return events

    def _piece(self, piece: str) -> ModelResponseStreamEvent | None:
        """The event of a piece of content between tags: thinking inside them, text outside."""
        manager = self._parts_manager
        if self._in_tags:
            event = manager.thinking_delta(('tags', self._segment), piece)
            if isinstance(event, PartStartEvent):
                self._start_thinking(event, 'content')
            return event
        if self._profile.get('ignore_streamed_leading_whitespace', False) and not self._saw_text and not piece.strip():
            return None
        self._saw_text = True
        return manager.text_delta(('content', self._segment), piece)

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


def _tag_start_at_end(text: str, tag: str) -> int:
    """The length of the longest end of `text` that begins `tag` (without being all of it), or 0."""
    if text.find(tag[0], -(len(tag) - 1)) < 0:  # the usual case, answered in C
        return 0
    for length in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:length]):
            return length
    return 0


def __getattr__(name: str) -> Any:
    # pydantic-ai's import path of `OpenAICompaction`, a capability: its code lives on the capabilities floor, above the
    # models, and is imported on first use.
    if name == 'OpenAICompaction':
        from importlib import import_module

        return getattr(import_module('edgewise.agent.capabilities.compaction'), name)
    if name in _ANNOTATION_ADAPTERS:
        # Built on first use: a model's requests do not need them (the citations are mapped without validation).
        from . import _openai_annotations

        value = getattr(_openai_annotations, name)
        globals()[name] = value
        return value
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')

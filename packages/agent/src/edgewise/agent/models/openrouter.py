"""OpenRouter: `OpenRouterModel`, the Chat Completions API with OpenRouter's routing, reasoning and web search.

Over `OpenAIChatModel`'s wire format (plain httpx, no SDK), OpenRouter adds request fields of its own, set through
`OpenRouterModelSettings` (`models`, `provider`, `preset`, `transforms`, `reasoning`, `usage`), its web search
plugin (`plugins: [{'id': 'web'}]`, for a `WebSearchTool`), structured reasoning (`reasoning_details`, read as
thinking parts and sent back as they came), and details of the answer: the provider that served it, the
downstream finish reason and the cost.
"""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Literal, cast

from typing_extensions import TypedDict

from ..exceptions import ModelHTTPError
from ..messages import (
    FinishReason,
    ModelMessage,
    ModelResponse,
    ModelResponseStreamEvent,
    ThinkingPart,
)
from ..native_tools import AbstractNativeTool, AdvisorTool, WebSearchTool, provider_setting
from ..profiles import ModelProfileSpec
from ..profiles.openai import OpenAIModelProfile
from ..providers import Provider
from ..settings import ModelSettings, ThinkingEffort
from . import _http
from . import _openai_chat as _chat
from ._error_categories import http_status_category
from ._provider_model import ProviderModel
from ._reasoning_details import ReasoningDetailsStreamedResponse, sent_back_detail, with_reasoning_details
from ._request_parameters import ModelRequestParameters, request_instructions
from ._streamed_response import StreamedResponse
from .openai import OpenAIChatModel

__all__ = (
    'OpenRouterModel',
    'OpenRouterModelSettings',
    'OpenRouterProviderConfig',
    'OpenRouterProviderName',
    'OpenRouterReasoning',
    'OpenRouterStreamedResponse',
    'OpenRouterTransforms',
    'OpenRouterUsageConfig',
)

OpenRouterProviderName = str
"""The slug of a provider OpenRouter routes to (`'anthropic'`, `'openai'`, `'together'`, ...)."""

OpenRouterTransforms = Literal['middle-out']
"""A transform of the prompt for models whose context it overflows (`'middle-out'` cuts from the middle)."""

_EFFORT_OF_THINKING: dict[bool | ThinkingEffort, Literal['none', 'low', 'medium', 'high', 'max']] = {
    True: 'medium',
    False: 'none',
    'minimal': 'low',
    'low': 'low',
    'medium': 'medium',
    'high': 'high',
    'xhigh': 'high',
    'max': 'max',  # OpenRouter lowers it to the most each routed model takes
}
_FINISH_REASONS: dict[str, FinishReason] = {**_chat.FINISH_REASONS, 'error': 'error'}


class _MaxPrice(TypedDict, total=False):
    prompt: int
    completion: int
    image: int
    audio: int
    request: int


class OpenRouterProviderConfig(TypedDict, total=False):
    """How OpenRouter picks the provider that serves a request (its `provider` object)."""

    order: list[OpenRouterProviderName]
    """Providers to try first, in this order."""
    allow_fallbacks: bool
    """Whether other providers may serve the request when those are unavailable."""
    require_parameters: bool
    """Only providers that take every parameter of the request."""
    data_collection: Literal['allow', 'deny']
    """Whether providers that may store data are allowed."""
    zdr: bool
    """Only endpoints with zero data retention."""
    only: list[OpenRouterProviderName]
    """The providers allowed."""
    ignore: list[str]
    """Providers never to use."""
    quantizations: list[Literal['int4', 'int8', 'fp4', 'fp6', 'fp8', 'fp16', 'bf16', 'fp32', 'unknown']]
    """The quantization levels allowed."""
    sort: Literal['price', 'throughput', 'latency']
    """What providers are ranked by."""
    max_price: _MaxPrice
    """The most the request may cost (USD per million tokens, per request)."""


class OpenRouterReasoning(TypedDict, total=False):
    """The reasoning of a request (OpenRouter's `reasoning` object): an effort or a token budget, not both."""

    effort: Literal['max', 'xhigh', 'high', 'medium', 'low', 'minimal', 'none']
    """How hard the model thinks (OpenAI's levels)."""
    max_tokens: int
    """How many tokens the model may think for (Anthropic's budget)."""
    exclude: bool
    """Think, but leave the reasoning out of the response."""
    enabled: bool
    """Think with the model's default effort."""


class OpenRouterUsageConfig(TypedDict, total=False):
    """What usage OpenRouter reports (its `usage` object)."""

    include: bool
    """Report the cost and the detailed token counts of the request."""


class OpenRouterModelSettings(ModelSettings, total=False):
    """Settings of an OpenRouter request: the common ones, OpenAI's Chat ones and OpenRouter's own (all
    `openrouter_`-prefixed)."""

    openrouter_models: list[str]
    """Models to fall back on, in order, when the model fails (`models`)."""
    openrouter_provider: OpenRouterProviderConfig
    """How the provider is chosen (`provider`)."""
    openrouter_preset: str
    """A preset configured on OpenRouter (`preset`)."""
    openrouter_transforms: list[OpenRouterTransforms]
    """Transforms of a prompt too long for the model (`transforms`)."""
    openrouter_reasoning: OpenRouterReasoning
    """The reasoning of the request (`reasoning`); without it, the unified `thinking` setting fills it in."""
    openrouter_usage: OpenRouterUsageConfig
    """What usage is reported (`usage`)."""


class OpenRouterModel(OpenAIChatModel):
    """A model reached through OpenRouter (`POST {base_url}/chat/completions`), streamed or not.

    `OpenRouterModel('anthropic/claude-sonnet-4.5')` reads `OPENROUTER_API_KEY`. A `WebSearchTool` turns on
    OpenRouter's web plugin, for any model.
    """

    _default_provider = 'openrouter'

    def __init__(
        self,
        model_name: str,
        *,
        provider: str | Provider[Any] = 'openrouter',
        profile: ModelProfileSpec | None = None,
        settings: ModelSettings | None = None,
    ) -> None:
        """Configure the model.

        Args:
            model_name: The model's name on OpenRouter (`'<vendor>/<model>'`).
            provider: The provider or its name (`'openrouter'`, or an `OpenRouterProvider` of your own).
            profile: The model's profile (or a function of the name giving it); the provider's by default.
            settings: Default settings of this model's requests (`OpenRouterModelSettings`).
        """
        super().__init__(model_name, provider=provider, profile=profile, settings=settings)

    @classmethod
    def supported_native_tools(cls) -> frozenset[type[AbstractNativeTool]]:
        """Web search, through OpenRouter's web plugin."""
        return frozenset[type[AbstractNativeTool]]({WebSearchTool, AdvisorTool})

    def _native_tools(self) -> frozenset[type[AbstractNativeTool]]:
        return ProviderModel._native_tools(self)  # the plugin serves every model, search models or not

    def _body(
        self, messages: list[ModelMessage], settings: Any, params: ModelRequestParameters, *, stream: bool
    ) -> dict[str, Any]:
        # No `prompt_cache_breakpoint` through OpenRouter (pydantic-ai 2.68 sends `cache_control` there): cache
        # points are dropped, as before.
        profile = cast(OpenAIModelProfile, {**self.profile, 'openai_supports_prompt_cache_breakpoints': False})
        mapped = _chat.map_messages(
            messages, profile, system=self.system, model_name=self._model_name,
            instructions=request_instructions(messages, params), reasoning_detail=self._reasoning_detail,
            accepts=self.accepts_stateless_artifacts,
        )  # fmt: skip
        # Thinking goes in `reasoning` (not `reasoning_effort`), web search in the plugin (not `web_search_options`).
        plain = dataclasses.replace(params, thinking=None, native_tools=[])
        body = _chat.build_body(
            model_name=self._model_name, messages=mapped, settings=settings, params=plain, profile=self.profile,
            stream=stream,
        )  # fmt: skip
        body.update(openrouter_fields(settings, params, body))
        return body

    def _reasoning_detail(self, message: ModelResponse, part: ThinkingPart) -> dict[str, Any] | None:
        return sent_back_detail(part, self.accepts_stateless_artifacts(message, part))

    def _parse(self, data: Any) -> ModelResponse:
        if isinstance(data, dict) and isinstance(error := data.get('error'), dict):
            # An upstream failure inside a 200 answer: its `code` is the status the error has, and gives its category.
            status_code = error.get('code') or 500
            message = error.get('message')
            raise ModelHTTPError.for_category(
                http_status_category(status_code, message),
                status_code=status_code,
                model_name=data.get('model') or self._model_name,
                body=message,
            )
        response = with_reasoning_details(super()._parse(data), data, self.system)
        choice = data['choices'][0]
        if choice.get('finish_reason') == 'error':
            response.finish_reason = 'error'
        response.provider_details = {**(response.provider_details or {}), **openrouter_details(data)}
        response.usage.cache_write_tokens = _cache_write_tokens(data.get('usage'))
        return response

    def _stream_response(
        self, params: ModelRequestParameters, sse: _http.SSEStream, settings: Mapping[str, Any]
    ) -> StreamedResponse:
        return OpenRouterStreamedResponse(
            params, sse=sse, model_name=self._model_name, profile=self.profile, provider_name=self._provider.name
        )


def openrouter_fields(
    settings: Mapping[str, Any], params: ModelRequestParameters, body: Mapping[str, Any]
) -> dict[str, Any]:
    """OpenRouter's own fields of a request body: its settings, unified thinking as `reasoning`, the web
    plugin of a `WebSearchTool` (added to the plugins the body already has) and the advisor tool of an
    `AdvisorTool` (added to the body's tools)."""
    fields: dict[str, Any] = {}
    for key in ('models', 'provider', 'preset', 'transforms', 'usage'):
        if value := settings.get(f'openrouter_{key}'):
            fields[key] = value
    reasoning = settings.get('openrouter_reasoning')
    if 'openrouter_reasoning' not in settings and params.thinking is not None:
        reasoning = {'effort': _EFFORT_OF_THINKING[params.thinking]}
        if params.thinking is not False:
            reasoning['enabled'] = True  # some routes think only when told to, whatever the effort
    if reasoning:
        fields['reasoning'] = reasoning
    for tool in params.native_tools:
        if isinstance(tool, WebSearchTool):
            plugin: dict[str, Any] = {'id': 'web'}
            for option in ('engine', 'max_results'):  # the options of the `web` plugin, from `provider_settings`
                if (value := provider_setting(tool, 'openrouter', option)) is not None:
                    plugin[option] = value
            fields['plugins'] = [*body.get('plugins', ()), plugin]
            fields['web_search_options'] = {'search_context_size': tool.search_context_size}
        elif isinstance(tool, AdvisorTool):
            parameters: dict[str, Any] = {
                'model': tool.model,
                'forward_transcript': provider_setting(tool, 'openrouter', 'forward_transcript', False),
            }
            if tool.max_tokens is not None:
                parameters['max_completion_tokens'] = tool.max_tokens
            fields['tools'] = [*body.get('tools', ()), {'type': 'openrouter:advisor', 'parameters': parameters}]
    return fields


def openrouter_details(data: Mapping[str, Any]) -> dict[str, Any]:
    """OpenRouter's details of a response or chunk: the provider that served it, its own finish reason, the cost."""
    details: dict[str, Any] = {}
    if 'provider' in data:
        details['downstream_provider'] = data['provider']
    choices = data.get('choices') or ()
    if choices and (native := choices[0].get('native_finish_reason')):
        details['finish_reason'] = native
    usage = data.get('usage') or {}
    if cost := usage.get('cost'):
        details['cost'] = cost
    if isinstance(cost_details := usage.get('cost_details'), dict):
        details['upstream_inference_cost'] = cost_details.get('upstream_inference_cost')
    if usage.get('is_byok') is not None:
        details['is_byok'] = usage['is_byok']
    return details


def _cache_write_tokens(usage: Any) -> int:
    prompt_details = (usage or {}).get('prompt_tokens_details') or {}
    return int(prompt_details.get('cache_write_tokens') or 0)


class OpenRouterStreamedResponse(ReasoningDetailsStreamedResponse):
    """A streamed OpenRouter response: Chat Completions chunks, with `reasoning_details` and OpenRouter's details."""

    def _chunk(self, chunk: dict[str, Any]) -> list[ModelResponseStreamEvent]:
        events = super()._chunk(chunk)
        choices: list[Any] = chunk.get('choices') or []
        if choices and choices[0].get('finish_reason') == 'error':
            self.finish_reason = 'error'
        if extra := openrouter_details(chunk):
            self.provider_details = {**(self.provider_details or {}), **extra}
        if write := _cache_write_tokens(chunk.get('usage')):
            self._usage.cache_write_tokens = write
        return events

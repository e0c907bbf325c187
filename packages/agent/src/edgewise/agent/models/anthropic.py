"""Anthropic's Messages API: `AnthropicModel`, over plain httpx (no Anthropic SDK needed).

`AnthropicModel('claude-sonnet-4-5')` reads `ANTHROPIC_API_KEY`; requests go to `POST {base_url}/v1/messages`,
streamed over server-sent events or not. The JSON is made and read by the pure `_anthropic_mapping` module.
"""

from __future__ import annotations as _annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

from ..messages import FileUrl, ModelMessage, ModelResponse
from ..native_tools import SUPPORTED_NATIVE_TOOLS, AbstractNativeTool
from ..profiles import ModelProfileSpec
from ..providers import Provider
from ..settings import ModelSettings
from ._anthropic_mapping import (
    CACHE_SETTINGS,
    AnthropicModelSettings,
    AnthropicStreamedResponse,
    anthropic_model_response,
    anthropic_request_body,
    takes_url,
)
from ._anthropic_native_tools import ANTHROPIC_NATIVE_TOOLS, anthropic_native_tools
from ._anthropic_system_entries import REQUEST_SCOPED_SYSTEM_BETA, has_self_clearing_entry
from ._compaction_mapping import ANTHROPIC_COMPACTION_BETA, with_beta
from ._error_categories import anthropic_http_error
from ._http import HTTPCall
from ._mapping import EventStreamedResponse
from ._provider_model import ProviderModel
from ._request_parameters import ModelRequestParameters
from ._tool_additions import TOOL_ADDITION_BETA, has_tool_addition

__all__ = ('AnthropicModel', 'AnthropicModelSettings', 'AnthropicModelName')

# Defined beside its request mapping; this module is its public home (and the one pydantic-ai names).
AnthropicModelSettings.__module__ = __name__

AnthropicModelName = str
"""The name of a Claude model (`'claude-sonnet-4-5'`, `'claude-haiku-4-5'`, ...)."""


class AnthropicModel(ProviderModel):
    """A Claude model behind Anthropic's Messages API (`POST {base_url}/v1/messages`), streamed or not."""

    _default_provider = 'anthropic'
    _endpoint_name = 'messages'
    supported_tool_deferral_modes = frozenset({'standalone'})
    """A deferred tool goes out with `defer_loading: true` (Anthropic takes it on its own)."""
    supported_tool_addition_modes = frozenset({'by_reference'})
    """A tool revealed mid-run stays declared with `defer_loading: true`, and a `tool_addition` block naming it goes
    where it was revealed (the latest models: `AnthropicProvider`'s profile sets the mode)."""
    _provider_cache_settings = CACHE_SETTINGS

    _http_error = staticmethod(anthropic_http_error)
    """How an error status becomes an error: of the category its error type or message names."""
    _batch_backend = '_anthropic_batch'
    _batch_profile_key = 'anthropic_supports_message_batches'
    _batch_providers = frozenset({'anthropic'})

    def __init__(
        self,
        model_name: AnthropicModelName,
        *,
        provider: str | Provider[Any] = 'anthropic',
        profile: ModelProfileSpec | None = None,
        settings: ModelSettings | None = None,
    ) -> None:
        """Configure the model.

        Args:
            model_name: The Claude model's name.
            provider: The provider or its name (`'anthropic'`, or an `AnthropicProvider`).
            profile: The model's profile (or a function of the name giving it); the provider's by default.
            settings: Default settings of this model's requests (`AnthropicModelSettings`).
        """
        super().__init__(model_name, provider=provider, profile=profile, settings=settings)

    def _url(self, *, stream: bool) -> str:
        return f'{self._provider.base_url}/v1/messages'

    def _needs_download(self, file: FileUrl) -> bool:
        # Anthropic fetches image and PDF URLs itself; other documents (plain text) are sent as data.
        return bool(file.force_download) or not takes_url(file)

    def _body(
        self, messages: list[ModelMessage], settings: Any, params: ModelRequestParameters, *, stream: bool
    ) -> dict[str, Any]:
        return anthropic_request_body(
            self._model_name, messages, settings, params, self.profile, stream=stream,
            provider_name=self._provider.name, accepts=self.accepts_stateless_artifacts,
            ours=self.accepts_server_state, tool_additions=self.tool_addition_mode == 'by_reference',
        )  # fmt: skip

    def _native_tools(self) -> frozenset[type[AbstractNativeTool]]:
        return ANTHROPIC_NATIVE_TOOLS & self.profile.get('supported_native_tools', SUPPORTED_NATIVE_TOOLS)

    @classmethod
    def supported_native_tools(cls) -> frozenset[type[AbstractNativeTool]]:
        """Web search, code execution, web fetch, memory, MCP servers and tool search (Anthropic's server tools)."""
        return ANTHROPIC_NATIVE_TOOLS

    def _request_headers(self, params: ModelRequestParameters, settings: Mapping[str, Any]) -> dict[str, str]:
        # The beta flags some server tools need, with any the user gives in `extra_headers`.
        _, _, betas = anthropic_native_tools(params, [], self._model_name, settings)
        if not betas:
            return {}
        given = (settings.get('extra_headers') or {}).get('anthropic-beta', '')
        betas.update(b.strip() for b in given.split(',') if b.strip())
        return {'anthropic-beta': ','.join(sorted(betas))}

    def _call(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        params: ModelRequestParameters,
        *,
        stream: bool,
    ) -> HTTPCall:
        call = super()._call(messages, model_settings, params, stream=stream)
        if 'context_management' in call.body:  # compaction is in beta
            call.headers = with_beta(call.headers, ANTHROPIC_COMPACTION_BETA)
        if has_self_clearing_entry(call.body['messages']):  # a request-scoped system prompt's entry is in beta
            call.headers = with_beta(call.headers, REQUEST_SCOPED_SYSTEM_BETA)
        if has_tool_addition(call.body['messages']):  # so are the blocks revealing tools mid-conversation
            call.headers = with_beta(call.headers, TOOL_ADDITION_BETA)
        return call

    def _parse(self, data: Any) -> ModelResponse:
        return anthropic_model_response(data, provider_name=self._provider.name)

    def _streamed(self, params: ModelRequestParameters, events: AsyncIterator[dict[str, Any]]) -> EventStreamedResponse:
        return AnthropicStreamedResponse(params, events, model_name=self._model_name, provider_name=self._provider.name)


def __getattr__(name: str) -> Any:
    # pydantic-ai's import path of `AnthropicCompaction`, a capability: its code lives on the capabilities
    # floor, above the models, and is imported on first use.
    if name == 'AnthropicCompaction':
        from importlib import import_module

        return getattr(import_module('edgewise.agent.capabilities.compaction'), name)
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')

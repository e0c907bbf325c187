"""`AnthropicProvider`: Anthropic's Messages API (`https://api.anthropic.com`), authenticated by `x-api-key`."""

from __future__ import annotations as _annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from ..profiles import ModelProfile, merge_profile
from ..profiles.anthropic import AnthropicModelProfile, anthropic_model_profile
from ._base import HTTPProvider, env_value, missing_key_error

if TYPE_CHECKING:
    import httpx

__all__ = ('AnthropicProvider', 'ANTHROPIC_VERSION')

ANTHROPIC_VERSION = '2023-06-01'
"""The API version sent in the `anthropic-version` header (the one the official SDK sends)."""


_MESSAGES_API_CACHE = AnthropicModelProfile(
    supports_cache=True,
    supports_auto_cache=True,
    supported_cache_retentions=('5m', '1h'),
    # Anthropic documents a 5-minute lifetime, refreshed each time the prefix is read.
    default_cache_retention=timedelta(minutes=5),
)
"""The prompt cache of Anthropic's Messages API: a fact of the API, not of the Claude family (other APIs serving
Claude share `anthropic_model_profile`)."""

# The models taking `tool_addition` blocks on the Messages API, as pydantic-ai 2.68 lists them.
_TOOL_ADDITION_MODELS = (
    'claude-fable-5',
    'claude-mythos-5',
    'claude-opus-4-8',
    'claude-opus-5',
    'claude-sonnet-5-5',
    'claude-haiku-5-5',
)

# The models taking a request-scoped `system` entry with `clear_at` on the Messages API (its
# `mid-conversation-system-clear-at-2026-08-21` beta), as pydantic-ai 2.68 lists them.
_REQUEST_SCOPED_SYSTEM_PROMPT_MODELS = (
    'claude-fable-5',
    'claude-mythos-5',
    'claude-opus-4-8',
    'claude-opus-5',
    'claude-sonnet-5-5',
    'claude-haiku-5-5',
)


class AnthropicProvider(HTTPProvider):
    """Anthropic's API; the key comes from `ANTHROPIC_API_KEY` unless given."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        http_client: httpx.AsyncClient | None = None,
        max_retries: int = 2,
    ) -> None:
        """Configure the provider.

        Args:
            api_key: The API key; defaults to the `ANTHROPIC_API_KEY` environment variable.
            base_url: The API's base URL; defaults to `ANTHROPIC_BASE_URL`, then `https://api.anthropic.com`.
            http_client: An `httpx.AsyncClient` to send requests with, used as given (and not closed here).
            max_retries: How many times a failed request (429, 5xx, timeout, dropped connection) is retried.

        Raises:
            UserError: no API key is given or set.
        """
        api_key = api_key or env_value('ANTHROPIC_API_KEY')
        if not api_key:
            raise missing_key_error(('ANTHROPIC_API_KEY',), 'AnthropicProvider', 'the Anthropic provider')
        base_url = base_url or env_value('ANTHROPIC_BASE_URL') or 'https://api.anthropic.com'
        super().__init__(base_url=base_url, api_key=api_key, http_client=http_client, max_retries=max_retries)
        self._api_key: str = api_key

    @property
    def name(self) -> str:
        """The provider's name, `'anthropic'`."""
        return 'anthropic'

    @staticmethod
    def model_profile(model_name: str) -> ModelProfile | None:
        """The profile of the named Claude model, with what the Messages API adds: its prompt cache (configured on
        the request, 5-minute and 1-hour tiers, the breakpoint placed by the API when asked, 5 minutes kept by
        default) and, on the latest models, native word of tools revealed mid-run (`tool_addition_mode`) and
        request-scoped system prompts the API clears itself (`supports_request_scoped_system_prompts`)."""
        profile = merge_profile(anthropic_model_profile(model_name), _MESSAGES_API_CACHE)
        if model_name.startswith(_TOOL_ADDITION_MODELS):
            profile = merge_profile(profile, AnthropicModelProfile(tool_addition_mode='by_reference'))
        if model_name.startswith(_REQUEST_SCOPED_SYSTEM_PROMPT_MODELS):
            profile = merge_profile(profile, AnthropicModelProfile(supports_request_scoped_system_prompts=True))
        return profile

    def request_headers(self) -> dict[str, str]:
        """The key (`x-api-key`) and the API version (`anthropic-version`)."""
        return {'x-api-key': self._api_key, 'anthropic-version': ANTHROPIC_VERSION}

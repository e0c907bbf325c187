"""`AnthropicProvider`: Anthropic's Messages API (`https://api.anthropic.com`), authenticated by `x-api-key`."""

from __future__ import annotations as _annotations

import os

import httpx

from ..exceptions import UserError
from ..profiles import ModelProfile
from ..profiles.anthropic import anthropic_model_profile
from ._base import DEFAULT_TIMEOUT, Provider

__all__ = ('AnthropicProvider', 'ANTHROPIC_VERSION')

ANTHROPIC_VERSION = '2023-06-01'
"""The API version sent in the `anthropic-version` header (the one the official SDK sends)."""


class AnthropicProvider(Provider[httpx.AsyncClient]):
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
        api_key = api_key or os.getenv('ANTHROPIC_API_KEY')
        if not api_key:
            raise UserError(
                'Set the `ANTHROPIC_API_KEY` environment variable or pass it via `AnthropicProvider(api_key=...)` '
                'to use the Anthropic provider.'
            )
        base_url = base_url or os.getenv('ANTHROPIC_BASE_URL') or 'https://api.anthropic.com'
        self._base_url = base_url.rstrip('/')
        self._api_key = api_key
        self._http_client = http_client
        self.max_retries = max_retries

    @property
    def name(self) -> str:
        """The provider's name, `'anthropic'`."""
        return 'anthropic'

    @property
    def base_url(self) -> str:
        """The API's base URL (without a trailing slash)."""
        return self._base_url

    @property
    def client(self) -> httpx.AsyncClient:
        """The HTTP client: the one given, else the provider's own (made on first use, again after closing)."""
        if self._http_client is not None:
            return self._http_client
        if self._own_http_client is None or self._own_http_client.is_closed:
            self._own_http_client = httpx.AsyncClient(timeout=DEFAULT_TIMEOUT)
        return self._own_http_client

    @staticmethod
    def model_profile(model_name: str) -> ModelProfile | None:
        """The profile of the named Claude model."""
        return anthropic_model_profile(model_name)

    def request_headers(self) -> dict[str, str]:
        """The key (`x-api-key`) and the API version (`anthropic-version`)."""
        return {'x-api-key': self._api_key, 'anthropic-version': ANTHROPIC_VERSION}

"""`CohereProvider`: Cohere's API (`https://api.cohere.com`), authenticated by a bearer key."""

from __future__ import annotations as _annotations

from typing import TYPE_CHECKING

from ..profiles import ModelProfile, merge_profile
from ..profiles.cohere import cohere_model_profile
from ._base import HTTPProvider, env_value, missing_key_error

if TYPE_CHECKING:
    import httpx

__all__ = ('CohereProvider',)


class CohereProvider(HTTPProvider):
    """Cohere's API; the key comes from `CO_API_KEY` and the base URL from `CO_BASE_URL` unless given."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        http_client: httpx.AsyncClient | None = None,
        base_url: str | None = None,
        max_retries: int = 2,
    ) -> None:
        """Configure the provider.

        Args:
            api_key: The API key; defaults to the `CO_API_KEY` environment variable.
            http_client: An `httpx.AsyncClient` to send requests with, used as given (and not closed here).
            base_url: The API's base URL (without `/v2`); defaults to `CO_BASE_URL`, then `https://api.cohere.com`.
            max_retries: How many times a failed request (429, 5xx, timeout, dropped connection) is retried.

        Raises:
            UserError: no API key is given or set.
        """
        api_key = api_key or env_value('CO_API_KEY')
        if not api_key:
            raise missing_key_error(('CO_API_KEY',), 'CohereProvider', 'the Cohere provider')
        base_url = base_url or env_value('CO_BASE_URL') or 'https://api.cohere.com'
        super().__init__(base_url=base_url, api_key=api_key, http_client=http_client, max_retries=max_retries)
        self._api_key: str = api_key

    @property
    def name(self) -> str:
        """The provider's name, `'cohere'`."""
        return 'cohere'

    @staticmethod
    def model_profile(model_name: str) -> ModelProfile:
        """The profile of the named Cohere model, with system prompts anywhere in the conversation; a reasoning model
        reasons by default, and Cohere's own API can switch that off (`thinking=False`)."""
        profile = merge_profile(cohere_model_profile(model_name), ModelProfile(supports_inline_system_prompts=True))
        if profile.get('supports_thinking', False):
            profile = merge_profile(profile, ModelProfile(thinking_always_enabled=False))
        return profile

    def request_headers(self) -> dict[str, str]:
        """The key, as a bearer token."""
        return {'authorization': f'Bearer {self._api_key}'}

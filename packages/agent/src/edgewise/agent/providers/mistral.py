"""`MistralProvider`: Mistral's API (`https://api.mistral.ai`), authenticated by a bearer key."""

from __future__ import annotations as _annotations

from typing import TYPE_CHECKING

from ..profiles import ModelProfile, merge_profile
from ..profiles.mistral import mistral_model_profile
from ._base import HTTPProvider, env_value, missing_key_error

if TYPE_CHECKING:
    import httpx

__all__ = ('MistralProvider',)

# The models whose reasoning is switched on and off with `reasoning_effort` (Magistral's dated ids always reason), as
# pydantic-ai 2.68 lists them: only Mistral's own API translates `thinking` into the `'high'` / `'none'` they take.
_ADJUSTABLE_REASONING_MODELS = frozenset(
    {
        'mistral-large-4',
        'mistral-large-4-0',
        'mistral-small-latest',
        'mistral-small-2603',
        'mistral-medium-latest',
        'mistral-medium',
        'mistral-medium-3',
        'mistral-medium-3-5',
        'mistral-medium-3.5',
        'mistral-medium-2604',
        'magistral-medium-latest',
        'magistral-small-latest',
    }
)


class MistralProvider(HTTPProvider):
    """Mistral's API; the key comes from `MISTRAL_API_KEY` unless given."""

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
            api_key: The API key; defaults to the `MISTRAL_API_KEY` environment variable.
            base_url: The API's base URL (without `/v1`); defaults to `https://api.mistral.ai`.
            http_client: An `httpx.AsyncClient` to send requests with, used as given (and not closed here).
            max_retries: How many times a failed request (429, 5xx, timeout, dropped connection) is retried.

        Raises:
            UserError: no API key is given or set.
        """
        api_key = api_key or env_value('MISTRAL_API_KEY')
        if not api_key:
            raise missing_key_error(('MISTRAL_API_KEY',), 'MistralProvider', 'the Mistral provider')
        super().__init__(
            base_url=base_url or 'https://api.mistral.ai', api_key=api_key, http_client=http_client,
            max_retries=max_retries,
        )  # fmt: skip
        self._api_key: str = api_key

    @property
    def name(self) -> str:
        """The provider's name, `'mistral'`."""
        return 'mistral'

    @staticmethod
    def model_profile(model_name: str) -> ModelProfile:
        """The profile of the named Mistral model: Mistral's family profile, reasoning that can be switched on for the
        models that take `reasoning_effort`, and system prompts anywhere in the conversation."""
        profile = mistral_model_profile(model_name)
        if model_name in _ADJUSTABLE_REASONING_MODELS:
            profile = merge_profile(profile, ModelProfile(supports_thinking=True, thinking_always_enabled=False))
        return merge_profile(profile, ModelProfile(supports_inline_system_prompts=True))

    def request_headers(self) -> dict[str, str]:
        """The key, as a bearer token."""
        return {'authorization': f'Bearer {self._api_key}'}

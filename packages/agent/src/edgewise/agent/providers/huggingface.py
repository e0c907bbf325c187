"""`HuggingFaceProvider`: Hugging Face's Inference Providers router (`https://router.huggingface.co/v1`), an
OpenAI-compatible chat completions API authenticated by a bearer token."""

from __future__ import annotations as _annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..profiles import ModelProfile, merge_profile
from ..profiles.deepseek import deepseek_model_profile
from ..profiles.google import google_model_profile
from ..profiles.meta import meta_model_profile
from ..profiles.mistral import mistral_model_profile
from ..profiles.moonshotai import moonshotai_model_profile
from ..profiles.qwen import qwen_model_profile
from ._base import HTTPProvider, env_value, missing_key_error

if TYPE_CHECKING:
    import httpx

__all__ = ('HuggingFaceProvider',)

ROUTER_URL = 'https://router.huggingface.co/v1'
"""The router's OpenAI-compatible base URL."""

_FAMILIES: dict[str, Callable[[str], ModelProfile | None]] = {
    'deepseek-ai': deepseek_model_profile,
    'google': google_model_profile,
    'qwen': qwen_model_profile,
    'meta-llama': meta_model_profile,
    'mistralai': mistral_model_profile,
    'moonshotai': moonshotai_model_profile,
}
"""The profile of the models of each organization on the Hub (`<org>/<model>`), as pydantic-ai 2.68 maps them."""


class HuggingFaceProvider(HTTPProvider):
    """Hugging Face's Inference Providers; the token comes from `HF_TOKEN` unless given.

    Requests go through the router, which picks an inference provider for the model (the first available, in the
    order of your Hugging Face settings), unless `provider_name` names one: the model is then asked for as
    `<model>:<provider_name>`. A `base_url` sends requests to another OpenAI-compatible endpoint (a dedicated
    Inference Endpoint, say).
    """

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        http_client: httpx.AsyncClient | None = None,
        provider_name: str | None = None,
        *,
        max_retries: int = 2,
    ) -> None:
        """Configure the provider.

        Args:
            base_url: The base URL of the chat completions API; the router's by default.
            api_key: The token; defaults to the `HF_TOKEN` environment variable.
            http_client: An `httpx.AsyncClient` to send requests with, used as given (and not closed here).
            provider_name: The inference provider to ask (`'together'`, `'novita'`, ...); the router picks one when
                not given (`'auto'`).
            max_retries: How many times a failed request (429, 5xx, timeout, dropped connection) is retried.

        Raises:
            UserError: no token is given or set.
            ValueError: both `base_url` and `provider_name` are given.
        """
        api_key = api_key or env_value('HF_TOKEN')
        if not api_key:
            raise missing_key_error(('HF_TOKEN',), 'HuggingFaceProvider', 'the HuggingFace provider')
        if base_url is not None and provider_name is not None:
            raise ValueError('Cannot provide both `base_url` and `provider_name`.')
        super().__init__(
            base_url=base_url or ROUTER_URL, api_key=api_key, http_client=http_client, max_retries=max_retries
        )
        self._api_key: str = api_key
        self.provider_name = provider_name
        """The inference provider asked for, if any."""

    @property
    def name(self) -> str:
        """The provider's name, `'huggingface'`."""
        return 'huggingface'

    @staticmethod
    def model_profile(model_name: str) -> ModelProfile | None:
        """The profile of a `<org>/<model>` of a known organization (its family's, with system prompts anywhere in
        the conversation); `None` for other names."""
        organization, slash, name = model_name.lower().partition('/')
        family = _FAMILIES.get(organization) if slash else None
        if family is None:
            return None
        return merge_profile(family(name), ModelProfile(supports_inline_system_prompts=True))

    def request_headers(self) -> dict[str, str]:
        """The token, as a bearer token."""
        return {'authorization': f'Bearer {self._api_key}'}

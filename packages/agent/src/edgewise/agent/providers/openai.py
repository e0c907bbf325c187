"""`OpenAIProvider`: OpenAI's API, or any server that speaks it (vLLM, llama.cpp, LM Studio) given its base URL.

The providers of other OpenAI-compatible services (`OllamaProvider`, `GroqProvider`, ...) are this class with
other data: a base URL, the environment variables of the key and the URL, extra headers, a profile.
"""

from __future__ import annotations as _annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, cast

from ..exceptions import UserError
from ..profiles import ModelProfile, merge_profile
from ..profiles.openai import OpenAIModelProfile, openai_model_profile
from ._base import HTTPProvider, env_value, missing_key_error

if TYPE_CHECKING:
    import httpx

__all__ = ('OpenAIProvider', 'ProviderSpec')


@dataclass(frozen=True, kw_only=True)
class ProviderSpec:
    """What tells one OpenAI-compatible provider from another."""

    name: str
    """The provider's name (`'ollama'` in `'ollama:llama3.2'`)."""
    class_name: str
    """The provider's class, named in errors."""
    default_base_url: str | None
    """The base URL when neither the constructor nor the environment gives one; `None`: one must be given."""
    base_url_env: str | None = None
    """The environment variable holding the base URL, if the provider reads one."""
    base_url_suffix: str = ''
    """Appended to a base URL from the environment (e.g. `/v1`), for providers whose variable names the host."""
    api_key_envs: tuple[str, ...] = ()
    """The environment variables that may hold the API key, in order."""
    api_key_required: bool = True
    """Whether a missing key is an error (local servers need none)."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Headers every request carries."""
    profile: Callable[[str], ModelProfile | None] = openai_model_profile
    """The profile of a model name."""


# The models OpenAI documents a cache retention floor for: a cached prefix stays usable for at least 30 minutes.
_RETENTION_FLOOR_MODELS = ('gpt-5.6', 'gpt-6-astra', 'gpt-6-sol', 'gpt-6-luna', 'gpt-6.1-sol', 'gpt-6.1-terra')


def _openai_profile(model_name: str) -> ModelProfile:
    # OpenAI's own API takes a deferred tool next to its `tool_search` tool and tools revealed with their
    # definitions; the OpenAI-compatible servers (which share the family's profile) may not. Earlier models cache
    # with no request-side configuration (`supports_cache` stays off) and document no retention to predict from; the
    # models with prompt cache breakpoints take `prompt_cache_options` (the unified `cache` setting maps onto them),
    # with a `ttl` of 30 minutes (their floor) or 12 hours (Responses API only). Prompt cache diagnostics are
    # documented for the models with breakpoints, and only OpenAI's own endpoint is known to take the field; those
    # models also take a `tool_choice` naming a tool that only an `additional_tools` item declares, and `'max'`.
    family = openai_model_profile(model_name)
    breakpoints = bool(cast(OpenAIModelProfile, family).get('openai_supports_prompt_cache_breakpoints', False))
    profile = OpenAIModelProfile(
        tool_addition_mode='with_definitions',
        tool_deferral_mode='with_tool_search',
        openai_responses_supports_prompt_cache_diagnostics=breakpoints,
        openai_responses_tool_choice_accepts_additional_tools=breakpoints,
        # The same models take `reasoning.effort='max'` from OpenAI itself; the compatible servers sharing the
        # family's profile are not known to.
        openai_responses_supports_max_reasoning_effort=breakpoints,
    )
    if model_name.startswith(_RETENTION_FLOOR_MODELS):
        profile['default_cache_retention'] = timedelta(minutes=30)
        profile['supports_cache'] = True
        profile['supported_cache_retentions'] = ('30m', '12h')
    return merge_profile(family, profile)


_OPENAI = ProviderSpec(
    name='openai',
    class_name='OpenAIProvider',
    default_base_url='https://api.openai.com/v1',
    base_url_env='OPENAI_BASE_URL',
    api_key_envs=('OPENAI_API_KEY',),
    profile=_openai_profile,
)


class OpenAIProvider(HTTPProvider):
    """OpenAI's API, or another server speaking it (`base_url=`); the key comes from `OPENAI_API_KEY`.

    A server given by `base_url` needs no key (local servers usually take none).
    """

    _spec: ProviderSpec = _OPENAI

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        http_client: httpx.AsyncClient | None = None,
        max_retries: int = 2,
    ) -> None:
        """Configure the provider.

        Args:
            base_url: The API's base URL; defaults to the provider's environment variable, then its own URL.
            api_key: The API key; defaults to the provider's environment variable.
            http_client: An `httpx.AsyncClient` to send requests with, used as given (and not closed here).
            max_retries: How many times a failed request (429, 5xx, timeout, dropped connection) is retried.

        Raises:
            UserError: the API key (or, for providers without a default, the base URL) is not set.
        """
        spec = self._spec
        explicit_base_url = base_url is not None
        if base_url is None and spec.base_url_env and (from_env := os.getenv(spec.base_url_env)):
            base_url = from_env.rstrip('/') + spec.base_url_suffix
        if base_url is None:
            base_url = spec.default_base_url
        if base_url is None:
            raise UserError(
                f'Set the `{spec.base_url_env}` environment variable or pass it via `{spec.class_name}(base_url=...)` '
                f'to use the {spec.name} provider.'
            )
        if api_key is None:
            api_key = env_value(*spec.api_key_envs)
        if api_key is None and spec.api_key_required and not (spec is _OPENAI and explicit_base_url):
            raise missing_key_error(spec.api_key_envs, spec.class_name, f'the {spec.name} provider')
        super().__init__(base_url=base_url, api_key=api_key, http_client=http_client, max_retries=max_retries)

    @property
    def name(self) -> str:
        """The provider's name."""
        return self._spec.name

    @property
    def _canonical_system_follows_client(self) -> bool:
        # pydantic-ai 2.68's `OpenAIProvider` serves OpenAI or, with an Azure client, Azure, so its responses always
        # say which; the other services Edgewise serves through this class are providers of their own there.
        return self._spec is _OPENAI

    @classmethod
    def model_profile(cls, model_name: str) -> ModelProfile | None:
        """The profile of the named model on this provider."""
        return cls._spec.profile(model_name)

    def request_headers(self) -> dict[str, str]:
        """The provider's headers and, when there is a key, the `Authorization` header."""
        headers = dict(self._spec.headers)
        if self._api_key:
            headers['authorization'] = f'Bearer {self._api_key}'
        return headers

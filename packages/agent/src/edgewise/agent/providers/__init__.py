"""Providers: where a model is reached (base URL, API key, HTTP client) and which profile its models get.

`Provider` is the interface; `infer_provider('openai')` makes the provider of a name. Each provider owns one
`httpx.AsyncClient` (its connection pool), made on first use and closed by `async with provider:` (or by
`async with agent:`); a client passed in as `http_client` is used as given and left open for its owner.

The clients providers make go through `AsyncPoolTransport`, a connection pool whose work per request does not
grow with the number of requests in flight; `httpx.AsyncClient(transport=AsyncPoolTransport())` gives a client
of your own the same pool.
"""

from __future__ import annotations as _annotations

import warnings
from typing import TYPE_CHECKING, Any

from .._warnings import PydanticAIDeprecationWarning
from ._base import Provider

if TYPE_CHECKING:
    from ._pool import AsyncPoolTransport

__all__ = ('AsyncPoolTransport', 'Provider', 'infer_provider', 'infer_provider_class')


def __getattr__(name: str) -> Any:
    if name == 'AsyncPoolTransport':  # imported on first use: it brings httpx and httpcore
        from ._pool import AsyncPoolTransport

        return AsyncPoolTransport
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')


def infer_provider_class(provider: str) -> type[Provider[Any]]:
    """The provider class of a provider name such as `'openai'`, `'anthropic'`, `'google'`, `'azure'` or `'ollama'`.

    `'mistral'`, `'cohere'` and `'huggingface'` name the providers of those APIs. A `'gateway/<upstream>'` name gives
    the upstream's class. `'google-gla'` is the deprecated name of `'google'` (it warns, naming `'google'`); `'github'`
    (GitHub Models, retired) gives the deprecated `GitHubProvider`, which warns when made.

    Raises:
        ValueError: the name is unknown.
    """
    # Imported here: a program that names no provider does not pay for importing them.
    if provider.startswith('gateway/'):  # the upstream's class, as pydantic-ai 2.x answers
        from .gateway import normalize_gateway_provider

        provider = normalize_gateway_provider(provider)
    if provider in ('openai', 'openai-chat', 'openai-responses', 'openai-decisions'):
        from .openai import OpenAIProvider

        return OpenAIProvider
    if provider == 'anthropic':
        from .anthropic import AnthropicProvider

        return AnthropicProvider
    if provider == 'bedrock':
        from .bedrock import BedrockProvider

        return BedrockProvider
    if provider == 'mistral':
        from .mistral import MistralProvider

        return MistralProvider
    if provider == 'cohere':
        from .cohere import CohereProvider

        return CohereProvider
    if provider == 'huggingface':
        from .huggingface import HuggingFaceProvider

        return HuggingFaceProvider
    if provider == 'google-gla':
        warnings.warn(
            "The 'google-gla' provider name is deprecated; use 'google' instead.",
            PydanticAIDeprecationWarning,
            stacklevel=3,
        )
        provider = 'google'
    if provider in ('google', 'google-decisions'):
        from .google import GoogleProvider

        return GoogleProvider
    if provider == 'google-cloud':
        from .google_cloud import GoogleCloudProvider

        return GoogleCloudProvider
    if provider in ('azure', 'azure-responses'):
        from .azure import AzureProvider

        return AzureProvider
    if provider == 'bedrock-mantle':
        from .bedrock_mantle import BedrockMantleProvider

        return BedrockMantleProvider
    if provider == 'snowflake':
        from .snowflake import SnowflakeProvider

        return SnowflakeProvider
    if provider == 'typesafe':
        from .typesafe import TypeSafeProvider

        return TypeSafeProvider
    if provider == 'system-one':
        from .system_one import SystemOneProvider

        return SystemOneProvider
    if provider == 'github':
        from .github import GitHubProvider

        return GitHubProvider
    if provider == 'github-copilot':
        from .github_copilot import GitHubCopilotProvider

        return GitHubCopilotProvider
    if provider == 'openai-chatgpt':
        from .openai_chatgpt import OpenAIChatGPTProvider

        return OpenAIChatGPTProvider
    if provider == 'openai-codex':
        from .openai_codex import OpenAICodexProvider

        return OpenAICodexProvider
    from ._compatible import COMPATIBLE_PROVIDERS

    try:
        return COMPATIBLE_PROVIDERS[provider]
    except KeyError:
        raise ValueError(f'Unknown provider: {provider}') from None


def infer_provider(provider: str) -> Provider[Any]:
    """A new provider for a provider name, configured from the environment (API key, base URL).

    Raises:
        ValueError: the name is unknown.
        UserError: the provider's API key (or base URL) is not set.

    `'gateway/<upstream>'` names (`'gateway/openai'`) give the upstream's provider through the Pydantic AI Gateway
    (`edgewise.agent.providers.gateway.gateway_provider`).
    """
    if provider.startswith('gateway/'):
        from .gateway import gateway_provider

        return gateway_provider(provider.removeprefix('gateway/'))
    return infer_provider_class(provider)()

"""Models: the interface every LLM backend implements, and `infer_model` for names like `'openai:gpt-4o'`.

Backends here: `models.test.TestModel`, `models.function.FunctionModel`, `models.openai.OpenAIResponsesModel`
(`'openai:gpt-5'`, `'openai-responses:...'`), `models.openai.OpenAIChatModel` for OpenAI's Chat Completions
(`'openai-chat:gpt-4o'`) and every OpenAI-compatible server (`'deepseek:...'`, `'grok:...'`, `'azure:...'`; Azure's
Responses API is `'azure-responses:...'`),
`models.groq.GroqModel` (`'groq:...'`), `models.openrouter.OpenRouterModel` (`'openrouter:...'`),
`models.cerebras.CerebrasModel`, `models.crusoe.CrusoeModel`, `models.ollama.OllamaModel`, `models.zai.ZaiModel` and
`models.snowflake.SnowflakeModel` (`'cerebras:...'`, `'crusoe:...'`, `'ollama:...'`, `'zai:...'`, `'snowflake:...'`),
`models.bedrock_mantle.BedrockMantleResponsesModel` / `BedrockMantleChatModel` (`'bedrock-mantle:...'`),
`models.xai.XaiModel` (`'xai:...'`, xAI's Responses API),
`models.mistral.MistralModel` (`'mistral:...'`), `models.cohere.CohereModel` (`'cohere:...'`),
`models.huggingface.HuggingFaceModel` (`'huggingface:...'`), `models.bedrock.BedrockConverseModel` (`'bedrock:...'`),
`models.anthropic.AnthropicModel` (`'anthropic:...'`), `models.google.GoogleModel` (`'google:...'`, or the
deprecated `'google-gla:...'`) and the decision models `models.system_one.SystemOneModel` (`'system-one:...'`) and
`models.openai_decisions.OpenAIDecisionsModel` (`'openai-decisions:...'`) and
`models.google_decisions.GoogleDecisionsModel` (`'google-decisions:...'`).

`Model` (with `RunContext`), `ModelRequestParameters` and `StreamedResponse` are defined in the private modules
of this package, which the backends import; this module re-exports them and sits above the backends, so that
`infer_model('test')` can make a `TestModel` without an import cycle.
"""

from __future__ import annotations as _annotations

import warnings
from typing import TYPE_CHECKING, Any, TypeAlias

from .._warnings import PydanticAIDeprecationWarning
from ..exceptions import UserError
from ._abstract import AbstractModel
from ._completed_response import CompletedStreamedResponse
from ._model import ALLOW_MODEL_REQUESTS, Model, check_allow_model_requests
from ._native_support import resolve_request_tools
from ._request_context import ModelRequestContext, ModelResolutionContext, ModelSelectionContext
from ._request_parameters import (
    InstructionVisibility,
    ModelRequestParameters,
    ToolVisibility,
    prepare_return_schemas,
)
from ._streamed_response import StreamedResponse

if TYPE_CHECKING:
    import httpx

__all__ = (
    'AbstractModel',
    'Model',
    'ModelRequestParameters',
    'ToolVisibility',
    'InstructionVisibility',
    'prepare_return_schemas',
    'resolve_request_tools',
    'ModelRequestContext',
    'ModelResolutionContext',
    'ModelSelectionContext',
    'StreamedResponse',
    'CompletedStreamedResponse',
    'KnownModelName',
    'ALLOW_MODEL_REQUESTS',
    'check_allow_model_requests',
    'infer_model',
    'KNOWN_PROVIDERS',
    'create_async_http_client',
)

KnownModelName: TypeAlias = str
"""A model name: `'test'`, or `'<provider>:<model>'` such as `'openai:gpt-4o'`."""

KNOWN_PROVIDERS = (
    'alibaba',
    'anthropic',
    'azure',
    'azure-responses',
    'bedrock',
    'bedrock-mantle',
    'cerebras',
    'cohere',
    'crusoe',
    'deepseek',
    'fireworks',
    'github',
    'github-copilot',
    'google',
    'google-cloud',
    'google-decisions',
    'google-gla',
    'google-vertex',
    'grok',
    'groq',
    'heroku',
    'huggingface',
    'litellm',
    'meta',
    'mistral',
    'moonshotai',
    'nebius',
    'ollama',
    'openai',
    'openai-chat',
    'openai-chatgpt',
    'openai-codex',
    'openai-decisions',
    'openai-responses',
    'openrouter',
    'ovhcloud',
    'sambanova',
    'snowflake',
    'system-one',
    'together',
    'typesafe',
    'vercel',
    'vertexai',
    'vllm',
    'xai',
    'zai',
)
"""Provider prefixes of pydantic-ai model names; recognised so that naming one gives a clear error."""


def infer_model(model: Model | KnownModelName) -> Model:
    """The model for `model`: a `Model` as is, `'test'` as a `TestModel`, a `'<provider>:<name>'` string...

    As in pydantic-ai 2.x, `'openai:'` and `'openai-responses:'` name the Responses API and `'openai-chat:'` the
    Chat Completions API. The 1.x prefixes `'google-gla:'` (now `'google:'`), `'google-vertex:'` and
    `'vertexai:'` (now `'google-cloud:'`) and `'grok:'` (now `'xai:'`) still work and warn. `'gateway/<upstream>:'`
    names (`'gateway/openai:gpt-5'`, `'gateway/chat:...'`, `'gateway/anthropic:...'`, `'gateway/groq:...'`) go
    through the Pydantic AI Gateway.

    Raises:
        UserError: the name has no provider prefix, is unknown, or its provider is not available in this release.
    """
    if isinstance(model, Model):
        return model
    if model == 'test':
        from .test import TestModel  # (imported here: an agent of another model never loads it)

        return TestModel()
    provider, sep, name = model.partition(':')
    if not sep:
        raise UserError(
            f'Unknown model: {model!r}. A model name needs its provider: `<provider>:<model name>` '
            f"(e.g. 'openai:{model}'), or `test`."
        )
    if provider.startswith('gateway/'):
        return _gateway_model(provider, name)
    renamed = _RENAMED_PROVIDERS.get(provider)
    if renamed is not None:
        warnings.warn(
            f'The {provider + ":"!r} model name prefix is deprecated; use {renamed + ":"!r} instead '
            f"(e.g. '{renamed}:{name}').",
            PydanticAIDeprecationWarning,
            stacklevel=2,
        )
        if provider != 'grok':  # 'grok:' keeps its own provider (GROK_API_KEY), as in 1.x
            provider = renamed
    if provider in ('openai', 'openai-responses'):
        from .openai import OpenAIResponsesModel

        return OpenAIResponsesModel(name, provider='openai')
    if provider == 'azure-responses':  # as in pydantic-ai 2.x, `'azure:'` is Chat Completions
        from .openai import OpenAIResponsesModel

        return OpenAIResponsesModel(name, provider='azure')
    if provider == 'anthropic':
        from .anthropic import AnthropicModel

        return AnthropicModel(name, provider='anthropic')
    if provider == 'google':
        from ..providers.google import GoogleProvider
        from .google import GoogleModel

        return GoogleModel(name, provider=GoogleProvider())
    if provider == 'google-cloud':
        from .google import GoogleModel

        return GoogleModel(name, provider='google-cloud')
    if provider == 'bedrock':
        from .bedrock import BedrockConverseModel

        return BedrockConverseModel(name, provider='bedrock')
    if provider == 'groq':
        from .groq import GroqModel

        return GroqModel(name, provider='groq')
    if provider == 'openrouter':
        from .openrouter import OpenRouterModel

        return OpenRouterModel(name, provider='openrouter')
    if provider == 'bedrock-mantle':
        return _bedrock_mantle_model(name)
    if provider == 'xai':  # xAI's Responses API over HTTP (pydantic-ai's XaiModel speaks gRPC)
        from .xai import XaiModel

        return XaiModel(name, provider='xai')
    if provider in _OWN_CHAT_MODELS:
        return _own_chat_model(provider, name)
    if provider == 'mistral':
        from .mistral import MistralModel

        return MistralModel(name, provider='mistral')
    if provider == 'cohere':
        from .cohere import CohereModel

        return CohereModel(name, provider='cohere')
    if provider == 'huggingface':
        from .huggingface import HuggingFaceModel

        return HuggingFaceModel(name, provider='huggingface')
    if provider == 'meta':  # Muse keeps its reasoning and phases across turns only on the Responses API
        from .openai import OpenAIResponsesModel

        return OpenAIResponsesModel(name, provider='meta')
    if provider == 'github-copilot':
        from .github_copilot import GitHubCopilotModel

        return GitHubCopilotModel(name, provider='github-copilot')
    if provider == 'openai-chatgpt':  # ChatGPT plan usage serves the Responses API only
        from .openai import OpenAIResponsesModel

        return OpenAIResponsesModel(name, provider='openai-chatgpt')
    if provider == 'openai-codex':  # the Codex backend of a ChatGPT subscription speaks the Responses API only
        from .openai_codex import OpenAICodexModel

        return OpenAICodexModel(name, provider='openai-codex')
    if provider in _OPENAI_CHAT_PROVIDERS:
        from .openai import OpenAIChatModel

        return OpenAIChatModel(name, provider='openai' if provider == 'openai-chat' else provider)
    if provider == 'system-one':
        from .system_one import SystemOneModel

        return SystemOneModel(name, provider='system-one')
    if provider in ('openai-decisions', 'google-decisions'):
        return _decisions_model(provider, name)
    if provider in _DECISION_PROVIDERS:
        raise UserError(
            f'Model provider {provider!r} (for model {name!r}) is not available in edgewise.agent yet: it serves '
            "decision models through TypeSafe's own SDK, which Edgewise does not use. Its provider "
            f'(`infer_provider({provider!r})`) and profile are available; for a run, use another provider '
            "(a decision model over HTTP: `'system-one:...'`)."
        )
    if provider in KNOWN_PROVIDERS:
        raise UserError(
            f'Model provider {provider!r} (for model {name!r}) is not available in edgewise.agent yet. '
            'Use `anthropic:`, `google:`, `openai:` (Responses API), `openai-chat:` or another OpenAI-compatible '
            'provider (`ollama:`, `xai:`, `deepseek:`, ...), `bedrock:`, `groq:`, `openrouter:`, `mistral:`, '
            '`cohere:`, `huggingface:`, `TestModel` or `FunctionModel`, or pass your own `Model`.'
        )
    raise UserError(f'Unknown model provider {provider!r} in model name {model!r}.')


_DECISION_PROVIDERS = frozenset({'typesafe'})

_OWN_CHAT_MODELS = frozenset({'cerebras', 'crusoe', 'ollama', 'snowflake', 'zai'})
"""OpenAI-compatible providers with a Chat Completions model class of their own."""


def _decisions_model(provider: str, name: str) -> Model:
    """The model of a provider's decisions endpoint, which takes the provider its other models take."""
    if provider == 'openai-decisions':
        from .openai_decisions import OpenAIDecisionsModel

        return OpenAIDecisionsModel(name, provider='openai-decisions')
    from .google_decisions import GoogleDecisionsModel

    return GoogleDecisionsModel(name, provider='google-decisions')


def _bedrock_mantle_model(name: str) -> Model:
    """The Mantle model class of the endpoint family the model's profile names."""
    from ..providers.bedrock_mantle import bedrock_mantle_model_profile
    from .bedrock_mantle import BedrockMantleChatModel, BedrockMantleResponsesModel

    if bedrock_mantle_model_profile(name).get('bedrock_mantle_interface') == 'chat':
        return BedrockMantleChatModel(name)
    return BedrockMantleResponsesModel(name)


def _own_chat_model(provider: str, name: str) -> Model:
    if provider == 'cerebras':
        from .cerebras import CerebrasModel

        return CerebrasModel(name, provider='cerebras')
    if provider == 'crusoe':
        from .crusoe import CrusoeModel

        return CrusoeModel(name, provider='crusoe')
    if provider == 'ollama':
        from .ollama import OllamaModel

        return OllamaModel(name, provider='ollama')
    if provider == 'snowflake':
        from .snowflake import SnowflakeModel

        return SnowflakeModel(name, provider='snowflake')
    from .zai import ZaiModel

    return ZaiModel(name, provider='zai')


def _gateway_model(provider: str, name: str) -> Model:
    """The model of a `'gateway/<upstream>:<name>'` string: the upstream's model class on the Gateway's route."""
    from ..providers import infer_provider
    from ..providers.gateway import normalize_gateway_provider

    upstream = normalize_gateway_provider(provider)
    gateway = infer_provider(provider)  # a `UserError` for an unknown upstream
    if upstream == 'anthropic':
        from .anthropic import AnthropicModel

        return AnthropicModel(name, provider=gateway)
    if upstream == 'groq':
        from .groq import GroqModel

        return GroqModel(name, provider=gateway)
    if upstream == 'google-cloud':
        from .google import GoogleModel

        return GoogleModel(name, provider=gateway)
    if upstream == 'bedrock':
        from .bedrock import BedrockConverseModel

        return BedrockConverseModel(name, provider=gateway)
    from .openai import OpenAIChatModel, OpenAIResponsesModel

    if upstream == 'openai-chat':
        return OpenAIChatModel(name, provider=gateway)
    return OpenAIResponsesModel(name, provider=gateway)


_RENAMED_PROVIDERS = {
    'google-gla': 'google',
    'google-vertex': 'google-cloud',
    'vertexai': 'google-cloud',
    'grok': 'xai',
}
"""Model name prefixes of pydantic-ai 1.x and their 2.x spelling."""


_OPENAI_CHAT_PROVIDERS = frozenset(
    {
        'openai', 'openai-chat', 'ollama', 'deepseek', 'together', 'fireworks', 'cerebras',
        'vercel', 'grok', 'xai', 'moonshotai', 'heroku', 'litellm', 'alibaba', 'crusoe', 'nebius', 'ovhcloud',
        'sambanova', 'zai', 'vllm', 'azure', 'github',
    }
)  # fmt: skip


def create_async_http_client(*, timeout: float = 600, connect: float = 5) -> httpx.AsyncClient:
    """A new `httpx.AsyncClient` for a provider (`Provider(http_client=...)`), pooled by `AsyncPoolTransport`.

    Each call makes a new client; whoever passes it to a provider closes it (`async with client:`).

    Args:
        timeout: Seconds a request may take (read, write and pool waits).
        connect: Seconds to open a connection.
    """
    import httpx

    from ..providers._pool import AsyncPoolTransport

    return httpx.AsyncClient(transport=AsyncPoolTransport(), timeout=httpx.Timeout(timeout, connect=connect))


def __getattr__(name: str) -> Any:
    if name == 'cached_async_http_client':
        warnings.warn(
            '`cached_async_http_client` is deprecated: use `create_async_http_client()` (pydantic-ai 2.x), '
            'which makes a new client each call.',
            PydanticAIDeprecationWarning,
            stacklevel=2,
        )
        return _cached_async_http_client
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')


def _cached_async_http_client(*, provider: str | None = None, timeout: float = 600, connect: float = 5) -> Any:
    # 1.x shared one client per provider; a fresh one each call cannot be closed under another user's feet.
    return create_async_http_client(timeout=timeout, connect=connect)

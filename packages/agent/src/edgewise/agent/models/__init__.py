"""Models: the interface every LLM backend implements, and `infer_model` for names like `'openai:gpt-4o'`.

Backends here: `models.test.TestModel`, `models.function.FunctionModel`, `models.openai.OpenAIChatModel` for
OpenAI and every OpenAI-compatible server (`'openai:gpt-4o'`, `'ollama:llama3.2'`, `'grok:...'`),
`models.groq.GroqModel` (`'groq:...'`), `models.openrouter.OpenRouterModel` (`'openrouter:...'`),
`models.openai.OpenAIResponsesModel` (`'openai-responses:...'`), `models.anthropic.AnthropicModel`
(`'anthropic:...'`) and `models.google.GoogleModel` (`'google:...'`, or the deprecated `'google-gla:...'`).

`Model` (with `RunContext`), `ModelRequestParameters` and `StreamedResponse` are defined in the private modules
of this package, which the backends import; this module re-exports them and sits above the backends, so that
`infer_model('test')` can make a `TestModel` without an import cycle.
"""

from __future__ import annotations as _annotations

from typing import TypeAlias

from ..exceptions import UserError
from ._model import ALLOW_MODEL_REQUESTS, Model, check_allow_model_requests
from ._request_context import ModelRequestContext
from ._request_parameters import ModelRequestParameters
from ._streamed_response import StreamedResponse
from .test import TestModel

__all__ = (
    'Model',
    'ModelRequestParameters',
    'ModelRequestContext',
    'StreamedResponse',
    'KnownModelName',
    'ALLOW_MODEL_REQUESTS',
    'check_allow_model_requests',
    'infer_model',
    'KNOWN_PROVIDERS',
)

KnownModelName: TypeAlias = str
"""A model name: `'test'`, or `'<provider>:<model>'` such as `'openai:gpt-4o'`."""

KNOWN_PROVIDERS = (
    'anthropic',
    'bedrock',
    'cerebras',
    'cohere',
    'deepseek',
    'fireworks',
    'google',
    'google-gla',
    'google-vertex',
    'grok',
    'groq',
    'heroku',
    'huggingface',
    'litellm',
    'mistral',
    'moonshotai',
    'ollama',
    'openai',
    'openai-chat',
    'openai-responses',
    'openrouter',
    'together',
    'vercel',
    'xai',
)
"""Provider prefixes of pydantic-ai model names; recognised so that naming one gives a clear error."""


def infer_model(model: Model | KnownModelName) -> Model:
    """The model for `model`: a `Model` as is, `'test'` as a `TestModel`, a `'<provider>:<name>'` string...

    Raises:
        UserError: the name is unknown, or its provider is not available in this release.
    """
    if isinstance(model, Model):
        return model
    if model == 'test':
        return TestModel()
    provider, sep, name = model.partition(':')
    if not sep:
        raise UserError(f'Unknown model: {model!r}. Use `<provider>:<model name>` (e.g. `openai:gpt-4o`), or `test`.')
    if provider == 'openai-responses':
        from .openai import OpenAIResponsesModel

        return OpenAIResponsesModel(name, provider='openai')
    if provider == 'anthropic':
        from .anthropic import AnthropicModel

        return AnthropicModel(name, provider='anthropic')
    if provider in ('google', 'google-gla'):
        from ..providers import infer_provider
        from .google import GoogleModel

        return GoogleModel(name, provider=infer_provider(provider))
    if provider == 'groq':
        from .groq import GroqModel

        return GroqModel(name, provider='groq')
    if provider == 'openrouter':
        from .openrouter import OpenRouterModel

        return OpenRouterModel(name, provider='openrouter')
    if provider in _OPENAI_CHAT_PROVIDERS:
        from .openai import OpenAIChatModel

        return OpenAIChatModel(name, provider='openai' if provider == 'openai-chat' else provider)
    if provider in KNOWN_PROVIDERS:
        raise UserError(
            f'Model provider {provider!r} (for model {name!r}) is not available in edgewise.agent yet. '
            'Use `anthropic:`, `google:`, `openai-responses:` or an OpenAI-compatible provider (`openai:`, '
            '`ollama:`, `groq:`, ...), `TestModel` or `FunctionModel`, or pass your own `Model`.'
        )
    raise UserError(f'Unknown model provider {provider!r} in model name {model!r}.')


_OPENAI_CHAT_PROVIDERS = frozenset(
    {
        'openai', 'openai-chat', 'ollama', 'deepseek', 'together', 'fireworks', 'cerebras',
        'vercel', 'grok', 'xai', 'moonshotai', 'heroku', 'litellm',
    }
)  # fmt: skip

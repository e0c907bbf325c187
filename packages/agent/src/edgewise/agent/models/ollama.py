"""Ollama: `OllamaModel`, the Chat Completions API of a local Ollama server or of Ollama Cloud.

A local Ollama (0.5 and later) constrains its output to a JSON schema, so `NativeOutput` works. Ollama Cloud takes
the schema but does not enforce it: for a request that goes there (a base URL on `ollama.com`, or a model name
ending in `-cloud`, which a local server forwards to the cloud), the profile says the model has no JSON-schema
output, and `NativeOutput` fails with a clear error instead of unchecked output. `ToolOutput` and
`PromptedOutput` work on both.
"""

from __future__ import annotations as _annotations

from typing import Any, Literal
from urllib.parse import urlparse

from ..profiles import ModelProfile, ModelProfileSpec
from ..providers import Provider, infer_provider
from ..settings import ModelSettings
from .openai import OpenAIChatModel

__all__ = ('OllamaModel',)


def _goes_to_ollama_cloud(base_url: str, model_name: str) -> bool:
    host = urlparse(base_url).hostname or ''
    return host == 'ollama.com' or host.endswith('.ollama.com') or model_name.endswith('-cloud')


class OllamaModel(OpenAIChatModel):
    """A model on Ollama (`POST {base_url}/chat/completions`), streamed or not.

    `OllamaModel('qwen3')` reads `OLLAMA_BASE_URL` (such as `http://localhost:11434/v1`) and, for Ollama Cloud,
    `OLLAMA_API_KEY`.
    """

    _default_provider = 'ollama'

    def __init__(
        self,
        model_name: str,
        *,
        provider: Literal['ollama'] | Provider[Any] = 'ollama',
        profile: ModelProfileSpec | None = None,
        settings: ModelSettings | None = None,
    ) -> None:
        """Configure the model.

        Args:
            model_name: The model's name on the Ollama server (`'qwen3'`, `'llama3.2'`, `'gpt-oss:120b-cloud'`).
            provider: The provider or its name (`'ollama'`, or an `OllamaProvider` of your own).
            profile: The model's profile (or a function of the name giving it); by default the provider's,
                without JSON-schema output when the request goes to Ollama Cloud.
            settings: Default settings of this model's requests.
        """
        if isinstance(provider, str):
            provider = infer_provider(provider)
        if profile is None and _goes_to_ollama_cloud(provider.base_url, model_name):
            profile = ModelProfile(supports_json_schema_output=False)  # merged over the provider's profile
        super().__init__(model_name, provider=provider, profile=profile, settings=settings)

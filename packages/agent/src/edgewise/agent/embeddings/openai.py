"""`OpenAIEmbeddingModel`: OpenAI's embeddings endpoint, or that of any OpenAI-compatible provider, over httpx."""

from __future__ import annotations as _annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .._threads import run_in_thread
from ..exceptions import UserError
from ..models._model import check_allow_model_requests
from ..models._task_model import ProviderBacked
from ..providers import Provider
from ..usage import RequestUsage
from ._request import indexed_data_vectors, post_embeddings
from .base import EmbeddingModel
from .result import EmbeddingResult, EmbedInputType
from .settings import EmbeddingSettings

__all__ = (
    'OpenAIEmbeddingModel',
    'OpenAIEmbeddingModelName',
    'OpenAIEmbeddingSettings',
    'LatestOpenAIEmbeddingModelNames',
)

LatestOpenAIEmbeddingModelNames = Literal['text-embedding-3-large', 'text-embedding-3-small']
"""OpenAI's current embedding models."""

OpenAIEmbeddingModelName = str | LatestOpenAIEmbeddingModelNames
"""The name of an OpenAI (or OpenAI-compatible) embedding model."""

_MAX_INPUT_TOKENS = 8192
"""How many tokens one input to OpenAI's embedding models may have."""


class OpenAIEmbeddingSettings(EmbeddingSettings, total=False):
    """Settings of an OpenAI embedding request: the shared `EmbeddingSettings` (`dimensions`, `extra_headers`,
    `extra_body`)."""


@dataclass(init=False)
class OpenAIEmbeddingModel(ProviderBacked, EmbeddingModel):
    """An embedding model on OpenAI's `/embeddings` endpoint, or an OpenAI-compatible provider's
    (`provider='ollama'`, `OpenAIProvider(base_url=...)`, ...)."""

    def __init__(
        self,
        model_name: OpenAIEmbeddingModelName,
        *,
        provider: str | Provider[Any] = 'openai',
        settings: EmbeddingSettings | None = None,
    ) -> None:
        """Configure the model.

        Args:
            model_name: The model, e.g. `'text-embedding-3-small'`.
            provider: The provider or its name: `'openai'` (the default, key from `OPENAI_API_KEY`), another
                OpenAI-compatible provider's name, or a provider object.
            settings: Defaults of this model's requests.
        """
        self._bind(model_name, provider)
        super().__init__(settings=settings)

    async def embed(
        self, inputs: str | Sequence[str], *, input_type: EmbedInputType, settings: EmbeddingSettings | None = None
    ) -> EmbeddingResult:
        """The vectors of `inputs`, in one request (OpenAI embeds queries and documents alike).

        Raises:
            ModelHTTPError: the API answered with an error (after retries).
            ModelAPIError: the API could not be reached (after retries).
        """
        check_allow_model_requests()
        texts, merged = self.prepare_embed(inputs, settings)
        body: dict[str, Any] = {'input': texts, 'model': self._model_name, 'encoding_format': 'float'}
        if dimensions := merged.get('dimensions'):
            body['dimensions'] = dimensions
        data, embeddings = await post_embeddings(
            self._provider,
            'embeddings',
            body,
            merged,
            model_name=self._model_name,
            endpoint_name='embeddings',
            vectors=indexed_data_vectors,
            missing='no `data` with embeddings',
            count=len(texts),
        )
        return EmbeddingResult(
            embeddings=embeddings,
            inputs=texts,
            input_type=input_type,
            usage=_usage(data.get('usage')),
            model_name=data.get('model') or self._model_name,
            provider_name=self.system,
            provider_response_id=data.get('id'),
        )

    async def max_input_tokens(self) -> int | None:
        """8,192 on OpenAI's API; `None` (not known) on another provider."""
        return _MAX_INPUT_TOKENS if self.system == 'openai' else None

    async def count_tokens(self, text: str) -> int:
        """How many tokens `text` is to an OpenAI model, by OpenAI's tokenizer (`tiktoken`, if installed; it is not
        a dependency of Edgewise).

        Raises:
            UserError: the provider is not OpenAI, or `tiktoken` is not installed.
            ValueError: `tiktoken` does not know the model.
        """
        if self.system != 'openai':
            raise UserError('Counting tokens is not supported for non-OpenAI embedding models')
        try:
            tiktoken: Any = importlib.import_module('tiktoken')  # optional: not a dependency of Edgewise
        except ModuleNotFoundError:
            raise UserError(
                "Counting the tokens of an OpenAI embedding model needs OpenAI's tokenizer: `pip install tiktoken`."
            ) from None
        try:
            encoding = await run_in_thread(tiktoken.encoding_for_model, self._model_name)
        except KeyError as e:
            raise ValueError(f'The embedding model {self._model_name!r} is not supported by tiktoken') from e
        return len(encoding.encode(text))


def _usage(usage: Any) -> RequestUsage:
    """The `usage` of an embeddings answer (some compatible servers leave it out)."""
    if not isinstance(usage, Mapping):
        return RequestUsage()
    details = {k: v for k, v in usage.items() if k not in ('prompt_tokens', 'total_tokens') and type(v) is int}
    return RequestUsage(input_tokens=usage.get('prompt_tokens') or 0, details=details)

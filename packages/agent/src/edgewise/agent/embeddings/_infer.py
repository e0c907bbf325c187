"""The embedding model of a name: `infer_embedding_model`, and the names Edgewise knows."""

from __future__ import annotations as _annotations

from typing import Literal

from typing_extensions import TypeAliasType

from ..exceptions import UserError
from .base import EmbeddingModel
from .test import TestEmbeddingModel

__all__ = ('KnownEmbeddingModelName', 'infer_embedding_model')

KnownEmbeddingModelName = TypeAliasType(
    'KnownEmbeddingModelName',
    Literal[
        'google:gemini-embedding-2',
        'google:gemini-embedding-001',
        'openai:text-embedding-3-large',
        'openai:text-embedding-3-small',
        'cohere:embed-v4.0',
        'cohere:embed-english-v3.0',
        'cohere:embed-multilingual-v3.0',
        'voyageai:voyage-4-large',
        'voyageai:voyage-4',
        'voyageai:voyage-4-lite',
        'voyageai:voyage-3-large',
        'voyageai:voyage-3.5',
        'voyageai:voyage-3.5-lite',
        'voyageai:voyage-code-3',
        'voyageai:voyage-finance-2',
        'voyageai:voyage-law-2',
    ],
)
"""Embedding model names Edgewise knows (any `'<provider>:<model>'` of an OpenAI-compatible provider, Google, Cohere
or VoyageAI works)."""

_NOT_HERE = ('sentence-transformers', 'google-cloud')


def infer_embedding_model(model: EmbeddingModel | KnownEmbeddingModelName | str) -> EmbeddingModel:
    """The embedding model of `model`: a model as it is, `'test'` as a `TestEmbeddingModel`, or the model of a
    `'<provider>:<model>'` name (`'openai:...'` or another OpenAI-compatible provider, `'google:...'`, `'cohere:...'`,
    `'voyageai:...'`, `'bedrock:...'`).

    Raises:
        ValueError: the name has no provider prefix.
        UserError: the provider has no embedding model in Edgewise, or its key is not set.
    """
    if isinstance(model, EmbeddingModel):
        return model
    if model == 'test':
        return TestEmbeddingModel()
    provider, sep, name = model.partition(':')
    if not sep:
        raise ValueError('You must provide a provider prefix when specifying an embedding model name')
    if provider in ('google', 'google-gla'):
        from .google import GoogleEmbeddingModel

        return GoogleEmbeddingModel(name, provider='google')
    if provider == 'cohere':
        from .cohere import CohereEmbeddingModel

        return CohereEmbeddingModel(name)
    if provider == 'voyageai':
        from .voyageai import VoyageAIEmbeddingModel

        return VoyageAIEmbeddingModel(name)
    if provider == 'bedrock':
        from .bedrock import BedrockEmbeddingModel

        return BedrockEmbeddingModel(name, provider='bedrock')
    kind = provider
    if provider.startswith('gateway/'):  # the Gateway's route of an upstream embeds as that upstream does
        from ..providers.gateway import normalize_gateway_provider

        kind = normalize_gateway_provider(provider)
    if kind == 'bedrock':  # the Gateway's Bedrock route
        from .bedrock import BedrockEmbeddingModel

        return BedrockEmbeddingModel(name, provider=provider)
    if kind in _NOT_HERE:
        raise UserError(
            f'Embedding models of {provider!r} are not available in edgewise.agent: use `openai:`, another '
            'OpenAI-compatible provider, `google:`, `cohere:`, `voyageai:`, `bedrock:`, or an `EmbeddingModel` of '
            'your own.'
        )
    from ..providers import infer_provider

    try:
        provider_object = infer_provider('openai' if provider in ('openai-chat', 'openai-responses') else provider)
    except ValueError:
        raise UserError(f'Unknown embeddings model: {model}') from None
    from .openai import OpenAIEmbeddingModel

    return OpenAIEmbeddingModel(name, provider=provider_object)

"""`BedrockEmbeddingModel`: Titan, Cohere and Nova embedding models on Amazon Bedrock (`InvokeModel`), over httpx.

Each family has its own JSON body: Cohere takes many texts in one request, Titan and Nova one text per request (sent
concurrently, at most `bedrock_max_concurrency` at a time). Requests are signed by the `BedrockProvider` as the chat
model's are; the input token count comes from the `x-amzn-bedrock-input-token-count` response header.
"""

from __future__ import annotations as _annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast
from urllib.parse import quote

import anyio

from ..exceptions import ModelAPIError, UnexpectedModelBehavior, UserError
from ..models import _http
from ..models._bedrock_errors import bedrock_http_error
from ..models._model import check_allow_model_requests
from ..models._task_model import ProviderBacked
from ..providers import Provider
from ..providers.bedrock import remove_bedrock_geo_prefix
from ..usage import RequestUsage
from .base import EmbeddingModel
from .result import EmbeddingResult, EmbedInputType
from .settings import EmbeddingSettings

__all__ = (
    'BedrockEmbeddingModel',
    'BedrockEmbeddingModelName',
    'BedrockEmbeddingSettings',
    'LatestBedrockEmbeddingModelNames',
)

LatestBedrockEmbeddingModelNames = Literal[
    'amazon.nova-2-multimodal-embeddings-v1:0',
    'cohere.embed-v4:0',
    'amazon.titan-embed-text-v2:0',
    'cohere.embed-english-v3',
    'cohere.embed-multilingual-v3',
]
"""The current embedding models on Bedrock."""

BedrockEmbeddingModelName = str | LatestBedrockEmbeddingModelNames
"""A Bedrock embedding model id (or inference profile id)."""

Truncation = Literal['NONE', 'START', 'END']


class BedrockEmbeddingSettings(EmbeddingSettings, total=False):
    """Settings of a Bedrock embedding request: the shared ones and Bedrock's own, prefixed `bedrock_`."""

    bedrock_titan_normalize: bool
    """Titan v2: whether vectors are normalized (default `True`)."""
    bedrock_cohere_max_tokens: int
    """Cohere v4: the most tokens of each input that are embedded."""
    bedrock_cohere_input_type: Literal['search_document', 'search_query', 'classification', 'clustering']
    """Cohere: what the texts are (by default `search_document` for documents and `search_query` for queries)."""
    bedrock_cohere_truncate: Truncation
    """Cohere: how a text too long is cut (wins over `truncate`)."""
    bedrock_nova_truncate: Truncation
    """Nova: how a text too long is cut (wins over `truncate`)."""
    bedrock_nova_embedding_purpose: Literal[
        'GENERIC_INDEX',
        'GENERIC_RETRIEVAL',
        'TEXT_RETRIEVAL',
        'IMAGE_RETRIEVAL',
        'VIDEO_RETRIEVAL',
        'DOCUMENT_RETRIEVAL',
        'AUDIO_RETRIEVAL',
        'CLASSIFICATION',
        'CLUSTERING',
    ]
    """Nova: what the vectors are for (by default `GENERIC_INDEX` for documents, `GENERIC_RETRIEVAL` for queries)."""
    bedrock_inference_profile: str
    """An inference profile to call instead of the model's id."""
    bedrock_max_concurrency: int
    """Titan and Nova: how many one-text requests run at once (default 5, at least 1)."""


_MAX_INPUT_TOKENS = {
    'amazon.titan-embed-text-v1': 8192,
    'amazon.titan-embed-text-v2:0': 8192,
    'cohere.embed-english-v3': 512,
    'cohere.embed-multilingual-v3': 512,
    'cohere.embed-v4:0': 128000,
    'amazon.nova-2-multimodal-embeddings-v1:0': 8192,
}

_FAMILIES = ('amazon.titan-embed', 'cohere.embed', 'amazon.nova')


def _version(model_name: str) -> int | None:
    found = re.search(r'v(\d+)', model_name)
    return int(found.group(1)) if found else None


def _truncation(settings: Mapping[str, Any], own: str) -> str:
    return str(settings.get(own) or ('END' if settings.get('truncate') else 'NONE'))


def titan_body(text: str, settings: Mapping[str, Any], version: int | None) -> dict[str, Any]:
    """The body of a Titan request (v1 takes the text alone)."""
    body: dict[str, Any] = {'inputText': text}
    if version != 1:
        if (dimensions := settings.get('dimensions')) is not None:
            body['dimensions'] = dimensions
        body['normalize'] = settings.get('bedrock_titan_normalize', True)
    return body


def cohere_body(
    texts: list[str], input_type: EmbedInputType, settings: Mapping[str, Any], version: int | None
) -> dict[str, Any]:
    """The body of a Cohere request (v3 takes no token limit or dimensions)."""
    default_type = 'search_document' if input_type == 'document' else 'search_query'
    body: dict[str, Any] = {'texts': texts, 'input_type': settings.get('bedrock_cohere_input_type', default_type)}
    if version != 3:
        if (max_tokens := settings.get('bedrock_cohere_max_tokens')) is not None:
            body['max_tokens'] = max_tokens
        if (dimensions := settings.get('dimensions')) is not None:
            body['output_dimension'] = dimensions
    body['truncate'] = _truncation(settings, 'bedrock_cohere_truncate')
    return body


def nova_body(text: str, input_type: EmbedInputType, settings: Mapping[str, Any]) -> dict[str, Any]:
    """The body of a Nova request (one text, embedded for a purpose)."""
    default_purpose = 'GENERIC_RETRIEVAL' if input_type == 'query' else 'GENERIC_INDEX'
    params: dict[str, Any] = {
        'embeddingPurpose': settings.get('bedrock_nova_embedding_purpose', default_purpose),
        'text': {'value': text, 'truncationMode': _truncation(settings, 'bedrock_nova_truncate')},
    }
    if (dimensions := settings.get('dimensions')) is not None:
        params['embeddingDimension'] = dimensions
    return {'taskType': 'SINGLE_EMBEDDING', 'singleEmbeddingParams': params}


def _vectors(family: str, data: Any) -> list[list[float]]:
    """The vectors of an answer, by family."""
    try:
        if family == 'amazon.titan-embed':
            return [list(data['embedding'])]
        if family == 'amazon.nova':
            return [list(data['embeddings'][0]['embedding'])]
        found = data['embeddings']
        found = found['float'] if isinstance(found, dict) else found
        return [list(vector) for vector in found]
    except (KeyError, IndexError, TypeError) as e:
        raise UnexpectedModelBehavior(
            f'Invalid response from a Bedrock {family} embedding model: no embeddings', str(data)[:2000]
        ) from e


@dataclass(init=False)
class BedrockEmbeddingModel(ProviderBacked, EmbeddingModel):
    """An embedding model on Bedrock (`BedrockProvider`: AWS credentials and region from the environment)."""

    _normalized: str = field(repr=False)
    _family: str = field(repr=False)

    def __init__(
        self,
        model_name: BedrockEmbeddingModelName,
        *,
        provider: str | Provider[Any] = 'bedrock',
        settings: EmbeddingSettings | None = None,
    ) -> None:
        """Configure the model: its id (`'amazon.titan-embed-text-v2:0'`, `'cohere.embed-v4:0'`, ...), the provider
        or its name, and the defaults of its requests.

        Raises:
            UserError: the model is of a family Edgewise cannot embed with, or no AWS credentials or region are found.
        """
        normalized = remove_bedrock_geo_prefix(model_name)
        family = next((prefix for prefix in _FAMILIES if normalized.startswith(prefix)), None)
        if family is None:
            raise UserError(
                f'Unsupported Bedrock embedding model: {model_name}. Supported model prefixes: {list(_FAMILIES)}'
            )
        self._normalized = normalized
        self._family = family
        self._bind(model_name, provider)
        EmbeddingModel.__init__(self, settings=settings)

    async def embed(
        self, inputs: str | Sequence[str], *, input_type: EmbedInputType, settings: EmbeddingSettings | None = None
    ) -> EmbeddingResult:
        """The vectors of `inputs`: one request for Cohere, one per text (run concurrently) for Titan and Nova.

        Raises:
            UserError: `bedrock_max_concurrency` is below 1.
            ModelHTTPError: Bedrock answered with an error (after retries).
            ModelAPIError: Bedrock could not be reached (after retries).
        """
        check_allow_model_requests()
        texts, merged = self.prepare_embed(inputs, settings)
        bedrock = cast(Mapping[str, Any], merged)
        version = _version(self._normalized)
        if self._family == 'cohere.embed':
            data, tokens = await self._invoke(cohere_body(texts, input_type, bedrock, version), bedrock)
            vectors, response_id = _vectors(self._family, data), data.get('id')
        else:
            vectors, tokens = await self._one_by_one(texts, input_type, bedrock, version)
            response_id = None
        if len(vectors) != len(texts):
            raise UnexpectedModelBehavior(f'bedrock returned {len(vectors)} embeddings for {len(texts)} inputs')
        return EmbeddingResult(
            embeddings=vectors,
            inputs=texts,
            input_type=input_type,
            usage=RequestUsage(input_tokens=tokens),
            model_name=self._model_name,
            provider_name=self._provider.name,
            provider_response_id=response_id,
        )

    async def _one_by_one(
        self, texts: list[str], input_type: EmbedInputType, settings: Mapping[str, Any], version: int | None
    ) -> tuple[list[list[float]], int]:
        limit = settings.get('bedrock_max_concurrency', 5)
        if limit < 1:
            raise UserError(f'bedrock_max_concurrency must be >= 1, got {limit}.')
        limiter = anyio.CapacityLimiter(limit)
        results: list[tuple[list[float], int] | None] = [None] * len(texts)

        async def one(index: int, text: str) -> None:
            async with limiter:
                if self._family == 'amazon.titan-embed':
                    body = titan_body(text, settings, version)
                else:
                    body = nova_body(text, input_type, settings)
                data, tokens = await self._invoke(body, settings)
                results[index] = (_vectors(self._family, data)[0], tokens)

        try:
            async with anyio.create_task_group() as group:
                for index, text in enumerate(texts):
                    group.start_soon(one, index, text)
        except BaseExceptionGroup as group_error:
            # One error, whatever the number of inputs: the first model error, else the first error (the group
            # stays reachable as its context).
            errors = group_error.exceptions
            raise next((e for e in errors if isinstance(e, ModelAPIError)), errors[0]) from None
        done = [result for result in results if result is not None]
        return [vector for vector, _ in done], sum(tokens for _, tokens in done)

    async def _invoke(self, body: dict[str, Any], settings: Mapping[str, Any]) -> tuple[Any, int]:
        provider = self._provider
        model_id = settings.get('bedrock_inference_profile') or self._model_name
        extra_body = settings.get('extra_body')
        if isinstance(extra_body, dict):
            body = {**body, **extra_body}
        call = _http.provider_call(
            provider,
            f'{provider.base_url}/model/{quote(model_id, safe="")}/invoke',
            body,
            {**provider.request_headers(), 'accept': 'application/json', **(settings.get('extra_headers') or {})},
            model_name=self._model_name,
            operation='embeddings',
            endpoint_name='invoke',
        )
        call.error_key = None
        call.http_error = bedrock_http_error
        call.sign = getattr(provider, 'sign_request', None)
        data, headers = await _http.post_for_data_and_headers(call)
        try:
            tokens = int(headers.get('x-amzn-bedrock-input-token-count') or 0)
        except ValueError:
            tokens = 0
        return data, tokens

    async def max_input_tokens(self) -> int | None:
        """The model's input limit, where known."""
        return _MAX_INPUT_TOKENS.get(self._normalized)

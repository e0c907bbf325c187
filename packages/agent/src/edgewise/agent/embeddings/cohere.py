"""`CohereEmbeddingModel`: Cohere's Embed models on its v2 API (`/v2/embed`, and `/v1/tokenize` to count tokens),
over httpx.

The key comes from `CO_API_KEY` and the base URL from `CO_BASE_URL` (default `https://api.cohere.com`) through
`CohereProvider`, or from a provider passed as `provider=` (whose base URL carries no API version).
"""

from __future__ import annotations as _annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

from ..models._model import check_allow_model_requests
from ..models._task_model import ProviderBacked, post_json
from ..providers import Provider
from ..providers.cohere import CohereProvider
from ..usage import RequestUsage
from ._request import answer_error, post_embeddings
from .base import EmbeddingModel
from .result import EmbeddingResult, EmbedInputType
from .settings import EmbeddingSettings

if TYPE_CHECKING:
    pass

__all__ = (
    'CohereEmbeddingModel',
    'CohereEmbeddingModelName',
    'CohereEmbeddingSettings',
    'LatestCohereEmbeddingModelNames',
)

LatestCohereEmbeddingModelNames = Literal['embed-v4.0', 'embed-english-v3.0', 'embed-multilingual-v3.0']
"""Cohere's current Embed models."""

CohereEmbeddingModelName = str | LatestCohereEmbeddingModelNames
"""The name of a Cohere embedding model."""

CohereEmbedInputType = Literal['search_document', 'search_query', 'classification', 'clustering', 'image']
"""What Cohere embeds the inputs as."""

_MAX_INPUT_TOKENS = {
    'embed-v4.0': 128_000,
    'embed-english-v3.0': 512,
    'embed-english-light-v3.0': 512,
    'embed-multilingual-v3.0': 512,
    'embed-multilingual-light-v3.0': 512,
}


class CohereEmbeddingSettings(EmbeddingSettings, total=False):
    """Settings of a Cohere embedding request: the shared ones and Cohere's own, prefixed `cohere_`."""

    cohere_max_tokens: int
    """How many tokens of each input are embedded at most."""
    cohere_input_type: CohereEmbedInputType
    """Cohere's input type, over the one of the request's input type (`'search_query'` for queries,
    `'search_document'` for documents)."""
    cohere_truncate: Literal['NONE', 'START', 'END']
    """What is cut from an input that is too long: nothing (`'NONE'`: the request fails), its start or its end.
    Wins over `truncate` (which, when true, means `'END'`)."""


@dataclass(init=False)
class CohereEmbeddingModel(ProviderBacked, EmbeddingModel):
    """A Cohere Embed model on Cohere's v2 API (`CO_API_KEY`). Vectors come back as floats."""

    def __init__(
        self,
        model_name: CohereEmbeddingModelName,
        *,
        provider: Literal['cohere'] | Provider[Any] = 'cohere',
        settings: EmbeddingSettings | None = None,
    ) -> None:
        """Configure the model.

        Args:
            model_name: The model, e.g. `'embed-v4.0'`.
            provider: `'cohere'` (the default: key from `CO_API_KEY`, base URL from `CO_BASE_URL`), or a provider.
            settings: Defaults of this model's requests.

        Raises:
            UserError: `provider='cohere'` and `CO_API_KEY` is not set.
        """
        self._bind(model_name, CohereProvider() if provider == 'cohere' else provider)
        EmbeddingModel.__init__(self, settings=settings)

    async def embed(
        self, inputs: str | Sequence[str], *, input_type: EmbedInputType, settings: EmbeddingSettings | None = None
    ) -> EmbeddingResult:
        """The vectors of `inputs`, in one `/v2/embed` request; usage is the input tokens Cohere bills (other billed
        units, such as images, go to the usage's details).

        Raises:
            ModelHTTPError: the API answered with an error (after retries).
            ModelAPIError: the API could not be reached (after retries).
        """
        check_allow_model_requests()
        texts, merged = self.prepare_embed(inputs, settings)
        cohere = cast(CohereEmbeddingSettings, merged)
        default_type = 'search_document' if input_type == 'document' else 'search_query'
        if 'cohere_truncate' in cohere:
            truncate = cohere['cohere_truncate']
        else:
            truncate = 'END' if cohere.get('truncate') else 'NONE'
        body: dict[str, Any] = {
            'model': self._model_name,
            'texts': texts,
            'input_type': cohere.get('cohere_input_type', default_type),
            'embedding_types': ['float'],
            'truncate': truncate,
        }
        if (dimensions := cohere.get('dimensions')) is not None:
            body['output_dimension'] = dimensions
        if (max_tokens := cohere.get('cohere_max_tokens')) is not None:
            body['max_tokens'] = max_tokens
        data, embeddings = await post_embeddings(
            self._provider,
            'v2/embed',
            body,
            cohere,
            model_name=self._model_name,
            endpoint_name='embed',
            vectors=lambda data: data['embeddings']['float'],
            missing='no `embeddings` of type `float`',
            count=len(texts),
        )
        return EmbeddingResult(
            embeddings=embeddings,
            inputs=texts,
            input_type=input_type,
            usage=_usage(data.get('meta')),
            model_name=self._model_name,
            provider_name=self.system,
            provider_response_id=data.get('id'),
        )

    async def max_input_tokens(self) -> int | None:
        """The model's input limit, where known."""
        return _MAX_INPUT_TOKENS.get(self._model_name)

    async def count_tokens(self, text: str) -> int:
        """How many tokens `text` is to the model, as Cohere's `/v1/tokenize` counts them (one request).

        Raises:
            ModelHTTPError: the API answered with an error (after retries).
            ModelAPIError: the API could not be reached (after retries).
        """
        check_allow_model_requests()
        provider = self._provider
        data = await post_json(
            provider,
            'v1/tokenize',
            {'model': self._model_name, 'text': text},
            provider.request_headers(),
            model_name=self._model_name,
            operation='embeddings',
            endpoint_name='tokenize',
        )
        tokens = data.get('tokens') if isinstance(data, Mapping) else None
        if not isinstance(tokens, list):
            raise answer_error(provider, 'tokenize', 'no `tokens`', data)
        return len(tokens)


def _usage(meta: Any) -> RequestUsage:
    """The billed units of an answer: input tokens, and the other units (images, ...) as details."""
    billed = meta.get('billed_units') if isinstance(meta, Mapping) else None
    if not isinstance(billed, Mapping):
        return RequestUsage()
    units = {k: int(v) for k, v in billed.items() if isinstance(v, int | float) and not isinstance(v, bool) and v > 0}
    input_tokens = units.pop('input_tokens', 0)
    return RequestUsage(input_tokens=input_tokens, details=units)

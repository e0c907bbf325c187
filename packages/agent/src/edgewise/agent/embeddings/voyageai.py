"""`VoyageAIEmbeddingModel`: VoyageAI's embedding models on its API (`/v1/embeddings`), over httpx."""

from __future__ import annotations as _annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast, get_args

from ..models._model import check_allow_model_requests
from ..models._task_model import ProviderBacked
from ..providers import Provider
from ..providers.voyageai import VoyageAIProvider
from ..usage import RequestUsage
from ._request import indexed_data_vectors, post_embeddings
from .base import EmbeddingModel
from .result import EmbeddingResult, EmbedInputType
from .settings import EmbeddingSettings

__all__ = (
    'LatestVoyageAIEmbeddingModelNames',
    'VoyageAIEmbedInputType',
    'VoyageAIEmbeddingModel',
    'VoyageAIEmbeddingModelName',
    'VoyageAIEmbeddingSettings',
)

LatestVoyageAIEmbeddingModelNames = Literal[
    'voyage-4-large',
    'voyage-4',
    'voyage-4-lite',
    'voyage-3-large',
    'voyage-3.5',
    'voyage-3.5-lite',
    'voyage-code-3',
    'voyage-finance-2',
    'voyage-law-2',
]
"""VoyageAI's current embedding models."""

VoyageAIEmbeddingModelName = str | LatestVoyageAIEmbeddingModelNames
"""The name of a VoyageAI embedding model."""

VoyageAIEmbedInputType = Literal['query', 'document', 'none']
"""How VoyageAI embeds the inputs: as queries or documents (each with a prefix of its own), or as they are
(`'none'`)."""

_MAX_INPUT_TOKENS = dict.fromkeys(get_args(LatestVoyageAIEmbeddingModelNames), 32000) | {
    'voyage-law-2': 16_000,
    'voyage-code-2': 16_000,
}


class VoyageAIEmbeddingSettings(EmbeddingSettings, total=False):
    """Settings of a VoyageAI embedding request: the shared ones and VoyageAI's own, prefixed `voyageai_`."""

    voyageai_input_type: VoyageAIEmbedInputType
    """VoyageAI's input type, over the request's (`'none'` embeds the texts without a prefix)."""


@dataclass(init=False)
class VoyageAIEmbeddingModel(ProviderBacked, EmbeddingModel):
    """A VoyageAI embedding model (`VoyageAIProvider`: key in `VOYAGE_API_KEY`)."""

    def __init__(
        self,
        model_name: VoyageAIEmbeddingModelName,
        *,
        provider: Literal['voyageai'] | Provider[Any] = 'voyageai',
        settings: EmbeddingSettings | None = None,
    ) -> None:
        """Configure the model.

        Args:
            model_name: The model, e.g. `'voyage-3.5'`.
            provider: `'voyageai'` (the default: a `VoyageAIProvider` keyed by `VOYAGE_API_KEY`), or a provider.
            settings: Defaults of this model's requests.

        Raises:
            UserError: `provider='voyageai'` and `VOYAGE_API_KEY` is not set.
        """
        self._bind(model_name, VoyageAIProvider() if provider == 'voyageai' else provider)
        EmbeddingModel.__init__(self, settings=settings)

    async def embed(
        self, inputs: str | Sequence[str], *, input_type: EmbedInputType, settings: EmbeddingSettings | None = None
    ) -> EmbeddingResult:
        """The vectors of `inputs`, in one request; `truncate` (off by default) lets VoyageAI cut inputs that are
        too long instead of refusing them.

        Raises:
            ModelHTTPError: the API answered with an error (after retries).
            ModelAPIError: the API could not be reached (after retries).
        """
        check_allow_model_requests()
        texts, merged = self.prepare_embed(inputs, settings)
        voyage = cast(VoyageAIEmbeddingSettings, merged)
        kind = voyage.get('voyageai_input_type', input_type)
        body: dict[str, Any] = {
            'input': texts,
            'model': self._model_name,
            'input_type': None if kind == 'none' else kind,
            'truncation': bool(voyage.get('truncate', False)),
        }
        if (dimensions := voyage.get('dimensions')) is not None:
            body['output_dimension'] = dimensions
        data, embeddings = await post_embeddings(
            self._provider,
            'embeddings',
            body,
            voyage,
            model_name=self._model_name,
            endpoint_name='embeddings',
            vectors=indexed_data_vectors,
            missing='no `data` with embeddings',
            count=len(texts),
        )
        usage = data.get('usage')
        total = usage.get('total_tokens') if isinstance(usage, Mapping) else None
        return EmbeddingResult(
            embeddings=embeddings,
            inputs=texts,
            input_type=input_type,
            usage=RequestUsage(input_tokens=total if type(total) is int else 0),
            model_name=self._model_name,
            provider_name=self.system,
        )

    async def max_input_tokens(self) -> int | None:
        """The model's input limit, where known."""
        return _MAX_INPUT_TOKENS.get(self._model_name)

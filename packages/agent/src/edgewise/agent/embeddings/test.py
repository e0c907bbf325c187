"""`TestEmbeddingModel`: vectors of ones, for tests (it remembers the settings of its last request)."""

from __future__ import annotations as _annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from ..usage import RequestUsage
from .base import EmbeddingModel
from .result import EmbeddingResult, EmbedInputType
from .settings import EmbeddingSettings

__all__ = ('TestEmbeddingModel',)


def _estimated_tokens(text: str) -> int:
    # About one token per word; blank text is none.
    return len(text.split())


@dataclass(init=False)
class TestEmbeddingModel(EmbeddingModel):
    """An embedding model for tests: every vector is `dimensions` ones; `last_settings` is what the last request
    was given (the model's defaults merged in)."""

    __test__ = False

    _model_name: str
    _provider_name: str
    _dimensions: int
    last_settings: EmbeddingSettings | None = None
    """The settings of the last request."""

    def __init__(
        self,
        model_name: str = 'test',
        *,
        provider_name: str = 'test',
        dimensions: int = 8,
        settings: EmbeddingSettings | None = None,
    ) -> None:
        """Configure the model.

        Args:
            model_name: The model name its results give.
            provider_name: The provider name its results give.
            dimensions: The length of its vectors (`settings['dimensions']` wins).
            settings: Defaults of its requests.
        """
        self._model_name = model_name
        self._provider_name = provider_name
        self._dimensions = dimensions
        self.last_settings = None
        super().__init__(settings=settings)

    @property
    def model_name(self) -> str:
        """The model name its results give."""
        return self._model_name

    @property
    def system(self) -> str:
        """The provider name its results give."""
        return self._provider_name

    async def embed(
        self, inputs: str | Sequence[str], *, input_type: EmbedInputType, settings: EmbeddingSettings | None = None
    ) -> EmbeddingResult:
        """Vectors of ones, one per input; usage counts about one token per word."""
        texts, merged = self.prepare_embed(inputs, settings)
        self.last_settings = merged
        dimensions = merged.get('dimensions') or self._dimensions
        return EmbeddingResult(
            embeddings=[[1.0] * dimensions for _ in texts],
            inputs=texts,
            input_type=input_type,
            usage=RequestUsage(input_tokens=sum(_estimated_tokens(text) for text in texts)),
            model_name=self._model_name,
            provider_name=self._provider_name,
            provider_response_id=str(uuid.uuid4()),
        )

    async def max_input_tokens(self) -> int | None:
        """1,024."""
        return 1024

    async def count_tokens(self, text: str) -> int:
        """About one token per word."""
        return _estimated_tokens(text)

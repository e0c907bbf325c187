"""`EmbeddingModel`: what an embedding model implements (subclass it for a model of your own)."""

from __future__ import annotations as _annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from .result import EmbeddingResult, EmbedInputType
from .settings import EmbeddingSettings, merge_embedding_settings

__all__ = ('EmbeddingModel',)


class EmbeddingModel(ABC):
    """An embedding model: turns texts into vectors (`embed`), and may say how many tokens it takes.

    Subclasses give `model_name`, `system` and `embed`, and call `prepare_embed` at the start of `embed`.
    """

    _settings: EmbeddingSettings | None = None

    def __init__(self, *, settings: EmbeddingSettings | None = None) -> None:
        """Keep `settings` as the defaults of this model's requests."""
        self._settings = settings

    @property
    def settings(self) -> EmbeddingSettings | None:
        """The defaults of this model's requests."""
        return self._settings

    @property
    def base_url(self) -> str | None:
        """The base URL of the provider's API, if the model has one."""
        return None

    @property
    @abstractmethod
    def model_name(self) -> str:
        """The model's name."""
        raise NotImplementedError

    @property
    @abstractmethod
    def system(self) -> str:
        """The provider's name (`'openai'`, ...)."""
        raise NotImplementedError

    @abstractmethod
    async def embed(
        self, inputs: str | Sequence[str], *, input_type: EmbedInputType, settings: EmbeddingSettings | None = None
    ) -> EmbeddingResult:
        """The vectors of `inputs` (one text or several), embedded as queries or as documents."""
        raise NotImplementedError

    def prepare_embed(
        self, inputs: str | Sequence[str], settings: EmbeddingSettings | None = None
    ) -> tuple[list[str], EmbeddingSettings]:
        """The inputs as a list, and `settings` over the model's defaults."""
        listed = [inputs] if isinstance(inputs, str) else list(inputs)
        return listed, merge_embedding_settings(self._settings, settings) or {}

    async def max_input_tokens(self) -> int | None:
        """How many tokens one input may have, or `None` if that is not known."""
        return None

    async def count_tokens(self, text: str) -> int:
        """How many tokens `text` is to this model.

        Raises:
            NotImplementedError: the model cannot count tokens.
        """
        raise NotImplementedError(f'{type(self).__name__} cannot count tokens.')

"""`WrapperEmbeddingModel`: a model around another, passing everything through (override what you change)."""

from __future__ import annotations as _annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ._infer import infer_embedding_model
from .base import EmbeddingModel
from .result import EmbeddingResult, EmbedInputType
from .settings import EmbeddingSettings

__all__ = ('WrapperEmbeddingModel',)


@dataclass(init=False)
class WrapperEmbeddingModel(EmbeddingModel):
    """The base of a model that wraps another (to cache, log or limit its requests): every method and attribute
    goes to `wrapped` unless the subclass overrides it."""

    wrapped: EmbeddingModel
    """The model wrapped."""

    def __init__(self, wrapped: EmbeddingModel | str) -> None:
        """Wrap a model, or the model of a name (`'openai:text-embedding-3-small'`)."""
        super().__init__()
        self.wrapped = infer_embedding_model(wrapped) if isinstance(wrapped, str) else wrapped

    async def embed(
        self, inputs: str | Sequence[str], *, input_type: EmbedInputType, settings: EmbeddingSettings | None = None
    ) -> EmbeddingResult:
        """The wrapped model's vectors."""
        return await self.wrapped.embed(inputs, input_type=input_type, settings=settings)

    async def max_input_tokens(self) -> int | None:
        """The wrapped model's limit."""
        return await self.wrapped.max_input_tokens()

    async def count_tokens(self, text: str) -> int:
        """The wrapped model's count."""
        return await self.wrapped.count_tokens(text)

    @property
    def model_name(self) -> str:
        """The wrapped model's name."""
        return self.wrapped.model_name

    @property
    def system(self) -> str:
        """The wrapped model's provider."""
        return self.wrapped.system

    @property
    def settings(self) -> EmbeddingSettings | None:
        """The wrapped model's defaults."""
        return self.wrapped.settings

    @property
    def base_url(self) -> str | None:
        """The wrapped model's base URL."""
        return self.wrapped.base_url

    def __getattr__(self, item: str) -> Any:
        if item == 'wrapped':  # not set yet (during unpickling): no endless recursion
            raise AttributeError(item)
        return getattr(self.wrapped, item)

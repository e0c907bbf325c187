"""`WrapperEmbeddingModel`: a model around another, passing everything through (override what you change)."""

from __future__ import annotations as _annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..models._task_model import TaskModelWrapper
from ._infer import infer_embedding_model
from .base import EmbeddingModel
from .result import EmbeddingResult, EmbedInputType
from .settings import EmbeddingSettings

__all__ = ('WrapperEmbeddingModel',)


@dataclass(init=False)
class WrapperEmbeddingModel(TaskModelWrapper[EmbeddingModel], EmbeddingModel):
    """The base of a model that wraps another (to cache, log or limit its requests): every method and attribute
    (name, provider, settings, base URL, ...) goes to `wrapped` unless the subclass overrides it."""

    def __init__(self, wrapped: EmbeddingModel | str) -> None:
        """Wrap a model, or the model of a name (`'openai:text-embedding-3-small'`)."""
        EmbeddingModel.__init__(self)
        self._wrap(wrapped, infer_embedding_model)

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

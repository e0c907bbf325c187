"""Embeddings: texts turned into vectors, for search and retrieval, as pydantic-ai's `embeddings` module.

`Embedder('openai:text-embedding-3-small')` embeds queries (`embed_query`) and documents (`embed_documents`), async
or sync. Models: `OpenAIEmbeddingModel` (OpenAI and OpenAI-compatible providers), `GoogleEmbeddingModel` (the Gemini
API), `CohereEmbeddingModel`, `VoyageAIEmbeddingModel`, `TestEmbeddingModel`, and `WrapperEmbeddingModel` to wrap
one. Subclass `EmbeddingModel` for another.
"""

from __future__ import annotations as _annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import partial

from .._threads import run_in_new_loop
from ..models._task_model import TaskModelFacade
from ..models.instrumented import InstrumentationSettings
from ._infer import KnownEmbeddingModelName, infer_embedding_model
from .base import EmbeddingModel
from .instrumented import InstrumentedEmbeddingModel, instrument_embedding_model
from .result import EmbeddingResult, EmbedInputType
from .settings import EmbeddingSettings, merge_embedding_settings
from .test import TestEmbeddingModel
from .wrapper import WrapperEmbeddingModel

__all__ = [
    'InstrumentedEmbeddingModel',
    'instrument_embedding_model',
    'Embedder',
    'EmbeddingModel',
    'EmbeddingSettings',
    'EmbeddingResult',
    'EmbedInputType',
    'merge_embedding_settings',
    'KnownEmbeddingModelName',
    'infer_embedding_model',
    'WrapperEmbeddingModel',
    'TestEmbeddingModel',
]


@dataclass(init=False, eq=False)
class Embedder(TaskModelFacade[EmbeddingModel, EmbeddingSettings]):
    """Embeds texts with one model: `await embedder.embed_query('...')`, `embedder.embed_documents_sync([...])`.

    The model is found from its name on first use (or at once with `defer_model_check=False`), and `override`
    swaps it for a block (a `TestEmbeddingModel` in tests).
    """

    instrument: InstrumentationSettings | bool | None
    """Whether each request gets an `embeddings <model>` span; `None` follows `Embedder.instrument_all()`, off by
    default."""
    _span_name = 'embeddings {model_name}'

    def __init__(
        self,
        model: EmbeddingModel | KnownEmbeddingModelName | str,
        *,
        settings: EmbeddingSettings | None = None,
        defer_model_check: bool = True,
        instrument: InstrumentationSettings | bool | None = None,
    ) -> None:
        """Configure the embedder.

        Args:
            model: The model, or its name (`'openai:text-embedding-3-small'`).
            settings: Defaults of every request (over the model's own).
            defer_model_check: Find the model of a name on first use (`True`), or now.
            instrument: Whether requests get a span (`None`: `Embedder.instrument_all()`'s choice).
        """
        super().__init__(model, settings=settings, defer_model_check=defer_model_check, instrument=instrument)

    @staticmethod
    def instrument_all(instrument: InstrumentationSettings | bool = True) -> None:
        """Whether embedders whose `instrument` is `None` trace their requests."""
        Embedder._instrument_default = instrument

    @staticmethod
    def _infer(model: EmbeddingModel | str) -> EmbeddingModel:
        return infer_embedding_model(model)

    def override(
        self, *, model: EmbeddingModel | KnownEmbeddingModelName | str | None = None
    ) -> AbstractContextManager[None]:
        """Use another model inside the block (in this context only)."""
        return self._override(model)

    async def embed_query(
        self, query: str | Sequence[str], *, settings: EmbeddingSettings | None = None
    ) -> EmbeddingResult:
        """Embed one search query or several."""
        return await self.embed(query, input_type='query', settings=settings)

    async def embed_documents(
        self, documents: str | Sequence[str], *, settings: EmbeddingSettings | None = None
    ) -> EmbeddingResult:
        """Embed one document or several (the texts searched)."""
        return await self.embed(documents, input_type='document', settings=settings)

    async def embed(
        self, inputs: str | Sequence[str], *, input_type: EmbedInputType, settings: EmbeddingSettings | None = None
    ) -> EmbeddingResult:
        """Embed `inputs` as queries or documents, `settings` over the embedder's."""
        model, merged, span = self._request(settings)
        with span:
            return await model.embed(inputs, input_type=input_type, settings=merged)

    async def max_input_tokens(self) -> int | None:
        """How many tokens one input may have, or `None` if not known."""
        return await self._get_model().max_input_tokens()

    async def count_tokens(self, text: str) -> int:
        """How many tokens `text` is to the model (where the model can count)."""
        return await self._get_model().count_tokens(text)

    def embed_query_sync(
        self, query: str | Sequence[str], *, settings: EmbeddingSettings | None = None
    ) -> EmbeddingResult:
        """`embed_query` from synchronous code (not inside async code)."""
        return run_in_new_loop(partial(self.embed_query, query, settings=settings))

    def embed_documents_sync(
        self, documents: str | Sequence[str], *, settings: EmbeddingSettings | None = None
    ) -> EmbeddingResult:
        """`embed_documents` from synchronous code (not inside async code)."""
        return run_in_new_loop(partial(self.embed_documents, documents, settings=settings))

    def embed_sync(
        self, inputs: str | Sequence[str], *, input_type: EmbedInputType, settings: EmbeddingSettings | None = None
    ) -> EmbeddingResult:
        """`embed` from synchronous code (not inside async code)."""
        return run_in_new_loop(partial(self.embed, inputs, input_type=input_type, settings=settings))

    def max_input_tokens_sync(self) -> int | None:
        """`max_input_tokens` from synchronous code."""
        return run_in_new_loop(self.max_input_tokens)

    def count_tokens_sync(self, text: str) -> int:
        """`count_tokens` from synchronous code."""
        return run_in_new_loop(partial(self.count_tokens, text))

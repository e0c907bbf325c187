"""`InstrumentedEmbeddingModel`: an embedding model whose requests each get a span (`embeddings <model>`).

The span carries the GenAI attributes of the request (operation, provider, model, server, input type and count,
settings) and of its result (usage, response model and id, dimension count, cost when known); with
`InstrumentationSettings(include_content=True)` (the default) also the inputs and the vectors. Spans go through
logfire, as every Edgewise span.
"""

from __future__ import annotations as _annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from ..models._task_instrumentation import task_span
from ..models.instrumented import InstrumentationSettings
from .base import EmbeddingModel
from .result import EmbeddingResult, EmbedInputType
from .settings import EmbeddingSettings
from .wrapper import WrapperEmbeddingModel

__all__ = ('InstrumentedEmbeddingModel', 'instrument_embedding_model')


def instrument_embedding_model(model: EmbeddingModel, instrument: InstrumentationSettings | bool) -> EmbeddingModel:
    """`model` in an `InstrumentedEmbeddingModel` (with `InstrumentationSettings()` for `True`); `model` itself
    when `instrument` is `False` or it is instrumented already."""
    if not instrument or isinstance(model, InstrumentedEmbeddingModel):
        return model
    return InstrumentedEmbeddingModel(model, InstrumentationSettings() if instrument is True else instrument)


@dataclass(init=False)
class InstrumentedEmbeddingModel(WrapperEmbeddingModel):
    """Sends requests to `wrapped`, each inside a span `embeddings <model name>`."""

    instrumentation_settings: InstrumentationSettings
    """What the spans record (`include_content`: the inputs and vectors)."""

    _traces_requests: ClassVar[bool] = True

    def __init__(self, wrapped: EmbeddingModel | str, options: InstrumentationSettings | None = None) -> None:
        """Wrap a model, or the model of a name.

        Args:
            wrapped: The model requests go to, or its name (`'openai:text-embedding-3-small'`).
            options: What the spans record; `InstrumentationSettings()` by default.
        """
        super().__init__(wrapped)
        self.instrumentation_settings = options or InstrumentationSettings()

    async def embed(
        self, inputs: str | Sequence[str], *, input_type: EmbedInputType, settings: EmbeddingSettings | None = None
    ) -> EmbeddingResult:
        """The wrapped model's vectors, the request traced."""
        texts, settings = self.prepare_embed(inputs, settings)
        include_content = self.instrumentation_settings.include_content
        attributes: dict[str, Any] = {'input_type': input_type, 'inputs_count': len(texts)}
        if include_content:
            attributes['inputs'] = json.dumps(texts)
        with task_span('embeddings', self.wrapped, attributes, settings, 'embedding_settings') as span:
            result = await self.wrapped.embed(texts, input_type=input_type, settings=settings)
            recorded: dict[str, Any] = {}
            if result.embeddings:
                recorded['gen_ai.embeddings.dimension.count'] = len(result.embeddings[0])
                if include_content:
                    recorded['embeddings'] = json.dumps([list(vector) for vector in result.embeddings])
            span.finish(result, **recorded)
            return result

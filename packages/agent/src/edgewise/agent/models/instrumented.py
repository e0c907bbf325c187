"""Tracing of models: `InstrumentationSettings`, `InstrumentedModel` and `instrument_model`.

`InstrumentationSettings` says how agent runs are traced (`Agent(instrument=...)`, `Agent.instrument_all(...)`,
the `Instrumentation` capability). `InstrumentedModel` gives a model's requests the same `chat <model>` span an
instrumented agent run gives each of its requests, for code that calls the model itself (`await
model.request(...)`, `model.request_stream(...)`, `edgewise.agent.direct`). Each request is traced once:

- An agent given an `InstrumentedModel` runs the model it wraps and is traced with its settings (as pydantic-ai
  2.x's agent does), whatever the agent's own `instrument` says.
- Anywhere else inside a request that already has its `chat` span (an instrumented run's request reaching the
  model through a `FallbackModel` or another wrapper, or an `InstrumentedModel` inside another), the model adds no
  span of its own: the request's span covers it, and a fallback's failed attempts are recorded under it.

Spans go through logfire-api, as every Edgewise span: none is made when logfire is not installed.
"""

from __future__ import annotations as _annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from .. import _instrument
from .._messages.model_messages import ModelMessage, ModelResponse
from ..settings import ModelSettings
from . import KnownModelName, infer_model
from ._instrumentation_settings import DEFAULT_INSTRUMENTATION_VERSION, InstrumentationSettings, record_model_request
from ._model import Model, RunContext
from ._request_parameters import ModelRequestParameters
from ._streamed_response import StreamedResponse
from .wrapper import WrapperModel

__all__ = ('InstrumentationSettings', 'InstrumentedModel', 'instrument_model', 'DEFAULT_INSTRUMENTATION_VERSION')


def instrument_model(model: Model, instrument: InstrumentationSettings | bool) -> Model:
    """`model` in an `InstrumentedModel` (with `InstrumentationSettings()` for `True`); `model` itself when
    `instrument` is `False` or it is an `InstrumentedModel` already."""
    if not instrument or isinstance(model, InstrumentedModel):
        return model
    return InstrumentedModel(model, InstrumentationSettings() if instrument is True else instrument)


@dataclass(init=False)
class InstrumentedModel(WrapperModel):
    """Sends requests to `wrapped`, each inside a `chat <model name>` span (unless one is open already)."""

    instrumentation_settings: InstrumentationSettings
    """What the spans record (`include_content`, `version`, ...); an agent given this model is traced with them."""

    def __init__(self, wrapped: Model | KnownModelName | str, options: InstrumentationSettings | None = None) -> None:
        """Wrap a model, or the model of a name.

        Args:
            wrapped: The model requests go to, or its name (`'openai:gpt-5.2'`, `'test'`).
            options: What the spans record; `InstrumentationSettings()` by default.
        """
        super().__init__(infer_model(wrapped))
        self.instrumentation_settings = options or InstrumentationSettings()

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        """The wrapped model's response, the request traced."""
        if _instrument.in_traced_request():  # an open `chat` span covers this request already
            return await self.wrapped.request(messages, model_settings, model_request_parameters)
        with _instrument.request_span(_instrument.TRACING, self.wrapped.model_name, None) as span:
            response = await self.wrapped.request(messages, model_settings, model_request_parameters)
            record_model_request(span, self.instrumentation_settings, messages, response)
            return response

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncIterator[StreamedResponse]:
        """The wrapped model's streamed response, traced until the block using it is left; the span records the
        response as far as it was read."""
        args = (messages, model_settings, model_request_parameters, run_context)
        if _instrument.in_traced_request():
            async with self.wrapped.request_stream(*args) as stream:
                yield stream
            return
        run_step = run_context.run_step if run_context is not None else None
        with _instrument.request_span(_instrument.TRACING, self.wrapped.model_name, run_step) as span:
            opened: StreamedResponse | None = None
            try:
                async with self.wrapped.request_stream(*args) as opened:
                    yield opened
            finally:
                if opened is not None:
                    record_model_request(span, self.instrumentation_settings, messages, opened.get())

"""Cohere's v2 chat API: `CohereModel`, over plain httpx (no `cohere` SDK needed).

`CohereModel('command-a-03-2025')` reads `CO_API_KEY`; requests go to `POST {base_url}/v2/chat`, streamed over
server-sent events or not. The JSON is made and read by the pure `_cohere_mapping` module. Cohere's chat takes text
only (no files), and structured output goes through an output tool (the default) or prompted output.
"""

from __future__ import annotations as _annotations

from collections.abc import AsyncIterator
from typing import Any, Literal

from ..messages import ModelMessage, ModelResponse
from ..profiles import ModelProfileSpec
from ..providers import Provider
from ..settings import ModelSettings
from ._cohere_mapping import CohereStreamedResponse, cohere_http_error, cohere_model_response, cohere_request_body
from ._mapping import EventStreamedResponse
from ._provider_model import ProviderModel
from ._request_parameters import ModelRequestParameters

__all__ = ('CohereModel', 'CohereModelName', 'CohereModelSettings', 'CohereStreamedResponse', 'LatestCohereModelNames')

# Defined beside its mapping; this module is its public home (and the one pydantic-ai names).
CohereStreamedResponse.__module__ = __name__

LatestCohereModelNames = Literal[
    'command-a-plus-05-2026',
    'command-a-reasoning-08-2025',
    'command-a-vision-07-2025',
    'command-a-03-2025',
    'command-r-plus-08-2024',
    'command-r-08-2024',
    'command-r7b-12-2024',
]
"""Cohere's latest models."""

CohereModelName = str | LatestCohereModelNames
"""The name of a Cohere model: one of the latest, or any other."""


class CohereModelSettings(ModelSettings, total=False):
    """Settings of a Cohere request: the common ones (Cohere has no settings of its own yet; they would be
    `cohere_`-prefixed). `logit_bias`, `parallel_tool_calls`, `service_tier` and `extra_body` are not sent."""


class CohereModel(ProviderModel):
    """A model behind Cohere's v2 chat API (`POST {base_url}/v2/chat`), streamed or not."""

    _default_provider = 'cohere'
    _endpoint_name = 'chat'

    def __init__(
        self,
        model_name: CohereModelName,
        *,
        provider: Literal['cohere'] | Provider[Any] = 'cohere',
        profile: ModelProfileSpec | None = None,
        settings: ModelSettings | None = None,
    ) -> None:
        """Configure the model.

        Args:
            model_name: The Cohere model's name.
            provider: The provider or its name (`'cohere'`, or a `CohereProvider` of your own).
            profile: The model's profile (or a function of the name giving it); the provider's by default.
            settings: Default settings of this model's requests (`CohereModelSettings`).
        """
        super().__init__(model_name, provider=provider, profile=profile, settings=settings)

    _http_error = staticmethod(cohere_http_error)
    """How an error status becomes an error: of the category its status (or message: `too many tokens`) names."""

    def _url(self, *, stream: bool) -> str:
        return f'{self._provider.base_url}/v2/chat'

    def _body(
        self, messages: list[ModelMessage], settings: Any, params: ModelRequestParameters, *, stream: bool
    ) -> dict[str, Any]:
        return cohere_request_body(self._model_name, messages, settings, params, stream=stream)

    def _parse(self, data: Any) -> ModelResponse:
        return cohere_model_response(data, model_name=self._model_name, provider_name=self._provider.name)

    def _streamed(self, params: ModelRequestParameters, events: AsyncIterator[dict[str, Any]]) -> EventStreamedResponse:
        return CohereStreamedResponse(params, events, model_name=self._model_name, provider_name=self._provider.name)

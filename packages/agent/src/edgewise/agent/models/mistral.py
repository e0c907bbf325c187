"""Mistral's chat completions API: `MistralModel`, over plain httpx (no `mistralai` SDK needed).

`MistralModel('mistral-large-latest')` reads `MISTRAL_API_KEY`; requests go to `POST {base_url}/v1/chat/completions`,
streamed over server-sent events or not. The JSON is made and read by the pure `_mistral_mapping` module.
Structured output goes through an output tool (the default) or prompted output; Mistral has no JSON-schema mode
here, so native output is refused.
"""

from __future__ import annotations as _annotations

from collections.abc import AsyncIterator
from typing import Any, Literal

from ..messages import DocumentUrl, FileUrl, ModelMessage, ModelResponse
from ..profiles import ModelProfileSpec
from ..providers import Provider
from ..settings import ModelSettings
from ._mapping import EventStreamedResponse
from ._mistral_mapping import (
    MistralStreamedResponse,
    mistral_http_error,
    mistral_model_response,
    mistral_request_body,
    takes_url,
)
from ._provider_model import ProviderModel
from ._request_parameters import ModelRequestParameters

__all__ = (
    'LatestMistralModelNames',
    'MistralModel',
    'MistralModelName',
    'MistralModelSettings',
    'MistralStreamedResponse',
)

# Defined beside its mapping; this module is its public home (and the one pydantic-ai names).
MistralStreamedResponse.__module__ = __name__

LatestMistralModelNames = Literal[
    'mistral-large-latest',
    'mistral-medium-latest',
    'mistral-small-latest',
    'magistral-medium-latest',
    'magistral-small-latest',
    'codestral-latest',
    'ministral-14b-latest',
    'ministral-8b-latest',
    'ministral-3b-latest',
]
"""Mistral's `-latest` model aliases (its canonical ids)."""

MistralModelName = str | LatestMistralModelNames
"""The name of a Mistral model: one of the `-latest` aliases, or any other (dated) name."""


class MistralModelSettings(ModelSettings, total=False):
    """Settings of a Mistral request: the common ones, and Mistral's own (all `mistral_`-prefixed).

    Of the common settings, `logit_bias`, `top_k`, `service_tier` and `extra_body` are not sent to Mistral.
    """

    mistral_prompt_cache_key: str
    """A key grouping requests that share a prompt prefix, for Mistral's prompt cache (`prompt_cache_key`)."""


class MistralModel(ProviderModel):
    """A model behind Mistral's chat completions API (`POST {base_url}/v1/chat/completions`), streamed or not."""

    _default_provider = 'mistral'
    _endpoint_name = 'chat completions'

    def __init__(
        self,
        model_name: MistralModelName,
        *,
        provider: Literal['mistral'] | Provider[Any] = 'mistral',
        profile: ModelProfileSpec | None = None,
        json_mode_schema_prompt: str = """Answer in JSON Object, respect the format:\n```\n{schema}\n```\n""",
        settings: ModelSettings | None = None,
    ) -> None:
        """Configure the model.

        Args:
            model_name: The Mistral model's name.
            provider: The provider or its name (`'mistral'`, or a `MistralProvider` of your own).
            profile: The model's profile (or a function of the name giving it); the provider's by default.
            json_mode_schema_prompt: The prompt that shows the model an expected JSON object (`{schema}` is
                replaced by it); kept for pydantic-ai's signature, as requests do not use it.
            settings: Default settings of this model's requests (`MistralModelSettings`).
        """
        super().__init__(model_name, provider=provider, profile=profile, settings=settings)
        self.json_mode_schema_prompt = json_mode_schema_prompt

    _http_error = staticmethod(mistral_http_error)
    """How an error status becomes an error: of the category its code names (`'3051'`: over the context window)."""

    def _url(self, *, stream: bool) -> str:
        return f'{self._provider.base_url}/v1/chat/completions'

    def _needs_download(self, file: FileUrl) -> bool:
        # Mistral fetches image and PDF URLs itself; other documents go inline as text.
        return bool(file.force_download) or (isinstance(file, DocumentUrl) and not takes_url(file))

    def _body(
        self, messages: list[ModelMessage], settings: Any, params: ModelRequestParameters, *, stream: bool
    ) -> dict[str, Any]:
        return mistral_request_body(self._model_name, messages, settings, params, self.profile, stream=stream)

    def _parse(self, data: Any) -> ModelResponse:
        return mistral_model_response(data, model_name=self._model_name, provider_name=self._provider.name)

    def _streamed(self, params: ModelRequestParameters, events: AsyncIterator[dict[str, Any]]) -> EventStreamedResponse:
        return MistralStreamedResponse(params, events, model_name=self._model_name, provider_name=self._provider.name)

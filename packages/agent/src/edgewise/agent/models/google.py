"""The Gemini API: `GoogleModel`, over plain httpx (no Google SDK needed).

`GoogleModel('gemini-2.5-flash')` reads `GOOGLE_API_KEY` (or `GEMINI_API_KEY`); requests go to
`POST {base_url}/v1beta/models/{model}:generateContent`, or `:streamGenerateContent?alt=sse` when streamed.
The JSON is made and read by the pure `_google_mapping` module.
"""

from __future__ import annotations as _annotations

from collections.abc import AsyncIterator
from typing import Any

from ..messages import FileUrl, ModelMessage, ModelResponse
from ..native_tools import AbstractNativeTool
from ..profiles import ModelProfileSpec
from ..providers import Provider
from ..settings import ModelSettings
from ._error_categories import google_http_error
from ._google_mapping import (
    GoogleModelSettings,
    GoogleStreamedResponse,
    google_model_response,
    google_request_body,
    takes_url,
)
from ._google_native_tools import GOOGLE_NATIVE_TOOLS
from ._mapping import EventStreamedResponse
from ._provider_model import ProviderModel
from ._request_parameters import ModelRequestParameters

__all__ = ('GoogleModel', 'GoogleModelSettings', 'GoogleModelName')

# Defined beside its request mapping; this module is its public home (and the one pydantic-ai names).
GoogleModelSettings.__module__ = __name__

GoogleModelName = str
"""The name of a Gemini model (`'gemini-2.5-flash'`, `'gemini-2.5-pro'`, ...)."""

API_VERSION = 'v1beta'
"""The version of the Gemini API the requests use (the one the official SDK uses)."""


class GoogleModel(ProviderModel):
    """A Gemini model behind the Gemini API, or Google Cloud's (`generateContent` / `streamGenerateContent`)."""

    _default_provider = 'google'
    _endpoint_name = 'generateContent'

    _http_error = staticmethod(google_http_error)
    """How an error status becomes an error: of the category its error status, message or details names."""
    _batch_backend = '_google_batch'
    _batch_profile_key = 'google_supports_batch_api'
    _batch_providers = frozenset({'google', 'google-gla'})

    def __init__(
        self,
        model_name: GoogleModelName,
        *,
        provider: str | Provider[Any] = 'google',
        profile: ModelProfileSpec | None = None,
        settings: ModelSettings | None = None,
    ) -> None:
        """Configure the model.

        Args:
            model_name: The Gemini model's name.
            provider: The provider or its name (`'google'`, `'google-cloud'`, the deprecated `'google-gla'`, or a
                `GoogleProvider` / `GoogleCloudProvider`).
            profile: The model's profile (or a function of the name giving it); the provider's by default.
            settings: Default settings of this model's requests (`GoogleModelSettings`).
        """
        super().__init__(model_name, provider=provider, profile=profile, settings=settings)

    def _needs_download(self, file: FileUrl) -> bool:
        # The Gemini API fetches no URL but YouTube's and its own Files API's: the others are sent as data.
        return bool(file.force_download) or not takes_url(file)

    @classmethod
    def supported_native_tools(cls) -> frozenset[type[AbstractNativeTool]]:
        """Google search, URL context (`WebFetchTool`), code execution and file search."""
        return GOOGLE_NATIVE_TOOLS

    def _url(self, *, stream: bool) -> str:
        name = self._model_name.removeprefix('models/')
        method = 'streamGenerateContent?alt=sse' if stream else 'generateContent'
        return self._provider.endpoint_url(f'/{API_VERSION}/models/{name}:{method}', name)

    def _body(
        self, messages: list[ModelMessage], settings: Any, params: ModelRequestParameters, *, stream: bool
    ) -> dict[str, Any]:
        return google_request_body(
            messages, settings, params, self.profile,
            provider_name=self._provider.name, accepts=self.accepts_stateless_artifacts,
        )  # fmt: skip

    def _parse(self, data: Any) -> ModelResponse:
        return google_model_response(data, model_name=self._model_name, provider_name=self._provider.name)

    def _streamed(self, params: ModelRequestParameters, events: AsyncIterator[dict[str, Any]]) -> EventStreamedResponse:
        return GoogleStreamedResponse(params, events, model_name=self._model_name, provider_name=self._provider.name)

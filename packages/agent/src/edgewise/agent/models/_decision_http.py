"""`HTTPDecisionModel`: what the decision models reached over HTTP share (System One, OpenAI's and Gemini's decisions
endpoints): the model name and provider, the `HTTPCall` of one `decide`, sent through the shared HTTP layer, and
the downloads of image URLs, through the provider's client.

Each backend adds its body, its answer's reading and its limits.
"""

from __future__ import annotations as _annotations

from typing import Any

from ..messages import BinaryContent, ImageUrl
from ..profiles import ModelProfileSpec
from ..providers import Provider
from ..settings import ModelSettings
from . import _http
from ._downloads import download
from ._error_categories import generic_http_error
from .decision import DecisionModel, DecisionModelSettings

__all__ = ('HTTPDecisionModel',)


class HTTPDecisionModel(DecisionModel):
    """A decision model behind a provider's HTTP API."""

    def __init__(
        self,
        model_name: str,
        provider: Provider[Any],
        *,
        profile: ModelProfileSpec | None = None,
        settings: ModelSettings | None = None,
    ) -> None:
        self._model_name = model_name
        self._provider = provider
        super().__init__(settings=settings, profile=profile)

    @property
    def model_name(self) -> str:
        """The model's name."""
        return self._model_name

    @property
    def provider(self) -> Provider[Any]:
        """The provider requests go through."""
        return self._provider

    @property
    def base_url(self) -> str:
        """The API's URL."""
        return self._provider.base_url

    def __repr__(self) -> str:
        return f'{type(self).__name__}(model_name={self._model_name!r}, provider={self._provider!r})'

    async def _download_image(self, image: ImageUrl) -> BinaryContent:
        # Through the provider's client (its pool, proxies and transport); the key goes only on the API's requests.
        return await download(image, self._provider.client)

    def _call(
        self,
        url: str,
        body: dict[str, Any],
        settings: DecisionModelSettings,
        *,
        endpoint_name: str,
        error_key: str | None = None,
        http_error: _http.HTTPErrorBuilder = generic_http_error,
    ) -> _http.HTTPCall:
        """The call of one `decide`: the provider's key and retries, `extra_headers` over them, the `timeout`."""
        headers = self._provider.request_headers()
        headers.update(settings.get('extra_headers') or {})
        return _http.HTTPCall(
            client=self._provider.client,
            url=url,
            body=body,
            headers=headers,
            timeout=settings.get('timeout'),
            model_name=self._model_name,
            system=self.system,
            operation='decide',
            endpoint_name=endpoint_name,
            max_retries=self._provider.max_retries,
            error_key=error_key,
            base_url=self.base_url,
            http_error=http_error,
        )

"""`VoyageAIProvider`: VoyageAI's API (`https://api.voyageai.com/v1`), for its embedding models, authenticated by an
API key sent as a bearer token."""

from __future__ import annotations as _annotations

from typing import TYPE_CHECKING

from ._base import HTTPProvider, env_value, missing_key_error

if TYPE_CHECKING:
    import httpx

__all__ = ('VoyageAIProvider',)


class VoyageAIProvider(HTTPProvider):
    """VoyageAI's API; the key comes from `VOYAGE_API_KEY` unless given. VoyageAI serves embedding models only
    (`edgewise.agent.embeddings.voyageai.VoyageAIEmbeddingModel`)."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        http_client: httpx.AsyncClient | None = None,
        max_retries: int = 2,
    ) -> None:
        """Configure the provider.

        Args:
            api_key: The API key; defaults to `VOYAGE_API_KEY`.
            base_url: The API's base URL; defaults to `https://api.voyageai.com/v1`.
            http_client: An `httpx.AsyncClient` to send requests with, used as given (and not closed here).
            max_retries: How many times a failed request (429, 5xx, timeout, dropped connection) is retried.

        Raises:
            UserError: no API key is given or set.
        """
        api_key = api_key or env_value('VOYAGE_API_KEY')
        if not api_key:
            raise missing_key_error(('VOYAGE_API_KEY',), 'VoyageAIProvider', 'the VoyageAI provider')
        base_url = base_url or 'https://api.voyageai.com/v1'
        super().__init__(base_url=base_url, api_key=api_key, http_client=http_client, max_retries=max_retries)
        self._key: str = api_key

    @property
    def name(self) -> str:
        """The provider's name, `'voyageai'`."""
        return 'voyageai'

    def request_headers(self) -> dict[str, str]:
        """The key, as a bearer token."""
        return {'authorization': f'Bearer {self._key}'}

"""`GoogleProvider`: the Gemini API (`https://generativelanguage.googleapis.com`), authenticated by an API key.

The key travels in the `x-goog-api-key` header, never in the URL, so that no error or log can show it.
Google Cloud (Vertex AI) is `GoogleCloudProvider`'s: its arguments here raise a `UserError`.
"""

from __future__ import annotations as _annotations

from typing import TYPE_CHECKING, Any

from typing_extensions import deprecated

from ..exceptions import UserError
from ..profiles import ModelProfile
from ..profiles.google import google_model_profile
from ._base import HTTPProvider, env_value, missing_key_error

if TYPE_CHECKING:
    import httpx

__all__ = ('GoogleProvider', 'GoogleGLAProvider')


class GoogleProvider(HTTPProvider):
    """The Gemini API; the key comes from `GOOGLE_API_KEY` (or the older `GEMINI_API_KEY`) unless given."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        credentials: Any = None,
        project: str | None = None,
        location: str | None = None,
        vertexai: bool | None = None,
        http_client: httpx.AsyncClient | None = None,
        base_url: str | None = None,
        max_retries: int = 2,
    ) -> None:
        """Configure the provider.

        Args:
            api_key: The API key; defaults to `GOOGLE_API_KEY`, then `GEMINI_API_KEY`.
            credentials: Google Cloud credentials: not supported here (use `GoogleCloudProvider`).
            project: A Google Cloud project: not supported here (use `GoogleCloudProvider`).
            location: A Google Cloud location: not supported here (use `GoogleCloudProvider`).
            vertexai: `True` asks for Vertex AI, which is not supported here (use `GoogleCloudProvider`).
            http_client: An `httpx.AsyncClient` to send requests with, used as given (and not closed here).
            base_url: The API's base URL; defaults to `https://generativelanguage.googleapis.com`.
            max_retries: How many times a failed request (429, 5xx, timeout, dropped connection) is retried.

        Raises:
            UserError: no API key is given or set, or Google Cloud (Vertex AI) arguments are given.
        """
        if vertexai or credentials is not None or project or location:
            raise UserError(
                'Google Cloud (Vertex AI) is not supported by `GoogleProvider` in edgewise.agent; use the Gemini API '
                'with an API key (`GoogleProvider(api_key=...)`), or `GoogleCloudProvider(api_key=...)` with a '
                'Vertex AI Express Mode key or with Google Cloud credentials (`credentials=`, `project=`, `location=`).'
            )
        api_key = api_key or env_value('GOOGLE_API_KEY', 'GEMINI_API_KEY')
        if not api_key:
            raise missing_key_error(('GOOGLE_API_KEY',), 'GoogleProvider', 'the Gemini API')
        base_url = base_url or 'https://generativelanguage.googleapis.com'
        super().__init__(base_url=base_url, api_key=api_key, http_client=http_client, max_retries=max_retries)
        self._api_key: str = api_key

    @property
    def name(self) -> str:
        """The provider's name, `'google'`."""
        return 'google'

    @property
    def _canonical_system_follows_client(self) -> bool:
        # pydantic-ai 2.68's `google` and `google-cloud` providers each serve both transports, so their responses
        # always say which one answered.
        return True

    @staticmethod
    def model_profile(model_name: str) -> ModelProfile | None:
        """The profile of the named Gemini model."""
        return google_model_profile(model_name)

    def request_headers(self) -> dict[str, str]:
        """The key, in the `x-goog-api-key` header."""
        return {'x-goog-api-key': self._api_key}


@deprecated('`GoogleGLAProvider` is deprecated: use `GoogleProvider` (pydantic-ai 2.x).')
class GoogleGLAProvider(GoogleProvider):
    """Deprecated: pydantic-ai 1.x's name of `GoogleProvider`, which it is in every other respect."""

"""`GoogleCloudProvider`: Gemini on Google Cloud (Vertex AI), in Express Mode: authenticated by an API key.

Requests go to `https://aiplatform.googleapis.com/v1beta1/publishers/google/models/{model}:generateContent` (the
key in the `x-goog-api-key` header), in the same JSON as the Gemini API's, so `GoogleModel` speaks both.

Application Default Credentials and service accounts (`credentials=`, `project=`, `location=`,
`GOOGLE_APPLICATION_CREDENTIALS`) are not supported: their access tokens are minted by signing a JWT with the
account's RSA key and refreshed as they expire, which needs `google-auth`, not a dependency of Edgewise. Each of
them raises a `UserError` saying so.
"""

from __future__ import annotations as _annotations

import os
from typing import TYPE_CHECKING, Any

from ..exceptions import UserError
from ..profiles import ModelProfile
from ..profiles.google import google_model_profile
from ._base import HTTPProvider, env_value

if TYPE_CHECKING:
    import httpx

__all__ = ('GoogleCloudProvider',)

_API_VERSION = 'v1beta1'
"""The Vertex AI API version the google-genai SDK uses by default."""


def _model_resource(model_name: str) -> str:
    """The Vertex AI resource of a model name: Google's own (`gemini-2.5-flash`), a publisher's (`publisher/model`),
    or a full resource name (`publishers/...`, `projects/...`) as given."""
    if model_name.startswith(('publishers/', 'projects/')):
        return model_name
    publisher, _, model = model_name.rpartition('/')
    return f'publishers/{publisher or "google"}/models/{model}'


class GoogleCloudProvider(HTTPProvider):
    """Gemini on Google Cloud (Vertex AI) in Express Mode; the key comes from `GOOGLE_API_KEY` (or the older
    `GEMINI_API_KEY`) unless given. Use it with `GoogleModel` (`'google-cloud:gemini-2.5-flash'`)."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        credentials: Any = None,
        project: str | None = None,
        location: str | None = None,
        http_client: httpx.AsyncClient | None = None,
        base_url: str | None = None,
        max_retries: int = 2,
    ) -> None:
        """Configure the provider.

        Args:
            api_key: A Vertex AI Express Mode API key; defaults to `GOOGLE_API_KEY`, then `GEMINI_API_KEY` (unless
                `GOOGLE_APPLICATION_CREDENTIALS` names credentials, which take precedence as in pydantic-ai).
            credentials: Google Cloud credentials: not supported (they need `google-auth`).
            project: A Google Cloud project: not supported (its requests need an access token of `google-auth`).
            location: A Google Cloud location: not supported (as `project`).
            http_client: An `httpx.AsyncClient` to send requests with, used as given (and not closed here).
            base_url: The API's base URL; defaults to `https://aiplatform.googleapis.com`.
            max_retries: How many times a failed request (429, 5xx, timeout, dropped connection) is retried.

        Raises:
            UserError: credentials, a project or a location are given (or `GOOGLE_APPLICATION_CREDENTIALS` is set
                without a key given), or no API key is given or set.
        """
        api_key = api_key or None
        uses_credentials = credentials is not None or project is not None or location is not None
        if not uses_credentials and api_key is None and not os.getenv('GOOGLE_APPLICATION_CREDENTIALS'):
            api_key = env_value('GOOGLE_API_KEY', 'GEMINI_API_KEY')
        if uses_credentials or (api_key is None and os.getenv('GOOGLE_APPLICATION_CREDENTIALS')):
            raise UserError(
                '`GoogleCloudProvider` in edgewise.agent authenticates with a Vertex AI Express Mode API key only: '
                'Google Cloud credentials (`credentials=`, `project=`, `location=`, `GOOGLE_APPLICATION_CREDENTIALS`) '
                'need `google-auth`, which Edgewise does not depend on. Pass `api_key=` (or set `GOOGLE_API_KEY`) '
                'and leave the others out.'
            )
        if api_key is None:
            raise UserError(
                'Set the `GOOGLE_API_KEY` environment variable or pass it via `GoogleCloudProvider(api_key=...)` '
                '(a Vertex AI Express Mode key) to use Google Cloud.'
            )
        super().__init__(
            base_url=base_url or 'https://aiplatform.googleapis.com',
            api_key=api_key,
            http_client=http_client,
            max_retries=max_retries,
        )
        self._api_key: str = api_key

    @property
    def name(self) -> str:
        """The provider's name, `'google-cloud'`."""
        return 'google-cloud'

    @property
    def _canonical_system_follows_client(self) -> bool:
        # pydantic-ai 2.68's `google` and `google-cloud` providers each serve both transports, so their responses
        # always say which one answered.
        return True

    @staticmethod
    def model_profile(model_name: str) -> ModelProfile | None:
        """The profile of the named Gemini model (the Gemini API's)."""
        return google_model_profile(model_name)

    def request_headers(self) -> dict[str, str]:
        """The key, in the `x-goog-api-key` header."""
        return {'x-goog-api-key': self._api_key}

    def endpoint_url(self, path: str, model_name: str) -> str:
        """The Vertex AI URL of a Gemini API path `/{version}/models/{model}:{method}` (other paths as given)."""
        _, models, call = path.partition('/models/')
        if not models:
            return super().endpoint_url(path, model_name)
        method = call.removeprefix(model_name)
        return f'{self.base_url}/{_API_VERSION}/{_model_resource(model_name)}{method}'

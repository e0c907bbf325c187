"""`GoogleCloudProvider`: Gemini on Google Cloud (Vertex AI), authenticated by Google Cloud credentials or, in
Express Mode, by an API key.

With credentials (`credentials=`, else Application Default Credentials: `GOOGLE_APPLICATION_CREDENTIALS`, gcloud's,
or the metadata server's), requests go to the location's endpoint,
`https://{location}-aiplatform.googleapis.com/v1beta1/projects/{project}/locations/{location}/publishers/google/models/{model}:generateContent`
(`https://aiplatform.googleapis.com` for `global`), with an `Authorization: Bearer` access token. `google-auth` (the
`google-cloud` extra) mints and refreshes the token (`_google_auth`), in a worker thread, when it is missing or about
to expire and once after a 401; one task refreshes while the others wait for it. In Express Mode, requests go to
`https://aiplatform.googleapis.com/v1beta1/publishers/google/models/{model}:generateContent` with the key in the
`x-goog-api-key` header. The JSON is the Gemini API's either way, so `GoogleModel` speaks both.

Which one is used follows pydantic-ai 2.68: `credentials`, `project` or `location` given means credentials (a key
given too is ignored); else a key given, else `GOOGLE_API_KEY` / `GEMINI_API_KEY` unless
`GOOGLE_APPLICATION_CREDENTIALS` is set (credentials named by the environment win over a key from it); else
Application Default Credentials. Neither tokens nor keys appear in the provider's repr or its errors.
"""

from __future__ import annotations as _annotations

import os
from functools import cached_property
from typing import TYPE_CHECKING, Any

import anyio

from ..exceptions import UserError
from ..profiles import ModelProfile
from ..profiles.google import google_model_profile
from ._base import HTTPProvider, env_value, own_http_client
from ._refreshing_auth import covers, refreshing_auth

if TYPE_CHECKING:
    import httpx

__all__ = ('GoogleCloudProvider',)

_API_VERSION = 'v1beta1'
"""The Vertex AI API version the google-genai SDK uses by default."""

_DEFAULT_LOCATION = 'us-central1'
"""The location of requests made with credentials when none is given or set (pydantic-ai 2.68's: the region that
serves the most models)."""

_EXTRA_HINT = (
    "install the `google-cloud` extra (`pip install 'edgewise-agent[google-cloud]'`, which brings `google-auth`)"
)


def _model_resource(model_name: str) -> str:
    """The Vertex AI resource of a model name: Google's own (`gemini-2.5-flash`), a publisher's (`publisher/model`),
    or a full resource name (`publishers/...`, `projects/...`) as given."""
    if model_name.startswith(('publishers/', 'projects/')):
        return model_name
    publisher, _, model = model_name.rpartition('/')
    return f'publishers/{publisher or "google"}/models/{model}'


def _location_base_url(location: str) -> str:
    """The Vertex AI endpoint of a location: global, a multi-region's data-residency endpoint (`us`, `eu`), or a
    region's."""
    if location == 'global':
        return 'https://aiplatform.googleapis.com'
    if location in ('us', 'eu'):
        return f'https://aiplatform.{location}.rep.googleapis.com'
    return f'https://{location}-aiplatform.googleapis.com'


class GoogleCloudProvider(HTTPProvider):
    """Gemini on Google Cloud (Vertex AI), with Google Cloud credentials or an Express Mode key (see the module's
    docstring for which). Use it with `GoogleModel` (`'google-cloud:gemini-2.5-flash'`)."""

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
                `GOOGLE_APPLICATION_CREDENTIALS` is set). Ignored when `credentials`, `project` or `location` is
                given, as in pydantic-ai.
            credentials: Google Cloud credentials (a `google.auth.credentials.Credentials`, scoped to
                `https://www.googleapis.com/auth/cloud-platform` if they need scopes); defaults to Application
                Default Credentials when no key is used. Needs the `google-cloud` extra.
            project: The Google Cloud project; defaults to `GOOGLE_CLOUD_PROJECT`, then the credentials' project (a
                service account file's `project_id`).
            location: The location requests go to (`us-central1`, `global`, or the `us` / `eu` multi-regions);
                defaults to `GOOGLE_CLOUD_LOCATION`, then `us-central1`.
            http_client: An `httpx.AsyncClient` to send requests with, used as given (and not closed here); with
                credentials it gets the provider's auth, so it must have none of its own.
            base_url: The API's base URL; defaults to the location's endpoint (`https://aiplatform.googleapis.com` in
                Express Mode).
            max_retries: How many times a failed request (429, 5xx, timeout, dropped connection) is retried.

        Raises:
            UserError: no key and no credentials are found, no project is found for the credentials, or the
                `http_client` already has an auth.
            ImportError: credentials are asked for (`credentials`, `project`, `location` or
                `GOOGLE_APPLICATION_CREDENTIALS`) but `google-auth` is not installed.
        """
        api_key = api_key or None
        asks_for_credentials = credentials is not None or project is not None or location is not None
        if asks_for_credentials:
            api_key = None
        elif api_key is None and not os.getenv('GOOGLE_APPLICATION_CREDENTIALS'):
            api_key = env_value('GOOGLE_API_KEY', 'GEMINI_API_KEY')
        self._credentials: Any = None
        self._project: str | None = None
        self._location: str | None = None
        if api_key is None:
            explicit = asks_for_credentials or bool(os.getenv('GOOGLE_APPLICATION_CREDENTIALS'))
            credentials, project = _find_credentials(
                credentials, project or env_value('GOOGLE_CLOUD_PROJECT'), explicit
            )
            if project is None:
                raise UserError(
                    'No Google Cloud project for Vertex AI: pass `GoogleCloudProvider(project=...)`, set the '
                    '`GOOGLE_CLOUD_PROJECT` environment variable, or use credentials that name one (a service '
                    "account key file's `project_id`)."
                )
            if http_client is not None and http_client.auth is not None:
                raise UserError(
                    "The `http_client` already has an auth of its own (it may be another provider's): pass a client "
                    'for this provider alone, so that credentials cannot mix.'
                )
            self._credentials = credentials
            self._project = project
            self._location = location = location or env_value('GOOGLE_CLOUD_LOCATION') or _DEFAULT_LOCATION
            base_url = base_url or _location_base_url(location)
        super().__init__(
            base_url=base_url or 'https://aiplatform.googleapis.com',
            api_key=api_key,
            http_client=http_client,
            max_retries=max_retries,
        )
        self._revision = 0
        if self._credentials is not None and http_client is not None:
            http_client.auth = self._httpx_auth

    @property
    def name(self) -> str:
        """The provider's name, `'google-cloud'`."""
        return 'google-cloud'

    @property
    def credentials(self) -> Any:
        """The Google Cloud credentials requests carry (`None` in Express Mode)."""
        return self._credentials

    @property
    def project(self) -> str | None:
        """The Google Cloud project requests go to (`None` in Express Mode)."""
        return self._project

    @property
    def location(self) -> str | None:
        """The Google Cloud location requests go to (`None` in Express Mode)."""
        return self._location

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
        """The key, in the `x-goog-api-key` header; with credentials, their access token as it is now (the client's
        auth sets it again, refreshed if needed, on sending)."""
        if self._credentials is None:
            assert self._api_key is not None
            return {'x-goog-api-key': self._api_key}
        return self._sending_headers() if self._credentials.token else {}

    def endpoint_url(self, path: str, model_name: str) -> str:
        """The Vertex AI URL of a Gemini API path `/{version}/models/{model}:{method}` (other paths as given): under
        the project and location with credentials, unless the model is a full `projects/...` resource."""
        _, models, call = path.partition('/models/')
        if not models:
            return super().endpoint_url(path, model_name)
        method = call.removeprefix(model_name)
        resource = _model_resource(model_name)
        if self._project is not None and not resource.startswith('projects/'):
            resource = f'projects/{self._project}/locations/{self._location}/{resource}'
        return f'{self.base_url}/{_API_VERSION}/{resource}{method}'

    def _new_http_client(self) -> httpx.AsyncClient:
        made = own_http_client()
        if self._credentials is not None:
            made.auth = self._httpx_auth
        return made

    @cached_property
    def _httpx_auth(self) -> httpx.Auth:
        return refreshing_auth(self)

    @cached_property
    def _lock(self) -> anyio.Lock:
        return anyio.Lock()  # made on first use, in the event loop of the first request

    def _covers(self, url: httpx.URL) -> bool:
        return covers(self.base_url, url)

    async def _ready(self) -> int:
        if not self._credentials.valid:  # no token yet, or one about to expire
            async with self._lock:
                if not self._credentials.valid:
                    await self._refresh_locked()
        return self._revision

    def _sending_headers(self) -> dict[str, str]:
        headers: dict[str, str] = {}
        self._credentials.apply(headers)  # the bearer token, and the quota project's header if they name one
        return headers

    async def _refresh_after_401(self, revision: int) -> None:
        async with self._lock:
            if self._revision == revision:  # else another task refreshed since this request was sent
                await self._refresh_locked()

    async def _refresh_locked(self) -> None:
        from . import _google_auth

        await _google_auth.refresh(self._credentials, self.name)
        self._revision += 1


def _find_credentials(credentials: Any, project: str | None, explicit: bool) -> tuple[Any, str | None]:
    """`_google_auth.find_credentials`, once `google-auth` is found to be installed.

    Raises:
        ImportError: `google-auth` is not installed and credentials were asked for (`explicit`).
        UserError: `google-auth` is not installed, and nothing asked for credentials: no key was found either.
    """
    try:
        from . import _google_auth
    except ImportError as e:
        if explicit:
            raise ImportError(
                f'Google Cloud credentials in `GoogleCloudProvider` need `google-auth`: {_EXTRA_HINT}.'
            ) from e
        raise UserError(
            'Set the `GOOGLE_API_KEY` environment variable or pass it via `GoogleCloudProvider(api_key=...)` (a Vertex '
            f'AI Express Mode key) to use Google Cloud, or, to use Google Cloud credentials, {_EXTRA_HINT}.'
        ) from None
    return _google_auth.find_credentials(credentials, project)

"""Google Cloud credentials for `GoogleCloudProvider`, through `google-auth` (the `google-cloud` extra): finding
them (given, or Application Default Credentials), and refreshing their access token over httpx.

`google-auth` mints and refreshes the tokens (a service account's JWT signed with its RSA key, a user's refresh
token, the metadata server on Google Cloud); it sends its token requests through a `google.auth.transport.Request`,
here `HttpxTransportRequest`, over a synchronous `httpx.Client` (run in a worker thread, never on the event loop),
so that neither `requests` nor another HTTP library is needed. This module imports `google.auth` on import: it is
imported only when credentials are used.

Errors never quote an access token or a key: `google-auth`'s own messages name the failure and the file or
endpoint, and the errors here add only that.
"""

from __future__ import annotations as _annotations

from collections.abc import Mapping
from typing import Any

import anyio.to_thread
import google.auth
import google.auth.credentials
import google.auth.exceptions
import google.auth.transport
import httpx

from ..exceptions import UserError
from ._oauth import CredentialsRefreshError

__all__ = ('CLOUD_PLATFORM_SCOPE', 'HttpxTransportRequest', 'find_credentials', 'refresh', 'GoogleCredentials')

GoogleCredentials = google.auth.credentials.Credentials
"""`google.auth.credentials.Credentials`: what `GoogleCloudProvider(credentials=...)` takes."""

CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform'
"""The OAuth scope of Vertex AI's requests."""

_TOKEN_REQUEST_TIMEOUT = 120.0
"""Seconds a token request may take when `google-auth` names no timeout."""


class _HttpxTransportResponse(google.auth.transport.Response):
    """An `httpx.Response` as `google-auth` reads one (read in full)."""

    def __init__(self, response: httpx.Response) -> None:
        self._response = response

    @property
    def status(self) -> int:
        """The HTTP status."""
        return self._response.status_code

    @property
    def headers(self) -> Mapping[str, str]:
        """The response's headers."""
        return self._response.headers

    @property
    def data(self) -> bytes:
        """The response's body."""
        return self._response.content


class HttpxTransportRequest(google.auth.transport.Request):
    """`google-auth`'s HTTP transport over a synchronous `httpx.Client` (blocking: call it from a worker thread)."""

    def __init__(self, client: httpx.Client) -> None:
        self._client = client

    def __call__(
        self,
        url: str,
        method: str = 'GET',
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
        **kwargs: Any,
    ) -> _HttpxTransportResponse:
        """Send one request and read its whole answer.

        Raises:
            google.auth.exceptions.TransportError: the request could not be sent or answered (as `google-auth`
                expects of a transport).
        """
        try:
            response = self._client.request(
                method, url, content=body, headers=dict(headers or {}), timeout=timeout or _TOKEN_REQUEST_TIMEOUT
            )
        except httpx.HTTPError as e:
            failure = f'{type(e).__name__} on {method} {url}: {e}'
            raise google.auth.exceptions.TransportError(failure) from e  # type: ignore[no-untyped-call]
        return _HttpxTransportResponse(response)


def find_credentials(
    credentials: google.auth.credentials.Credentials | None, project: str | None
) -> tuple[google.auth.credentials.Credentials, str | None]:
    """The credentials to use (those given, scoped for Vertex AI if they need scopes, else Application Default
    Credentials) and the project (`project`, else the one the credentials or the environment name, if any).

    Raises:
        UserError: `credentials` is not a `google.auth` credentials object, or no default credentials are found.
    """
    if credentials is not None:
        if not isinstance(credentials, google.auth.credentials.Credentials):
            raise UserError(
                f"`credentials` must be `google.auth.credentials.Credentials` (such as a service account's), "
                f'not {type(credentials).__name__}.'
            )
        scoped: google.auth.credentials.Credentials = google.auth.credentials.with_scopes_if_required(  # type: ignore[no-untyped-call]
            credentials, [CLOUD_PLATFORM_SCOPE]
        )
        found_project = getattr(credentials, 'project_id', None)
        return scoped, project or (found_project if isinstance(found_project, str) else None)
    with httpx.Client() as client:
        try:
            default, default_project = google.auth.default(
                scopes=[CLOUD_PLATFORM_SCOPE], request=HttpxTransportRequest(client)
            )
        except google.auth.exceptions.DefaultCredentialsError as e:
            raise UserError(
                f'No Google Cloud credentials found ({e}). Pass `GoogleCloudProvider(credentials=...)`, point '
                '`GOOGLE_APPLICATION_CREDENTIALS` at a service account key file, run '
                '`gcloud auth application-default login`, or use a Vertex AI Express Mode key '
                '(`GoogleCloudProvider(api_key=...)` or the `GOOGLE_API_KEY` environment variable).'
            ) from None
    return default, project or default_project


async def refresh(credentials: google.auth.credentials.Credentials, provider_name: str) -> None:
    """Get a new access token for `credentials` (in place), in a worker thread.

    Raises:
        CredentialsRefreshError: the token endpoint refused the credentials or could not be reached.
    """

    def blocking_refresh() -> None:
        with httpx.Client() as client:
            credentials.refresh(HttpxTransportRequest(client))  # type: ignore[no-untyped-call]

    try:
        await anyio.to_thread.run_sync(blocking_refresh)
    except google.auth.exceptions.GoogleAuthError as e:
        reason = e.args[0] if e.args and isinstance(e.args[0], str) else type(e).__name__
        raise CredentialsRefreshError(
            f'Refreshing the Google Cloud access token failed: {reason}', provider_name
        ) from None

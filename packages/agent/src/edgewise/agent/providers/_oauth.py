"""Providers authenticated by a subscription's OAuth tokens rather than an API key: the lifecycle of the tokens.

`OAuthProvider` holds one set of credentials. Before each request to its API it loads them (from the application's
`credential_source`, on first use), refreshes them when the access token's unverified JWT `exp` is near, and puts
them in the request's headers; a request answered 401 is refreshed and sent once more. Refreshes are single-flight
(one `anyio.Lock`, a revision number telling a waiter that another task already refreshed) and go over the
provider's own `httpx` client, to the token endpoint, which never receives the access token.

The headers are set by an `httpx.Auth` attached to the provider's client (`_refreshing_auth`, shared with Google
Cloud's credentials): the shared HTTP layer sends such a client's requests through `client.send`, which runs it. It
adds credentials only to requests under the provider's base URL, and only over HTTPS or to a loopback address, so a
client used for other destinations never leaks them.

Tokens never appear in reprs or errors: credentials dataclasses leave them out of their repr, and errors quote only
the token endpoint's `error` / `error_description`.

The sign-in side is here too: a PKCE pair, the token request (one attempt, form-encoded), and `receive_redirect`, a
one-shot catcher of an authorization redirect on this machine, over anyio sockets.
"""

from __future__ import annotations as _annotations

import base64
import contextlib
import hashlib
import json
import secrets
import socket
from abc import abstractmethod
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from functools import cached_property
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar
from urllib.parse import parse_qsl, urlsplit

import anyio
import anyio.abc

from .._errors.model_api import ModelAPIError
from ..exceptions import UserError
from ._base import Provider, own_http_client
from ._refreshing_auth import covers, refreshing_auth

if TYPE_CHECKING:
    import httpx

__all__ = (
    'CredentialsRefreshError',
    'CredentialsPersistenceError',
    'OAuthCredentialSource',
    'OAuthProvider',
    'jwt_claims',
    'jwt_expires_at',
    'pkce_pair',
    'post_token_request',
    'receive_redirect',
)

EXPIRY_MARGIN = timedelta(seconds=30)
"""How long before the access token's `exp` it is refreshed."""


class _CredentialsError(ModelAPIError):
    """A failure of a provider's OAuth credentials (a `ModelAPIError`, so fallbacks treat it as a provider's failure);
    `model_name` is the provider's name, as the credentials serve every model of the provider."""

    def __init__(self, message: str, provider_name: str = 'openai-codex') -> None:
        super().__init__(provider_name, message)

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.message, self.model_name)


class CredentialsRefreshError(_CredentialsError):
    """The token endpoint refused or garbled an authorization-code or refresh-token exchange.

    When the message says the grant was rejected (`invalid_grant`, or a provider's other codes for a spent refresh
    token) the stored grant is spent: sign in again (`codex login`, or the application's own sign-in flow).
    """


class CredentialsPersistenceError(_CredentialsError):
    """Credentials were refreshed (and are in use in memory) but the credential source failed to save them."""


CredentialsT = TypeVar('CredentialsT')


class OAuthCredentialSource(Protocol[CredentialsT]):
    """The application's storage of a provider's credentials, so that refreshed tokens outlive the process.

    The provider calls `load()` on first use and again before each refresh (refresh tokens are single-use: another
    process sharing the store may have refreshed already, and its newer set is then adopted), and `save()` after a
    refresh. Two processes can still both refresh between a `load()` and a `save()`.
    """

    async def load(self) -> CredentialsT:
        """The stored credentials."""
        ...

    async def save(self, credentials: CredentialsT) -> None:
        """Replace the stored credentials with a refreshed set."""
        ...


def jwt_claims(token: str) -> dict[str, Any] | None:
    """The payload of a JWT, read without checking its signature; `None` for anything that is not one."""
    parts = token.split('.')
    if len(parts) < 2:
        return None
    segment = parts[1]
    try:
        claims = json.loads(base64.urlsafe_b64decode(segment + '=' * (-len(segment) % 4)))
    except ValueError:
        return None
    return claims if isinstance(claims, dict) else None


def jwt_expires_at(token: str) -> datetime | None:
    """When the JWT says it expires (`exp`, unverified: a hint for refreshing early, not an authority)."""
    exp = (jwt_claims(token) or {}).get('exp')
    if isinstance(exp, bool) or not isinstance(exp, int | float):
        return None
    try:
        return datetime.fromtimestamp(exp, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None


def pkce_pair() -> tuple[str, str]:
    """A new PKCE code verifier and its S256 challenge."""
    verifier = secrets.token_urlsafe(32)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b'=').decode()
    return verifier, challenge


async def post_token_request(
    client: httpx.AsyncClient,
    url: str,
    form: Mapping[str, str],
    *,
    provider_name: str,
    rejected_grant_errors: frozenset[str] = frozenset({'invalid_grant'}),
) -> dict[str, Any]:
    """POST an OAuth token request (form-encoded) and return its JSON object.

    One attempt, never retried: a refresh token is single-use, and a retry after a lost answer would spend it twice.
    An error whose code is one of `rejected_grant_errors` means the grant is spent: the message says to sign in again.

    Raises:
        CredentialsRefreshError: the endpoint answered an error status, or not a JSON object.
    """
    response = await client.post(url, data=dict(form), headers={'accept': 'application/json'})
    try:
        data: Any = response.json()
    except ValueError:
        data = None
    if response.status_code != 200:
        error = data if isinstance(data, dict) else {}
        code = error.get('error') if isinstance(error.get('error'), str) else None
        detail = error.get('error_description') or code or f'HTTP {response.status_code}'
        hint = '; the grant was rejected: sign in again' if code in rejected_grant_errors else ''
        raise CredentialsRefreshError(
            f'Token request to {url} failed with status {response.status_code}: {detail}{hint}', provider_name
        )
    if not isinstance(data, dict):
        raise CredentialsRefreshError(
            f'Token endpoint {url} answered something else than a JSON object.', provider_name
        )
    return data


_REDIRECT_READ_TIMEOUT = 5.0
"""Seconds a connection to the redirect catcher may take to send its request line and headers (a stalled one must
not keep the real redirect out)."""
_REDIRECT_PAGE = (
    b'HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 23\r\nconnection: close\r\n\r\n'
    b'You can close this tab.'
)


async def receive_redirect(redirect_uri: str, state: str) -> dict[str, str]:
    """Serve `redirect_uri` (a local HTTP address) until a `GET` of its path carries `state`; its query parameters.

    Other requests (another path, another state, a browser's favicon) are answered and ignored; a connection that
    sends nothing is dropped after a few seconds.
    """
    target = urlsplit(redirect_uri)
    path = target.path or '/'
    found: dict[str, str] = {}

    async def handle(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            params = _redirect_params(await _request_head(stream), path, state)
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                await stream.send(_REDIRECT_PAGE)
        if params is not None and not found:
            found.update(params)
            tg.cancel_scope.cancel()

    # Bound before the first await (IPv4, as the redirect's `localhost` reaches it), so the address is taken when
    # the caller's task first yields.
    sock = socket.create_server((target.hostname or 'localhost', target.port or 80))
    sock.setblocking(False)
    listener = await anyio.abc.SocketListener.from_socket(sock)
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, handle, tg)
    return found


async def _request_head(stream: anyio.abc.SocketStream) -> bytes:
    head = b''
    with anyio.move_on_after(_REDIRECT_READ_TIMEOUT):
        while b'\r\n\r\n' not in head and len(head) < 16384:
            try:
                head += await stream.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError):
                break
    return head


def _redirect_params(head: bytes, path: str, state: str) -> dict[str, str] | None:
    """The query parameters of a request head that is a `GET` of `path` carrying `state`, else `None`."""
    words = head.split(b'\r\n', 1)[0].decode('latin-1').split(' ')
    if len(words) != 3 or words[0] != 'GET':
        return None
    url = urlsplit(words[1])
    params = dict(parse_qsl(url.query))
    return params if url.path == path and params.get('state') == state else None


class OAuthProvider(Provider['httpx.AsyncClient'], Generic[CredentialsT]):
    """A provider whose requests carry refreshable OAuth credentials (see the module's docstring).

    Subclasses give `name`, `base_url`, `_auth_headers`, `_refresh_grant` and `_access_token`, and may refuse
    credentials they cannot use in `_check`.
    """

    def __init__(
        self,
        credentials: CredentialsT | None,
        *,
        credential_source: OAuthCredentialSource[CredentialsT] | None,
        http_client: httpx.AsyncClient | None,
        max_retries: int,
    ) -> None:
        """Keep the credentials (or their source: exactly one is given) and the client (which must have no auth)."""
        if (credentials is None) == (credential_source is None):
            raise UserError('Pass either `credentials` or `credential_source`, not both.')
        if http_client is not None and http_client.auth is not None:
            raise UserError(
                "The `http_client` already has an auth of its own (it may be another provider's): pass a client "
                'for this provider alone, so that credentials cannot mix.'
            )
        self._credentials = credentials
        self._credential_source = credential_source
        self._http_client = http_client
        self.max_retries = max_retries
        self._revision = 0
        self._failures = 0
        self._last_failure: tuple[int, int, BaseException] | None = None
        self._unsaved_predecessor: CredentialsT | None = None
        if credentials is not None:
            self._check(credentials)
        if http_client is not None:
            http_client.auth = self._httpx_auth

    @property
    def credentials(self) -> CredentialsT:
        """The credentials in use (replaced by each refresh).

        Raises:
            UserError: they come from a `credential_source` not read yet (it is read by the first request).
        """
        if self._credentials is None:
            raise UserError('`credentials` is not known yet: the `credential_source` is read by the first request.')
        return self._credentials

    @property
    def client(self) -> httpx.AsyncClient:
        """The HTTP client, with the credentials' auth: the one given, else the provider's own (made on first use)."""
        if self._http_client is not None:
            return self._http_client
        return self._made_client()

    def _new_http_client(self) -> httpx.AsyncClient:
        made = own_http_client()
        made.auth = self._httpx_auth
        return made

    @cached_property
    def _httpx_auth(self) -> httpx.Auth:
        return refreshing_auth(self)

    @cached_property
    def _lock(self) -> anyio.Lock:
        return anyio.Lock()  # made on first use, in the event loop of the first request

    def request_headers(self) -> dict[str, str]:
        """The credentials' headers as they are now (the auth sets them again, refreshed if needed, on sending)."""
        return {} if self._credentials is None else self._auth_headers(self._credentials)

    @abstractmethod
    def _auth_headers(self, credentials: CredentialsT) -> dict[str, str]:
        """The headers carrying `credentials`."""
        raise NotImplementedError

    @abstractmethod
    def _access_token(self, credentials: CredentialsT) -> str:
        """The access token of `credentials` (read for its expiry)."""
        raise NotImplementedError

    @abstractmethod
    async def _refresh_grant(self, credentials: CredentialsT, client: httpx.AsyncClient) -> CredentialsT:
        """A new set of credentials for the refresh token of `credentials`."""
        raise NotImplementedError

    def _check(self, credentials: CredentialsT) -> None:
        """Refuse credentials the provider cannot use (raise `UserError`); called when they are given, loaded or
        refreshed, before a request carries them. Accepts all by default."""

    def _covers(self, url: httpx.URL) -> bool:
        """Whether a request to `url` gets the credentials: under the base URL, over HTTPS or to a loopback host."""
        return covers(self.base_url, url)

    def _sending_headers(self) -> dict[str, str]:
        """The headers of the credentials in use, checked (`_check`) first."""
        self._check(self.credentials)
        return self._auth_headers(self.credentials)

    def _is_stale(self) -> bool:
        expires_at = jwt_expires_at(self._access_token(self.credentials))
        return expires_at is not None and datetime.now(timezone.utc) >= expires_at - EXPIRY_MARGIN

    async def _ready(self) -> int:
        """Load the credentials if needed and refresh them if they are about to expire; the revision to send."""
        if self._credentials is None:
            async with self._lock:
                if self._credentials is None:
                    assert self._credential_source is not None
                    self._credentials = await self._credential_source.load()
        self._check(self.credentials)
        if self._is_stale():
            try:
                async with self._lock:
                    if self._is_stale():
                        await self._refresh_locked()
            except CredentialsPersistenceError:
                raise
            except Exception:
                # The expiry is a hint: the request goes out with the token in hand, and a 401 refreshes for real.
                pass
            self._check(self.credentials)
        return self._revision

    async def _refresh_after_401(self, revision: int) -> None:
        """Refresh once for a request sent with `revision`, unless another task did since (single-flight)."""
        failures_seen = self._failures
        async with self._lock:
            if self._revision != revision:
                return
            last = self._last_failure
            if last is not None and last[0] == revision and last[1] > failures_seen:
                raise last[2]  # another waiter's refresh of the same credentials just failed: share its failure
            try:
                await self._refresh_locked()
            except Exception as e:
                self._failures += 1
                self._last_failure = (revision, self._failures, e)
                raise

    async def _refresh_locked(self) -> None:
        spent = self.credentials
        stored: CredentialsT | None = None
        source = self._credential_source
        if source is not None:
            stored = await source.load()
            if stored != spent and stored != self._unsaved_predecessor:
                self._replace(stored)  # another process refreshed already: its set is the live one
                return
        self._replace(await self._refresh_grant(spent, self.client))
        if source is not None:
            try:
                await source.save(self.credentials)
            except Exception as e:
                self._unsaved_predecessor = stored
                raise CredentialsPersistenceError(
                    'The credentials were refreshed, and are used in memory, but saving them to the '
                    '`credential_source` failed.',
                    self.name,
                ) from e
            self._unsaved_predecessor = None

    def _replace(self, credentials: CredentialsT) -> None:
        self._credentials = credentials
        self._revision += 1

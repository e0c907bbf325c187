"""GitHub's device login (OAuth device authorization grant), for a GitHub token to give `GitHubCopilotProvider`.

The application shows the user a code and a URL, the user approves on github.com, and the application polls until
GitHub hands over the token. Showing the code, opening a browser and storing the token are the application's; no
token is refreshed here. Device codes and tokens are left out of reprs and errors.
"""

from __future__ import annotations as _annotations

import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeGuard

import anyio

from ..exceptions import UserError
from ._base import own_http_client

if TYPE_CHECKING:
    import httpx

__all__ = ('GitHubCopilotCredentials', 'GitHubCopilotDeviceAuthorization', 'GitHubCopilotOAuthFlow')

_GITHUB = 'https://github.com'
_VERIFICATION_URI = 'https://github.com/login/device'
_DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code'
_ERROR_CODE = re.compile(r'[a-z_]+')


@dataclass(frozen=True, kw_only=True)
class GitHubCopilotDeviceAuthorization:
    """A device login waiting for the user: show `user_code` and send the user to `verification_uri`."""

    device_code: str = field(repr=False)
    """The code the polling sends (kept out of the repr)."""
    user_code: str
    """The code the user types at `verification_uri`."""
    verification_uri: Literal['https://github.com/login/device']
    """Where the user approves."""
    expires_in: int
    """Seconds the login stays open."""
    interval: int = 5
    """Seconds to wait between polls."""


@dataclass(frozen=True, kw_only=True)
class GitHubCopilotCredentials:
    """The GitHub OAuth token of a device login; the tokens are left out of the repr.

    Give `access_token` to `GitHubCopilotProvider(api_key=...)`; whether it reaches Copilot depends on the account's
    subscription. Durations are seconds from issue; keeping and renewing the token is the application's.
    """

    access_token: str = field(repr=False)
    """The token."""
    token_type: Literal['bearer']
    """Always `'bearer'`."""
    scope: str
    """The scopes granted (space-separated)."""
    refresh_token: str | None = field(default=None, repr=False)
    """A refresh token, when the OAuth app's tokens expire."""
    expires_in: int | None = None
    """Seconds the token lasts, when it expires."""
    refresh_token_expires_in: int | None = None
    """Seconds the refresh token lasts, when there is one."""


def _positive_int(value: Any) -> TypeGuard[int]:
    return type(value) is int and value > 0


def _device_authorization(data: Any) -> GitHubCopilotDeviceAuthorization | None:
    if not isinstance(data, dict):
        return None
    device_code, user_code, uri = data.get('device_code'), data.get('user_code'), data.get('verification_uri')
    expires_in, interval = data.get('expires_in'), data.get('interval', 5)
    if not (isinstance(device_code, str) and device_code and isinstance(user_code, str) and user_code):
        return None
    if uri != _VERIFICATION_URI or not _positive_int(expires_in) or not _positive_int(interval):
        return None
    return GitHubCopilotDeviceAuthorization(
        device_code=device_code, user_code=user_code, verification_uri=uri, expires_in=expires_in, interval=interval
    )


def _credentials(data: dict[str, Any]) -> GitHubCopilotCredentials | None:
    access_token, scope, refresh = data.get('access_token'), data.get('scope'), data.get('refresh_token')
    if not (isinstance(access_token, str) and access_token) or data.get('token_type') != 'bearer':
        return None
    if not isinstance(scope, str) or not (refresh is None or (isinstance(refresh, str) and refresh)):
        return None
    durations = [data.get('expires_in'), data.get('refresh_token_expires_in')]
    if not all(d is None or _positive_int(d) for d in durations):
        return None
    return GitHubCopilotCredentials(
        access_token=access_token, token_type='bearer', scope=scope, refresh_token=refresh,
        expires_in=durations[0], refresh_token_expires_in=durations[1],
    )  # fmt: skip


def _error_code(data: Any) -> str | None:
    """The `error` of an OAuth error body, if `data` is one."""
    code = data.get('error') if isinstance(data, dict) else None
    return code if isinstance(code, str) and _ERROR_CODE.fullmatch(code) else None


class GitHubCopilotOAuthFlow:
    """One device login on github.com for your own OAuth app (device flow enabled in its settings). No I/O on making.

    `await flow.start()` gives the code to show; `await flow.wait_for_authorization()` polls until the user approves
    (or refuses, or the code expires). One login per instance at a time: its methods are not for concurrent use.
    """

    _sleep: Callable[[float], Awaitable[None]] = staticmethod(anyio.sleep)
    _clock: Callable[[], float] = staticmethod(time.monotonic)

    def __init__(
        self,
        *,
        client_id: str,
        scope: str = '',
        http_client: httpx.AsyncClient | None = None,
        base_url: str = _GITHUB,
    ) -> None:
        """Configure the login.

        Args:
            client_id: Your OAuth app's client id (not another application's).
            scope: The GitHub OAuth scopes to ask for, space-separated (none by default).
            http_client: An `httpx.AsyncClient` to send with (redirects are not followed); else a client made for
                each request and closed after it.
            base_url: GitHub's web host (an Edgewise addition, for a test server).

        Raises:
            UserError: `client_id` is blank.
        """
        if not client_id.strip():
            raise UserError('`client_id` must be the (non-empty) client ID of your GitHub OAuth app.')
        self._client_id = client_id
        self._scope = scope
        self._http_client = http_client
        self._base_url = base_url.rstrip('/')
        self._pending: tuple[GitHubCopilotDeviceAuthorization, float] | None = None

    def __repr__(self) -> str:
        return f'{type(self).__name__}(client_id={self._client_id!r}, scope={self._scope!r})'

    async def start(self) -> GitHubCopilotDeviceAuthorization:
        """Ask GitHub for a new device code (replacing any earlier one of this flow); it expires `expires_in`
        seconds after its answer arrives.

        Raises:
            UserError: GitHub answered an error status, refused the client, or answered something unusable.
        """
        self._pending = None
        data = await self._post('/login/device/code', {'client_id': self._client_id, 'scope': self._scope})
        received = self._clock()
        if (code := _error_code(data)) is not None:
            raise UserError(f'GitHub device authorization failed: {code}.')
        authorization = _device_authorization(data)
        if authorization is None:
            raise UserError('GitHub returned an invalid device authorization response.')
        self._pending = (authorization, received + authorization.expires_in)
        return authorization

    async def wait_for_authorization(self) -> GitHubCopilotCredentials:
        """Poll GitHub until the user approves, then return the token. Each device code is polled once: call
        `start()` again after this returns or fails.

        Waits GitHub's interval before every poll, the first included, and 5 seconds more after each `slow_down`.

        Raises:
            UserError: `start()` was not called; the user refused; the code expired; or GitHub answered an error
                status or something unusable.
        """
        if self._pending is None:
            raise UserError('Call `start()` before `wait_for_authorization()`.')
        authorization, deadline = self._pending
        self._pending = None
        interval = authorization.interval
        form = {'client_id': self._client_id, 'device_code': authorization.device_code, 'grant_type': _DEVICE_GRANT}
        expired = UserError('GitHub device authorization expired. Call `start()` to request a new code.')
        try:
            with anyio.fail_after(max(0.0, deadline - self._clock())):
                while True:
                    await self._sleep(interval)
                    if self._clock() >= deadline:
                        raise expired
                    data = await self._post('/login/oauth/access_token', form)
                    code = _error_code(data)
                    if code == 'authorization_pending':
                        continue
                    if code == 'slow_down':
                        asked = data.get('interval')
                        interval = max(interval + 5, asked if _positive_int(asked) else 0)
                        continue
                    if code is not None:
                        raise UserError(f'GitHub device authorization failed: {code}.')
                    credentials = _credentials(data) if isinstance(data, dict) else None
                    if credentials is None:
                        raise UserError('GitHub returned an invalid device token response.')
                    return credentials
        except TimeoutError:
            raise expired from None

    async def _post(self, path: str, form: dict[str, str]) -> Any:
        url = f'{self._base_url}{path}'
        headers = {'accept': 'application/json'}
        if self._http_client is not None:
            response = await self._http_client.post(url, data=form, headers=headers, follow_redirects=False)
        else:
            async with own_http_client() as client:
                response = await client.post(url, data=form, headers=headers, follow_redirects=False)
        if response.status_code != 200:
            raise UserError(f'GitHub device authorization request failed (HTTP {response.status_code}).')
        try:
            return response.json()
        except ValueError:
            return None

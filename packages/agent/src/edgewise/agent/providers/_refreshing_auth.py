"""The `httpx.Auth` of providers whose requests carry refreshable credentials (OAuth tokens, Google Cloud access
tokens): the credentials on each request to the provider's API, refreshed before sending when needed and once more
after a 401.

What the credentials are and how they refresh is the holder's (`RefreshingCredentials`); the flow here is the same
for all. It adds credentials only to requests under the holder's base URL, and only over HTTPS or to a loopback
address (`covers`), so a client used for other destinations never leaks them.
"""

from __future__ import annotations as _annotations

import ipaddress
from collections.abc import AsyncGenerator, Generator
from typing import TYPE_CHECKING, Protocol

from ..exceptions import UserError

if TYPE_CHECKING:
    import httpx

__all__ = ('RefreshingCredentials', 'refreshing_auth', 'covers')


class RefreshingCredentials(Protocol):
    """What `refreshing_auth` asks of the holder of the credentials (a provider)."""

    def _covers(self, url: httpx.URL) -> bool:
        """Whether a request to `url` gets the credentials."""
        ...

    async def _ready(self) -> int:
        """Make the credentials ready to send (loaded, refreshed if stale); the revision that will be sent."""
        ...

    def _sending_headers(self) -> dict[str, str]:
        """The headers carrying the credentials as they are now (raise `UserError` for unusable ones)."""
        ...

    async def _refresh_after_401(self, revision: int) -> None:
        """Refresh once for a request sent with `revision` and answered 401, unless another task did already."""
        ...


class _RefreshingAuthFlow:
    """The flow of `refreshing_auth`: credentials on covered requests, one replay after a 401."""

    requires_request_body = True  # the replay sends the body again
    requires_response_body = False

    def __init__(self, holder: RefreshingCredentials, owner_name: str) -> None:
        self._holder = holder
        self._owner_name = owner_name

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        raise UserError(f'`{self._owner_name}` sends its requests with an async HTTP client only.')
        yield request  # pragma: no cover - makes this a generator, as httpx expects

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        holder = self._holder
        if not holder._covers(request.url):
            yield request
            return
        revision = await holder._ready()
        request.headers.update(holder._sending_headers())
        response = yield request
        if response.status_code != 401:
            return
        await response.aread()
        await holder._refresh_after_401(revision)
        request.headers.update(holder._sending_headers())
        yield request


def refreshing_auth(holder: RefreshingCredentials) -> httpx.Auth:
    """An `httpx.Auth` putting `holder`'s credentials on the requests it covers (named by its class in errors)."""
    import httpx

    class _Auth(_RefreshingAuthFlow, httpx.Auth):
        pass

    return _Auth(holder, type(holder).__name__)


def covers(base_url: str, url: httpx.URL) -> bool:
    """Whether `url` is under `base_url` (same scheme, host and port; under its path), over HTTPS or to a loopback
    host: where credentials for `base_url` may go."""
    import httpx

    base = httpx.URL(base_url)
    if (url.scheme, url.host, url.port) != (base.scheme, base.host, base.port):
        return False
    if url.scheme != 'https' and not _is_loopback(url.host):
        return False
    prefix = base.path.rstrip('/')
    return url.path == prefix or url.path.startswith(prefix + '/')


def _is_loopback(host: str) -> bool:
    if host == 'localhost':
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False

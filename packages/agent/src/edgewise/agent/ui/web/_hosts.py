"""The `Host` check of the chat app: it answers only under local names and the names it is told.

Binding to 127.0.0.1 keeps other machines out, not other web sites: a site can point a name it owns at
127.0.0.1 (DNS rebinding) and its pages then talk to the app as if they were its own. The one thing such a
page cannot choose is the `Host` header, which carries the site's name: so a request is answered only when
its `Host` is an IP address, `localhost` or a name under `.localhost` (names a site cannot rebind), or
matches `allowed_hosts`. Only `Host` is read: `X-Forwarded-Host` and `Forwarded` are set by anyone.
"""

from __future__ import annotations as _annotations

import ipaddress
from collections.abc import Sequence
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from ...exceptions import UserError

__all__ = ('ANY_HOST', 'HostCheck', 'host_allowed', 'host_pattern')

ANY_HOST = '*'
"""The `allowed_hosts` entry that answers any `Host` (only behind something that authenticates requests)."""


def host_pattern(pattern: str) -> str:
    """An `allowed_hosts` entry, lowercased and without a trailing dot.

    Raises:
        UserError: the entry is a wildcard that names no domain (`'*.'`, `'*example.com'`).
    """
    lowered = pattern.strip().lower()
    named = lowered.startswith('*.') and lowered[2:].strip('.')
    if lowered != ANY_HOST and lowered.startswith('*') and not named:
        raise UserError(
            f'`allowed_hosts` entry {pattern!r} names no domain: give a host name (`chat.example.com`), '
            f'`*.example.com` for its subdomains, or `{ANY_HOST}` for any host.'
        )
    return lowered.removesuffix('.')


def _hostname(header: str) -> str | None:
    if not header or any(c in header for c in '@/?#\\'):
        return None
    try:
        name = urlsplit(f'//{header}').hostname
    except ValueError:
        return None
    if not name:
        return None
    return name.removesuffix('.') or None


def host_allowed(header: str, patterns: Sequence[str]) -> bool:
    """Whether a request with this `Host` header is answered (`patterns` as `host_pattern` makes them)."""
    if ANY_HOST in patterns:
        return True
    name = _hostname(header)
    if name is None:
        return False
    try:
        ipaddress.ip_address(name)
    except ValueError:
        pass
    else:
        return True  # an address is no name a site could rebind
    if name == 'localhost' or name.endswith('.localhost'):
        return True
    for pattern in patterns:
        if pattern.startswith('*.') and name.endswith(pattern[1:]):
            return True
        if name == pattern:
            return True
    return False


class HostCheck:
    """ASGI middleware refusing requests under another `Host` with 421 (Misdirected Request)."""

    def __init__(self, app: ASGIApp, allowed_hosts: Sequence[str]) -> None:
        """Wrap `app`; `allowed_hosts` as `create_web_app` takes it."""
        self.app = app
        self.patterns = [host_pattern(p) for p in allowed_hosts]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on, or refuse it."""
        if scope['type'] not in ('http', 'websocket'):
            await self.app(scope, receive, send)
            return
        header = Headers(scope=scope).get('host', '')
        if host_allowed(header, self.patterns):
            await self.app(scope, receive, send)
            return
        if scope['type'] == 'websocket':
            await send({'type': 'websocket.close', 'code': 1008})
            return
        text = (
            f'This chat app does not answer under the host {header!r}: only under an IP address, localhost or a '
            'name under .localhost, so that no web site can reach it through a name it points at this machine. '
            'To serve it under a host name, pass the name in `allowed_hosts`.\n'
        )
        response = PlainTextResponse(text, status_code=421, headers={'x-content-type-options': 'nosniff'})
        await response(scope, receive, send)

"""Fetching a URL a model chose without letting it reach what the machine can reach: the `web_fetch` tool's
downloads.

Each hop (the URL, then every redirect target) is checked before it is requested: only http and https, the domain
filters, and every address the host resolves to must be public (unless local addresses are allowed); cloud
metadata addresses are refused always. The request then goes to the address that was checked (the `Host` header
and the TLS server name keep the host's name), so a second DNS answer cannot swap in another address.
"""

from __future__ import annotations as _annotations

import contextlib
import ipaddress
import socket
import ssl
from dataclasses import dataclass
from urllib.parse import urljoin

import anyio
import httpx

__all__ = ('FetchedResponse', 'safe_get')

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_METADATA_ADDRESSES: frozenset[IPAddress] = frozenset(
    ipaddress.ip_address(address)
    for address in (
        '169.254.169.254',
        '169.254.170.2',
        '169.254.170.23',
        '168.63.129.16',
        '100.100.100.200',
        '192.0.0.192',
        '169.254.42.42',
        '169.254.0.23',
        'fd00:ec2::254',
        'fd00:ec2::23',
        'fd20:ce::254',
        'fd00:42::42',
    )
)
"""Where clouds serve instance credentials; some are public addresses, so only this list keeps them out."""

_NAT64 = ipaddress.IPv6Network('64:ff9b::/96')
_SENSITIVE_HEADERS = frozenset({'authorization', 'cookie', 'proxy-authorization'})
_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})


@dataclass(frozen=True)
class FetchedResponse:
    """What a `safe_get` brought back."""

    url: str
    """The URL of the final hop (after redirects)."""
    status_code: int
    headers: httpx.Headers
    content: bytes
    """The body, decoded from its content encoding."""

    @property
    def media_type(self) -> str:
        """The content type without parameters, lowercased (empty when the server sent none)."""
        return str(self.headers.get('content-type', '')).split(';')[0].strip().lower()

    @property
    def charset(self) -> str | None:
        """The charset the content type names, if any."""
        for parameter in str(self.headers.get('content-type', '')).split(';')[1:]:
            name, _, value = parameter.partition('=')
            if name.strip().lower() == 'charset' and value.strip():
                return str(value).strip().strip('"\'')
        return None


def _embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    found = [a for a in (address.ipv4_mapped, address.sixtofour) if a is not None]
    if address.teredo is not None:
        found.extend(address.teredo)
    if address in _NAT64:
        found.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return found


def _candidates(address: IPAddress) -> list[IPAddress]:
    if isinstance(address, ipaddress.IPv6Address):
        return [address, *_embedded_ipv4(address)]
    return [address]


def is_cloud_metadata(address: IPAddress) -> bool:
    """Whether `address` (or an IPv4 address an IPv6 one carries) is a cloud metadata address."""
    return any(candidate in _METADATA_ADDRESSES for candidate in _candidates(address))


def is_local(address: IPAddress) -> bool:
    """Whether `address` (or an IPv4 address an IPv6 one carries) is not a public unicast address: private,
    loopback, link-local, shared, reserved, multicast or unspecified."""
    return any(not c.is_global or c.is_multicast for c in _candidates(address))


def _domain_key(host: str) -> str:
    host = host.strip().rstrip('.').lower()
    try:
        return host.encode('idna').decode('ascii')
    except UnicodeError:
        return host


def check_domain(host: str, *, allowed_domains: list[str] | None, blocked_domains: list[str] | None) -> None:
    """Refuse `host` if it is not among `allowed_domains` or among `blocked_domains` (exact host names, ignoring
    case, a trailing dot and the IDNA spelling).

    Raises:
        ValueError: the host is refused.
    """
    key = _domain_key(host)
    if allowed_domains is not None and key not in {_domain_key(d) for d in allowed_domains}:
        raise ValueError(f'Domain {host!r} is not in the allowed domains list. Allowed: {allowed_domains}')
    if blocked_domains is not None and key in {_domain_key(d) for d in blocked_domains}:
        raise ValueError(f'Domain {host!r} is blocked.')


async def _resolve(url: httpx.URL) -> list[IPAddress]:
    host = url.host
    try:
        return [ipaddress.ip_address(host.split('%')[0])]
    except ValueError:
        pass
    port = url.port or (443 if url.scheme == 'https' else 80)
    try:
        infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise ValueError(f'DNS resolution failed for hostname {host!r}: {exc}') from exc
    return [ipaddress.ip_address(str(info[4][0]).split('%')[0]) for info in infos]


async def check_url(
    url: httpx.URL,
    *,
    allow_local: bool,
    local_hint: str,
    allowed_domains: list[str] | None,
    blocked_domains: list[str] | None,
) -> IPAddress:
    """Check one hop and return the address to connect to.

    Raises:
        ValueError: the URL is refused (scheme, domain, or one of the host's addresses).
    """
    if url.scheme not in ('http', 'https'):
        raise ValueError(f'URL protocol {url.scheme!r} is not allowed. Only http:// and https:// are supported.')
    if not url.host:
        raise ValueError(f'Invalid URL: no hostname found in {str(url)!r}')
    check_domain(url.host, allowed_domains=allowed_domains, blocked_domains=blocked_domains)
    addresses = await _resolve(url)
    if not addresses:  # pragma: no cover - getaddrinfo raises rather than answering nothing
        raise ValueError(f'DNS resolution failed for hostname {url.host!r}: no address')
    for address in addresses:
        if is_cloud_metadata(address):
            raise ValueError(f'Access to cloud metadata service ({address}) is blocked for security reasons.')
        if not allow_local and is_local(address):
            raise ValueError(f'Access to private/internal IP address ({address}) is blocked. {local_hint}')
    return addresses[0]


def _origin(url: httpx.URL) -> tuple[str, str, int]:
    return url.scheme, url.host.lower(), url.port or (443 if url.scheme == 'https' else 80)


def _keeps_credentials(source: httpx.URL, target: httpx.URL) -> bool:
    if _origin(source) == _origin(target):
        return True
    # The one cross-origin hop that keeps them: the same host moving from http on 80 to https on 443.
    return _origin(source) == ('http', target.host.lower(), 80) and _origin(target) == (
        'https',
        source.host.lower(),
        443,
    )


async def _read_capped(response: httpx.Response, max_bytes: int | None) -> bytes:
    chunks: list[bytes] = []
    size = 0
    stream = response.aiter_bytes()
    try:
        async for chunk in stream:
            size += len(chunk)
            if max_bytes is not None and size > max_bytes:
                raise ValueError(f'Download exceeds the maximum size of {max_bytes} bytes.')
            chunks.append(chunk)
    except ValueError:
        # httpx's nested stream generators end only when exhausted (closing the outer one leaves the inner ones
        # to the garbage collector, which trio warns about): with the connection closed, one more step ends them.
        await response.aclose()
        with contextlib.suppress(httpx.HTTPError, StopAsyncIteration):
            await stream.__anext__()
        raise
    return b''.join(chunks)


async def safe_get(
    url: str,
    *,
    allow_local: bool = False,
    local_hint: str = '',
    request_timeout: float = 30,
    headers: dict[str, str] | None = None,
    allowed_domains: list[str] | None = None,
    blocked_domains: list[str] | None = None,
    max_bytes: int | None = None,
    max_redirects: int = 10,
    verify: ssl.SSLContext | bool = True,
) -> FetchedResponse:
    """GET `url`, following redirects by hand and checking every hop (`verify`: httpx's TLS verification).

    Raises:
        ValueError: a hop is refused, there are too many redirects, or the body is larger than `max_bytes`.
        httpx.HTTPStatusError: the final answer has an error status.
        httpx.HTTPError: the request failed (connection, timeout, protocol, bad URL).
    """
    if max_bytes is not None and max_bytes < 0:
        raise ValueError('max_bytes must be non-negative')
    current = httpx.URL(url)
    sent_headers = {'Accept-Encoding': 'identity, gzip', **(headers or {})}
    redirects = 0
    # No proxies from the environment: the request has to go to the address that was checked.
    async with httpx.AsyncClient(
        timeout=request_timeout, trust_env=False, follow_redirects=False, verify=verify
    ) as client:
        while True:
            address = await check_url(
                current,
                allow_local=allow_local,
                local_hint=local_hint,
                allowed_domains=allowed_domains,
                blocked_domains=blocked_domains,
            )
            host_header = current.netloc.decode('ascii')
            # httpx keeps cookies by the address a request went to, which hosts can share: none are carried over.
            client.cookies.clear()
            request = client.build_request(
                'GET',
                current.copy_with(host=str(address)),
                headers={**sent_headers, 'Host': host_header},
                extensions={'sni_hostname': current.host} if current.scheme == 'https' else {},
            )
            response = await client.send(request, stream=True)
            try:
                if response.status_code in _REDIRECT_STATUSES:
                    location = response.headers.get('location')
                    if not location:
                        raise ValueError('Redirect response missing Location header')
                    redirects += 1
                    if redirects > max_redirects:
                        raise ValueError(f'Too many redirects ({redirects}). Maximum allowed: {max_redirects}')
                    target = httpx.URL(urljoin(str(current), location))
                    if not _keeps_credentials(current, target):
                        sent_headers = {k: v for k, v in sent_headers.items() if k.lower() not in _SENSITIVE_HEADERS}
                    current = target
                    continue
                content = await _read_capped(response, max_bytes)
            finally:
                await response.aclose()
            if response.status_code >= 400:
                # Raised against the URL as asked for, not the address it was sent to.
                shown = httpx.Response(response.status_code, request=httpx.Request('GET', current))
                shown.raise_for_status()
            return FetchedResponse(
                url=str(current), status_code=response.status_code, headers=response.headers, content=content
            )

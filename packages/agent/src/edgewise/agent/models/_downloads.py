"""Files given by URL that an API cannot take as a URL: downloaded (through the provider's HTTP client) and
sent as data, before the pure mapping of the messages.

As in pydantic-ai, a download refuses private, loopback and link-local addresses unless the file says
`force_download='allow-local'`, and always refuses cloud metadata addresses.
"""

from __future__ import annotations as _annotations

import dataclasses
import ipaddress
import socket
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlparse

import anyio

from ..exceptions import UserError
from ..messages import BinaryContent, FileUrl, ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart

if TYPE_CHECKING:
    import httpx

__all__ = ('download_files', 'download')

_METADATA_ADDRESSES = frozenset(
    {
        ipaddress.ip_address('169.254.169.254'),
        ipaddress.ip_address('fd00:ec2::254'),
        ipaddress.ip_address('100.100.100.200'),
    }
)


async def download_files(
    messages: list[ModelMessage], needs_download: Callable[[FileUrl], bool], client: httpx.AsyncClient
) -> list[ModelMessage]:
    """`messages` with each file URL that `needs_download` replaced by its data (the list itself when none).

    Raises:
        UserError: a download failed or its address is refused.
    """
    cache: dict[str, BinaryContent] = {}

    async def item(value: Any) -> Any:
        if isinstance(value, FileUrl) and needs_download(value):
            if value.url not in cache:
                cache[value.url] = await download(value, client)
            return cache[value.url]
        return value

    async def items(values: Sequence[Any]) -> list[Any] | None:
        new = [await item(v) for v in values]
        return new if any(a is not b for a, b in zip(new, values, strict=True)) else None

    result: list[ModelMessage] = []
    changed = False
    for message in messages:
        if isinstance(message, ModelRequest):
            parts: list[Any] = []
            for part in message.parts:
                if isinstance(part, UserPromptPart) and not isinstance(part.content, str):
                    if (content := await items(part.content)) is not None:
                        part = dataclasses.replace(part, content=content)
                elif isinstance(part, ToolReturnPart) and part.files:
                    values = part.content if isinstance(part.content, list) else [part.content]
                    if (content := await items(values)) is not None:
                        part = dataclasses.replace(
                            part, content=content if isinstance(part.content, list) else content[0]
                        )
                parts.append(part)
            if any(a is not b for a, b in zip(parts, message.parts, strict=True)):
                message = dataclasses.replace(message, parts=parts)
                changed = True
        result.append(message)
    return result if changed else messages


_DOWNLOAD_HEADERS: Final = frozenset({'host', 'accept', 'accept-encoding', 'connection', 'user-agent'})
"""The headers of the client that a download keeps (the others may carry the API's credentials)."""


async def download(file: FileUrl, client: httpx.AsyncClient) -> BinaryContent:
    """The data of `file`, its media type from the response (or the file's when the response says none).

    Raises:
        UserError: the address is refused, the server could not be reached, or it answered with an error.
    """
    import httpx

    await _check_address(file)
    # The client's pool, proxies and transport, but none of its own headers, cookies or auth: they are meant for the
    # API (a gateway's key in `headers=`), and the file may be anywhere.
    request = client.build_request('GET', file.url)
    request.headers = httpx.Headers({k: v for k, v in request.headers.items() if k.lower() in _DOWNLOAD_HEADERS})
    try:
        response = await client.send(request, auth=None, follow_redirects=False)
    except httpx.HTTPError as exc:
        raise UserError(f'Could not download {file.url}: {exc!r}') from exc
    if response.status_code >= 400:
        raise UserError(f'Could not download {file.url}: the server answered with status {response.status_code}')
    if response.is_redirect:
        # Redirects are not followed: the target's address would escape the check above.
        raise UserError(f'Could not download {file.url}: it redirects; give the final URL')
    media_type = response.headers.get('content-type', '').split(';')[0].strip()
    if not media_type or media_type == 'application/octet-stream':
        media_type = file.media_type
    return BinaryContent(
        response.content, media_type=media_type, identifier=file.identifier, vendor_metadata=file.vendor_metadata
    )


async def _check_address(file: FileUrl) -> None:
    parsed = urlparse(file.url)
    if parsed.scheme not in ('http', 'https') or not parsed.hostname:
        raise UserError(f'Cannot download {file.url}: only http and https URLs can be downloaded')
    host = parsed.hostname
    try:
        addresses = [ipaddress.ip_address(host)]
    except ValueError:
        try:
            infos = await anyio.getaddrinfo(host, parsed.port or 443, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise UserError(f'Could not download {file.url}: {exc}') from exc
        addresses = [ipaddress.ip_address(str(info[4][0]).split('%')[0]) for info in infos]
    for address in addresses:
        if address in _METADATA_ADDRESSES:
            raise UserError(f'Refusing to download {file.url}: {address} is a cloud metadata address')
        local = address.is_private or address.is_loopback or address.is_link_local or address.is_reserved
        if local and file.force_download != 'allow-local':
            raise UserError(
                f"Refusing to download {file.url}: {address} is a private address; set force_download='allow-local' "
                'on the file to allow it'
            )

"""Rendering diagram images through a mermaid.ink-compatible HTTP service."""

from __future__ import annotations as _annotations

import base64
from typing import TYPE_CHECKING

import httpx

from ..exceptions import DiagramRenderError, DiagramTooLongError, MermaidServiceError
from ._config import DEFAULT_BASE_URL

if TYPE_CHECKING:
    from ._config import MermaidConfig

__all__ = ('render', 'DEFAULT_MAX_URL_LENGTH')

DEFAULT_MAX_URL_LENGTH = 16_384
"""Node's default limit on the request head, which mermaid.ink's server enforces on the URL."""
_TIMEOUT = httpx.Timeout(30.0, connect=10.0)
# The statuses servers answer a request line or URL that is too long with.
_TOO_LONG_STATUSES = frozenset({414, 431})


def render(code: str, config: MermaidConfig) -> bytes:
    """Send `code` to the service in a GET URL, as mermaid.ink expects, and return the image it answers with."""
    base_url = config.get('base_url', DEFAULT_BASE_URL).rstrip('/')
    url, params = _request(base_url, base64.b64encode(code.encode()).decode(), config)
    client = config.get('httpx_client')
    if client is None:
        with httpx.Client(timeout=_TIMEOUT) as own_client:
            return _send(own_client, url, params, base_url, config)
    return _send(client, url, params, base_url, config)


def _request(base_url: str, encoded: str, config: MermaidConfig) -> tuple[str, dict[str, str | float]]:
    """The URL and query parameters of the request, the same as pydantic-graph 1.x sends to mermaid.ink."""
    params: dict[str, str | float] = {}
    image_type = config.get('image_type')
    if image_type == 'pdf':
        url = f'{base_url}/pdf/{encoded}'
        if config.get('pdf_fit'):
            params['fit'] = ''
        if config.get('pdf_landscape'):
            params['landscape'] = ''
        if pdf_paper := config.get('pdf_paper'):
            params['paper'] = pdf_paper
    elif image_type == 'svg':
        url = f'{base_url}/svg/{encoded}'
    else:
        url = f'{base_url}/img/{encoded}'
        if image_type:
            params['type'] = image_type
    if background_color := config.get('background_color'):
        params['bgColor'] = background_color
    if theme := config.get('theme'):
        params['theme'] = theme
    if width := config.get('width'):
        params['width'] = width
    if height := config.get('height'):
        params['height'] = height
    if scale := config.get('scale'):
        params['scale'] = scale
    return url, params


def _send(
    client: httpx.Client, url: str, params: dict[str, str | float], base_url: str, config: MermaidConfig
) -> bytes:
    request = client.build_request('GET', url, params=params)
    url_length = len(str(request.url))
    max_length = config.get('max_url_length', DEFAULT_MAX_URL_LENGTH)
    if url_length > max_length:
        raise DiagramTooLongError(
            f'The diagram is too long for the mermaid service: its request URL would be {url_length} characters, '
            f'over the limit of {max_length}. Render it offline with `renderer="local"`, or raise '
            '`max_url_length` for a self-hosted service that accepts longer URLs.',
            url_length=url_length,
        )
    try:
        response = client.send(request)
    except httpx.TransportError as e:
        raise DiagramRenderError(
            f'Cannot reach the mermaid service at {base_url}: {e or type(e).__name__}. Check `base_url` and the '
            'network, or render offline with `renderer="local"`.'
        ) from e
    if response.is_success:
        return response.content
    status = response.status_code
    if status in _TOO_LONG_STATUSES:
        raise DiagramTooLongError(
            f'The mermaid service at {base_url} refused the request as too long ({status} {response.reason_phrase}):'
            f' the diagram needs a {url_length}-character URL. Render it offline with `renderer="local"`.',
            url_length=url_length,
            status_code=status,
        )
    detail = _service_message(response)
    raise MermaidServiceError(
        f'{status} error generating image:\n{detail}\n(the mermaid service at {base_url} answered {status} '
        f'{response.reason_phrase})',
        request=request,
        response=response,
    )


def _service_message(response: httpx.Response) -> str:
    """The service's explanation, shortened: error pages can be long HTML documents."""
    text = ' '.join(response.text.split())
    return text if len(text) <= 500 else f'{text[:497]}...'

"""The one HTTP exchange of the search tools' clients (Tavily, Exa): a JSON POST with the key in a header, and the
errors it can end in, worded for whoever can act on them.

A refused key (401, 403) or another refusal of the request (4xx) is the application's to fix: a `UserError`. A
rate limit, a server error or a connection that failed may pass: a `ModelRetry`, so the model can try again or do
without. The key never appears in an error: the service's own words are kept, with the key blanked out should it
echo it.
"""

from __future__ import annotations as _annotations

from typing import Any

import httpx

from ..exceptions import ModelRetry, UserError

__all__ = ('post_json',)


def _detail(response: httpx.Response) -> str:
    try:
        body: Any = response.json()
    except ValueError:
        return response.text[:500]
    if isinstance(body, dict):
        for key in ('detail', 'error', 'message'):
            value = body.get(key)
            if isinstance(value, dict):
                value = value.get('error') or value.get('message') or value
            if value:
                return str(value)[:500]
    return str(body)[:500]


async def post_json(
    url: str,
    body: dict[str, Any],
    *,
    service: str,
    headers: dict[str, str],
    secret: str,
    key_hint: str,
    request_timeout: float,
) -> Any:
    """POST `body` as JSON to `url` and return the decoded JSON answer.

    Args:
        url: The endpoint.
        body: The request body.
        service: The service's name, for errors (`'Tavily'`).
        headers: Headers to send (the key among them).
        secret: The key, blanked out of any error text.
        key_hint: Where the key comes from, for the error of a refused key.
        request_timeout: Seconds the request may take.

    Raises:
        UserError: the key or the request was refused (4xx other than 408 and 429).
        ModelRetry: a rate limit, a server error, a failed connection or an answer that is not JSON.
    """

    def hide(text: str) -> str:
        return text.replace(secret, '***') if secret else text

    try:
        async with httpx.AsyncClient(timeout=request_timeout) as client:
            response = await client.post(url, json=body, headers=headers)
    except httpx.HTTPError as exc:
        raise ModelRetry(hide(f'{service} request failed: {type(exc).__name__}: {exc}')) from None
    status = response.status_code
    if status in (401, 403):
        raise UserError(hide(f'{service} refused the API key (HTTP {status}: {_detail(response)}). Check {key_hint}.'))
    if status in (408, 429) or status >= 500:
        raise ModelRetry(hide(f'{service} request failed with HTTP {status}: {_detail(response)}'))
    if status >= 400:
        raise UserError(hide(f'{service} refused the request with HTTP {status}: {_detail(response)}'))
    try:
        return response.json()
    except ValueError:
        raise ModelRetry(f'{service} answered with something that is not JSON (HTTP {status})') from None

"""What the HTTP image models share: the request's headers and body extras, one JSON request over the models' HTTP
layer, strict base64 decoding, and the warning about settings a provider did not use."""

from __future__ import annotations as _annotations

import base64
import binascii
import dataclasses
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from ..exceptions import UnexpectedModelBehavior, UserError
from ..models import _http
from ..providers import Provider
from .settings import ImageGenerationSettings

__all__ = (
    'request_headers',
    'add_extra_body',
    'post_json',
    'decode_base64',
    'warn_settings',
    'prefer_own',
    'check_count',
)


def request_headers(provider: Provider[Any], settings: ImageGenerationSettings) -> dict[str, str]:
    """The provider's headers (its key among them) under the request's `extra_headers`."""
    return {**provider.request_headers(), **(settings.get('extra_headers') or {})}


def add_extra_body(body: dict[str, Any], settings: ImageGenerationSettings) -> list[str]:
    """`extra_body`'s keys put into `body`; the names of the settings ignored (`extra_body` when it is no dict)."""
    extra_body = settings.get('extra_body')
    if not extra_body:
        return []
    if isinstance(extra_body, Mapping) and all(isinstance(key, str) for key in extra_body):
        body.update(extra_body)
        return []
    return ['extra_body']


async def post_json(
    provider: Provider[Any],
    path: str,
    body: Mapping[str, Any],
    headers: Mapping[str, str],
    *,
    model_name: str,
    endpoint_name: str,
    **call_fields: Any,
) -> Any:
    """POST `body` to `path` under the provider's base URL, with the provider's retries and errors (`call_fields`
    replace those of the call: another `http_error` or `error_key`), and return the JSON answer.

    Raises:
        ModelHTTPError: the API answered with an error (after retries).
        ModelAPIError: the API could not be reached (after retries).
        UnexpectedModelBehavior: the answer is not JSON.
    """
    call = _http.provider_call(
        provider,
        f'{provider.base_url}/{path}',
        body,
        headers,
        model_name=model_name,
        operation='image_generation',
        endpoint_name=endpoint_name,
    )
    return await _http.post_for_data(dataclasses.replace(call, **call_fields) if call_fields else call)


def decode_base64(encoded: str, provider: str) -> bytes:
    """The bytes of a base64 payload, checked strictly (a corrupt payload is an error, not a truncated image).

    Raises:
        UnexpectedModelBehavior: the payload is not valid base64.
    """
    try:
        return base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError) as e:
        raise UnexpectedModelBehavior(
            f'{provider} image generation response did not contain valid base64 image data'
        ) from e


def warn_settings(provider: str, *, ignored: Sequence[str] = (), conflicts: Sequence[str] = ()) -> None:
    """One warning naming the settings a provider ignored, and the shared settings its own ones overrode."""
    said: list[str] = []
    if ignored:
        said.append('ignored unsupported settings: ' + ', '.join(f'`{name}`' for name in dict.fromkeys(ignored)))
    if conflicts:
        names = ', '.join(f'`{name}`' for name in dict.fromkeys(conflicts))
        said.append(f'used provider-specific settings instead of: {names}')
    if said:
        warnings.warn(f'{provider} image generation {"; ".join(said)}', UserWarning, stacklevel=3)


def prefer_own(own: str | None, mapped: str | None, setting: str, conflicts: list[str]) -> str | None:
    """A provider's own geometry setting over the value a shared setting maps to; a disagreement is recorded in
    `conflicts` (under the shared setting's name)."""
    if own is None:
        return mapped
    if mapped is not None and mapped != own:
        conflicts.append(setting)
    return own


def check_count(provider: str, n: object) -> None:
    """Refuse an image count that is no positive integer (the provider judges the upper bound).

    Raises:
        UserError: saying so.
    """
    if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n <= 0):
        raise UserError(f'{provider} image generation count must be a positive integer')

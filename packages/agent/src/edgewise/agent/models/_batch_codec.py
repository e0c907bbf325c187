"""What the OpenAI, Anthropic and Gemini batch backends (`_openai_batch`, `_anthropic_batch`, `_google_batch`) share:
groups, size checks, the calls of a batch endpoint, and the errors of requests a batch did not run.

A batch backend adds data and mapping only: its calls go through `_http` (the same retries, error mapping and spans
as a live request), and the body of each batched request is the one the model would send on its own.
"""

from __future__ import annotations as _annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from ..exceptions import ModelAPIError, ModelHTTPError, UserError
from ..messages import ModelMessage, ModelResponse
from . import _http
from ._model import check_allow_model_requests
from .batch import Batch, BatchRequest, BatchResult, EncodedBatchRequest

if TYPE_CHECKING:
    from ._provider_model import ProviderModel

__all__ = (
    'BatchJobError',
    'batch_call',
    'batch_group',
    'batch_priced',
    'check_batch_bytes',
    'encode_call',
    'group_matches',
    'parse_time',
    'require_ended',
    'shared_group',
    'unrun_error',
)

_CREDENTIAL_HEADERS = frozenset({'authorization', 'api-key', 'x-api-key', 'x-goog-api-key'})
"""The headers a provider's requests authenticate with, hashed into a batch's group (never stored as they are)."""


class BatchJobError(ModelHTTPError):
    """The error of a batch job that ended without results for its requests (it failed, was cancelled or expired
    as a whole): each of its requests fails with it."""


def unrun_error(model_name: str, result: BatchResult) -> ModelAPIError:
    """The error of a request the provider ended without running it."""
    if result.status == 'canceled':
        return ModelAPIError(model_name, 'The batch was canceled before the model ran the request.')
    return ModelAPIError(model_name, f'The batch request was {result.status} before the model ran it.')


def shared_group(requests: Sequence[EncodedBatchRequest], provider: str, causes: str) -> str:
    """The `group` every request of a batch shares.

    Raises:
        UserError: there are no requests, or they come from different `causes` (which a batch cannot mix).
    """
    if not requests:
        raise UserError('A batch must contain at least one request.')
    group = requests[0].group
    if any(request.group != group for request in requests):
        raise UserError(f'Requests in one {provider} batch must share a `group`; these came from different {causes}.')
    return group


def group_matches(group: str, expected: str, *, collecting: bool) -> bool:
    """Whether a model whose requests get the `expected` group may use a batch of `group`: the same group to submit,
    the same group but for the credential to check on, collect or cancel a batch (the provider decides whether the
    credential may)."""
    if not collecting:
        return group == expected
    try:
        given = json.loads(group)
    except ValueError:
        return False
    return isinstance(given, dict) and {**given, 'credential': None} == {**json.loads(expected), 'credential': None}


def batch_group(provider_model: ProviderModel, /, **fields: Any) -> str:
    """The group of `provider_model`'s batch requests: hashes of its endpoint and credential, and `fields` (the
    model, the beta flags), as JSON. It holds no secret."""
    headers = provider_model.provider.request_headers()
    credential = sorted((name.lower(), value) for name, value in headers.items() if name.lower() in _CREDENTIAL_HEADERS)
    group = {
        'endpoint': hashlib.sha256(provider_model.base_url.encode()).hexdigest(),
        'credential': hashlib.sha256(json.dumps(credential).encode()).hexdigest(),
        **fields,
    }
    return json.dumps(group, sort_keys=True)


def check_batch_bytes(
    requests: Sequence[EncodedBatchRequest], size: Callable[[EncodedBatchRequest], int], limit: int, provider: str
) -> None:
    """Refuse requests taking more than the `limit` bytes of a batch, before anything is sent."""
    if (total := sum(size(request) for request in requests)) > limit:
        subject = 'This request takes' if len(requests) == 1 else 'These requests take'
        raise UserError(f'{subject} {total:,} bytes, more than the {limit:,} bytes a {provider} batch can hold.')


def parse_time(value: Any) -> datetime:
    """A provider's RFC 3339 time; now when it gives none (or one that does not parse)."""
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace('Z', '+00:00'))
        except ValueError:
            pass
    return datetime.now(tz=timezone.utc)


def require_ended(batch: Batch) -> None:
    """Raises: UserError: the batch has not ended (its results are not there yet)."""
    if batch.status != 'ended':
        raise UserError(f'Batch {batch.id!r} has not ended yet; check its status with `batch_status()` first.')


def batch_priced(response: ModelResponse) -> ModelResponse:
    """Mark `response` as processed in a batch (batch prices apply to it)."""
    response.provider_details = {**(response.provider_details or {}), 'processing': 'batch'}
    return response


async def encode_call(model: ProviderModel, request: BatchRequest, provider: str) -> _http.HTTPCall:
    """The call `model.request()` would make for `request` (its files downloaded, its thinking resolved), whose
    body is what the batch sends.

    Raises:
        UserError: the request has settings a batch cannot honour (a `timeout`, `extra_headers`).
    """
    settings = dict(model._merged_settings(request.model_settings))
    if 'timeout' in settings:
        raise UserError(
            f'{provider} batch requests do not support per-request `timeout`; configure the client instead.'
        )
    if {name.lower() for name in settings.get('extra_headers') or {}} - {'user-agent'}:
        raise UserError(
            f'{provider} batch requests do not support per-request `extra_headers`; set them on the client.'
        )
    # The provider runs a batched request itself: there is no client retry a retry count could apply to.
    settings.pop('max_retries', None)
    settings.pop('extra_headers', None)
    messages: list[ModelMessage] = await model._with_files(request.messages)
    params = model._with_thinking(settings, request.model_request_parameters)  # type: ignore[arg-type]
    return model._call(messages, settings, params, stream=False)  # type: ignore[arg-type]


def batch_call(
    model: ProviderModel,
    url: str,
    *,
    method: str = 'POST',
    body: Mapping[str, Any] | None = None,
    content: bytes | None = None,
    headers: Mapping[str, str] | None = None,
    retries: bool = True,
) -> _http.HTTPCall:
    """A call of the provider's batch or file endpoints, with its client, credentials and retries (none when
    `retries` is false: creating a batch twice would run it twice).

    Raises:
        RuntimeError: model requests are not allowed (`ALLOW_MODEL_REQUESTS`).
    """
    check_allow_model_requests()
    provider = model.provider
    return _http.HTTPCall(
        client=provider.client, url=url, method=method, body=body or {}, content=content,
        headers={**provider.request_headers(), **(headers or {})}, model_name=model.model_name, system=model.system,
        operation='batch', endpoint_name='batch', max_retries=provider.max_retries if retries else 0,
        error_key=model._error_key, base_url=provider.base_url, http_error=model._http_error,
    )  # fmt: skip

"""Anthropic's Message Batches behind `AnthropicModel.batch_*` (as pydantic-ai 2.68's), over httpx.

Each batched request carries the Messages API parameters the model would send on its own. A batch is created with
`POST /v1/messages/batches` (its requests inline, the beta flags they need in `anthropic-beta`), checked with
`GET /v1/messages/batches/{id}` until its `processing_status` is `ended`, cancelled with `POST .../{id}/cancel`, and
its results are read from the JSONL at its `results_url`: one line per request, `succeeded`, `errored`, `canceled` or
`expired`.
"""

from __future__ import annotations as _annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, get_args

import pydantic_core

from ..exceptions import UserError
from ..messages import ModelResponse
from . import _http
from ._batch_codec import (
    batch_call,
    batch_group,
    batch_priced,
    check_batch_bytes,
    encode_call,
    group_matches,
    parse_time,
    require_ended,
    shared_group,
    unrun_error,
)
from ._error_categories import _ANTHROPIC_STATUSES
from .batch import Batch, BatchRequest, BatchResult, BatchResultStatus, BatchStatus, EncodedBatchRequest

if TYPE_CHECKING:
    from .anthropic import AnthropicModel

__all__ = ('MAX_BATCH_BYTES', 'MAX_BATCH_REQUESTS')

_CUSTOM_ID = re.compile(r'[a-zA-Z0-9_-]{1,64}')
"""The `custom_id`s Message Batches accept."""
_ENVELOPE = b'{"requests":[]}'
MAX_BATCH_BYTES = 256_000_000 - len(_ENVELOPE)
"""The most bytes of requests Anthropic takes in a batch (its create request is limited to 256 MB)."""
MAX_BATCH_REQUESTS = 100_000
"""The most requests Anthropic takes in one batch."""
_STATUSES: tuple[BatchStatus, ...] = get_args(BatchStatus)
_RESULT_TYPES = frozenset({'succeeded', 'errored', 'canceled', 'expired'})


def _group(model: AnthropicModel, betas: Sequence[str]) -> str:
    return batch_group(model, betas=sorted(betas))


def _check_model(model: AnthropicModel, group: str, *, collecting: bool = False) -> list[str]:
    """The group's beta flags, once the model is checked against the group."""
    if model.batch_max_requests is None:
        raise UserError(model._no_batch_api_message())
    try:
        betas = [str(beta) for beta in json.loads(group)['betas']]
    except (ValueError, KeyError, TypeError):
        betas = []
    if not group_matches(group, _group(model, betas), collecting=collecting):
        raise UserError(
            'The Anthropic client does not match the batch request group. '
            'Use the client configuration that encoded the requests.'
        )
    return betas


def _url(model: AnthropicModel, path: str = '') -> str:
    return f'{model.provider.base_url}/v1/messages/batches{path}'


async def batch_encode(model: AnthropicModel, request: BatchRequest) -> EncodedBatchRequest:
    """The Messages API parameters of `request`, in the group of the beta flags it needs."""
    if model.batch_max_requests is None:
        raise UserError(model._no_batch_api_message())
    settings = model._merged_settings(request.model_settings)
    if settings.get('anthropic_speed') is not None:
        raise UserError('Anthropic Message Batches do not support `anthropic_speed`.')
    call = await encode_call(model, request, 'Anthropic Message Batches')
    body = {key: value for key, value in call.body.items() if key != 'stream'}
    body.update(settings.get('extra_body') or {})
    if 'speed' in body or body.get('stream') is True or body.get('max_tokens') == 0:
        raise UserError('Anthropic Message Batches do not support `speed`, `stream=True`, or `max_tokens=0`.')
    betas = [beta.strip() for beta in call.headers.get('anthropic-beta', '').split(',') if beta.strip()]
    encoded = EncodedBatchRequest(
        custom_id=request.custom_id, group=_group(model, betas), body=pydantic_core.to_json(body).decode()
    )
    check_batch_bytes([encoded], request_size, MAX_BATCH_BYTES, 'Anthropic')
    return encoded


def request_size(request: EncodedBatchRequest) -> int:
    """The bytes `request` adds to the create request's body: its item and a comma."""
    return (
        len(b'{"custom_id":,"params":},') + len(pydantic_core.to_json(request.custom_id)) + len(request.body.encode())
    )


async def batch_create(model: AnthropicModel, requests: Sequence[EncodedBatchRequest]) -> Batch:
    """Create the batch with its requests inline (not retried: a retry could create it twice)."""
    group = shared_group(requests, 'Anthropic', 'client configurations or beta flags')
    betas = _check_model(model, group)
    check_batch_bytes(requests, request_size, MAX_BATCH_BYTES, 'Anthropic')
    if invalid := [request.custom_id for request in requests if not _CUSTOM_ID.fullmatch(request.custom_id)]:
        raise UserError(
            f'Anthropic Message Batches need `custom_id`s of 1 to 64 letters, digits, `_` or `-`, not {invalid[0]!r}.'
        )
    # The bodies are this module's own `batch_encode` output, embedded as they are.
    items = b','.join(
        b'{"custom_id":' + pydantic_core.to_json(r.custom_id) + b',"params":' + r.body.encode() + b'}' for r in requests
    )
    headers = {'content-type': 'application/json'}
    if betas:
        headers['anthropic-beta'] = ','.join(betas)
    call = batch_call(model, _url(model), content=b'{"requests":[' + items + b']}', headers=headers, retries=False)
    return to_batch(model, await _http.post_for_data(call), group)


async def batch_status(model: AnthropicModel, batch: Batch) -> Batch:
    """The batch as Anthropic has it now."""
    _check_model(model, batch.group, collecting=True)
    data = await _http.post_for_data(batch_call(model, _url(model, f'/{batch.id}'), method='GET'))
    return to_batch(model, data, batch.group)


async def batch_cancel(model: AnthropicModel, batch: Batch) -> Batch:
    """Ask Anthropic to cancel the batch; it goes on `'canceling'` until its running requests end."""
    _check_model(model, batch.group, collecting=True)
    data = await _http.post_for_data(batch_call(model, _url(model, f'/{batch.id}/cancel')))
    return to_batch(model, data, batch.group)


async def batch_results(model: AnthropicModel, batch: Batch) -> list[BatchResult]:
    """The result of each line at the batch's `results_url` (looked up when the handle has none)."""
    require_ended(batch)
    _check_model(model, batch.group, collecting=True)
    url = (batch.provider_details or {}).get('results_url')
    if not url:
        data = await _http.post_for_data(batch_call(model, _url(model, f'/{batch.id}'), method='GET'))
        url = data.get('results_url')
    if not url:
        raise UserError(f'Batch {batch.id!r} has no results: Anthropic gave it no `results_url`.')
    content = await _http.send_for_bytes(batch_call(model, str(url), method='GET'))
    results: list[BatchResult] = []
    for line in content.decode().splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        result = item.get('result') or {}
        kind = result.get('type')
        status: BatchResultStatus = kind if kind in _RESULT_TYPES else 'errored'
        body = json.dumps(result) if status in ('succeeded', 'errored') else None
        results.append(BatchResult(custom_id=str(item['custom_id']), status=status, body=body))
    return results


def batch_decode(model: AnthropicModel, result: BatchResult, request: BatchRequest) -> ModelResponse:
    """The `ModelResponse` of a succeeded result; the error an errored one's request would have raised live (its
    status from its error type); the unrun error of a cancelled or expired one."""
    if result.status == 'succeeded' and result.body is not None:
        return batch_priced(model._parse(json.loads(result.body)['message']))
    if result.status == 'errored' and result.body is not None:
        body = json.loads(result.body).get('error')
        error = body.get('error') if isinstance(body, dict) else None
        error_type = error.get('type') if isinstance(error, dict) else None
        status_code = _ANTHROPIC_STATUSES.get(error_type, 500) if isinstance(error_type, str) else 500
        raise model._http_error(status_code, model.model_name, body, None)
    raise unrun_error(model.model_name, result)


def to_batch(model: AnthropicModel, data: dict[str, Any], group: str) -> Batch:
    """The `Batch` of Anthropic's message batch object."""
    counts = data.get('request_counts') or {}
    status = data.get('processing_status')
    details = {key: data[key] for key in ('results_url', 'expires_at', 'ended_at') if data.get(key)}
    return Batch(
        id=str(data['id']), model_name=model.model_name, provider_name=model.system, group=group,
        # A status added later is one the batch has not ended in.
        status=status if status in _STATUSES else 'in_progress', created_at=parse_time(data.get('created_at')),
        request_count=sum(int(counts.get(key) or 0) for key in ('processing', *sorted(_RESULT_TYPES))),
        provider_details=details or None,
    )  # fmt: skip

"""The Gemini API's Batch Mode behind `GoogleModel.batch_*`, over httpx.

Each batched request is the `generateContent` body the model would send on its own, inlined in the job:
`POST /v1beta/models/{model}:batchGenerateContent` answers with a long-running operation named `batches/{id}`, which
is checked with `GET /v1beta/batches/{id}` until its state ends and cancelled with `POST /v1beta/batches/{id}:cancel`.
The job's results are read from its inlined responses (each keyed by the request's `custom_id`), or from the results
file it names, downloaded as JSONL. Google Cloud (Vertex AI) runs batch prediction jobs from Cloud Storage or
BigQuery instead, so it has no batch API here.
"""

from __future__ import annotations as _annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pydantic_core

from ..exceptions import UserError
from ..messages import ModelResponse
from . import _http
from ._batch_codec import (
    BatchJobError,
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
from .batch import Batch, BatchRequest, BatchResult, BatchResultStatus, BatchStatus, EncodedBatchRequest

if TYPE_CHECKING:
    from .google import GoogleModel

__all__ = ('MAX_BATCH_BYTES', 'MAX_BATCH_REQUESTS')

MAX_BATCH_BYTES = 20_000_000
"""The most bytes of inlined requests the Gemini API takes in one job."""
MAX_BATCH_REQUESTS = 1_000_000
"""The Gemini API limits a job by its size (`MAX_BATCH_BYTES`) rather than its number of requests."""

_STATES: dict[str, BatchStatus] = {
    'CANCELLING': 'canceling', 'SUCCEEDED': 'ended', 'PARTIALLY_SUCCEEDED': 'ended', 'FAILED': 'ended',
    'CANCELLED': 'ended', 'EXPIRED': 'ended',
}  # fmt: skip
"""The end of a state's name (`BATCH_STATE_` or `JOB_STATE_` before it) and what it means; others are in progress."""

RPC_STATUSES: dict[int, tuple[str, int]] = {
    1: ('CANCELLED', 499), 2: ('UNKNOWN', 500), 3: ('INVALID_ARGUMENT', 400), 4: ('DEADLINE_EXCEEDED', 504),
    5: ('NOT_FOUND', 404), 6: ('ALREADY_EXISTS', 409), 7: ('PERMISSION_DENIED', 403), 8: ('RESOURCE_EXHAUSTED', 429),
    9: ('FAILED_PRECONDITION', 400), 10: ('ABORTED', 409), 11: ('OUT_OF_RANGE', 400), 12: ('UNIMPLEMENTED', 501),
    13: ('INTERNAL', 500), 14: ('UNAVAILABLE', 503), 15: ('DATA_LOSS', 500), 16: ('UNAUTHENTICATED', 401),
}  # fmt: skip
"""The status name and HTTP status `generateContent` answers each `google.rpc.Code` with."""


def _state(data: dict[str, Any]) -> str:
    state = (data.get('metadata') or {}).get('state') or data.get('state') or 'STATE_UNSPECIFIED'
    return str(state)


def _status(state: str) -> BatchStatus:
    return _STATES.get(state.removeprefix('BATCH_STATE_').removeprefix('JOB_STATE_'), 'in_progress')


def _group(model: GoogleModel) -> str:
    return batch_group(model, model=model.model_name)


def _check_model(model: GoogleModel, group: str, *, collecting: bool = False) -> None:
    if model.batch_max_requests is None:
        raise UserError(model._no_batch_api_message())
    if not group_matches(group, _group(model), collecting=collecting):
        raise UserError(
            'The Gemini client or model does not match the batch request group. '
            'Use the configuration that encoded the requests.'
        )


def _url(model: GoogleModel, path: str) -> str:
    return f'{model.provider.base_url}/v1beta/{path}'


async def batch_encode(model: GoogleModel, request: BatchRequest) -> EncodedBatchRequest:
    """The `generateContent` body of `request`."""
    if model.batch_max_requests is None:
        raise UserError(model._no_batch_api_message())
    call = await encode_call(model, request, 'Gemini')
    body = dict(call.body)
    encoded = EncodedBatchRequest(
        custom_id=request.custom_id, group=_group(model), body=pydantic_core.to_json(body).decode()
    )
    check_batch_bytes([encoded], request_size, MAX_BATCH_BYTES, 'Gemini')
    return encoded


def _item(request: EncodedBatchRequest) -> bytes:
    # The body is this module's own `batch_encode` output, embedded as it is.
    key = pydantic_core.to_json(request.custom_id)
    return b'{"request":' + request.body.encode() + b',"metadata":{"key":' + key + b'}}'


def request_size(request: EncodedBatchRequest) -> int:
    """The bytes `request` adds to the job's inlined requests: its item and a comma."""
    return len(_item(request)) + 1


async def batch_create(model: GoogleModel, requests: Sequence[EncodedBatchRequest]) -> Batch:
    """Create the job with its requests inline (not retried: a retry could create it twice)."""
    group = shared_group(requests, 'Gemini', 'client configurations or models')
    _check_model(model, group)
    check_batch_bytes(requests, request_size, MAX_BATCH_BYTES, 'Gemini')
    items = b','.join(_item(request) for request in requests)
    content = b''.join(
        (
            b'{"batch":{"displayName":"edgewise-batch","inputConfig":{"requests":{"requests":[',
            items,
            b']}}}}',
        )
    )
    name = model.model_name.removeprefix('models/')
    call = batch_call(
        model, _url(model, f'models/{name}:batchGenerateContent'), content=content,
        headers={'content-type': 'application/json'}, retries=False,
    )  # fmt: skip
    return to_batch(model, await _http.post_for_data(call), group, len(requests))


async def _job(model: GoogleModel, batch: Batch) -> dict[str, Any]:
    data: dict[str, Any] = await _http.post_for_data(batch_call(model, _url(model, batch.id), method='GET'))
    return data


async def batch_status(model: GoogleModel, batch: Batch) -> Batch:
    """The job as the Gemini API has it now."""
    _check_model(model, batch.group, collecting=True)
    return to_batch(model, await _job(model, batch), batch.group, batch.request_count)


async def batch_cancel(model: GoogleModel, batch: Batch) -> Batch:
    """Ask the Gemini API to cancel the job, then look it up."""
    _check_model(model, batch.group, collecting=True)
    await _http.post_for_data(batch_call(model, _url(model, f'{batch.id}:cancel')))
    return to_batch(model, await _job(model, batch), batch.group, batch.request_count)


def _job_error(model: GoogleModel, state: str, data: dict[str, Any]) -> BatchJobError:
    """The error of a job that ended without results: each of its requests fails with it."""
    if state.endswith('FAILED'):
        error = data.get('error') or (data.get('metadata') or {}).get('error') or {}
        code = error.get('code') if isinstance(error, dict) else None
        status_code = RPC_STATUSES[code][1] if code in RPC_STATUSES else 500
        return BatchJobError(status_code=status_code, model_name=model.model_name, body={'error': error or None})
    if state.endswith('CANCELLED'):
        message = 'The batch job was canceled before the model ran the request.'
        return BatchJobError(
            status_code=499, model_name=model.model_name, body={'error': {'code': 1, 'message': message}}
        )
    # Ended by the provider rather than by anyone's intent, like a live request's deadline.
    message = 'The batch job expired before the model ran the request.'
    return BatchJobError(status_code=504, model_name=model.model_name, body={'error': {'code': 4, 'message': message}})


def _output(data: dict[str, Any]) -> dict[str, Any]:
    """The job's output: the operation's `response`, or its metadata's `output`."""
    output = data.get('response') or (data.get('metadata') or {}).get('output') or data.get('output') or {}
    return output if isinstance(output, dict) else {}


async def batch_results(model: GoogleModel, batch: Batch) -> list[BatchResult]:
    """The result of each inlined response, or of each line of the results file.

    Raises:
        BatchJobError: the job failed, was cancelled or expired without writing any result.
    """
    require_ended(batch)
    _check_model(model, batch.group, collecting=True)
    data = await _job(model, batch)
    output = _output(data)
    items: list[dict[str, Any]]
    if (inlined := output.get('inlinedResponses')) is not None:
        items = inlined.get('inlinedResponses', []) if isinstance(inlined, dict) else list(inlined)
        return [_result(str((item.get('metadata') or {}).get('key')), item) for item in items]
    if file_name := output.get('responsesFile'):
        url = f'{model.provider.base_url}/download/v1beta/{file_name}:download?alt=media'
        content = await _http.send_for_bytes(batch_call(model, url, method='GET'))
        lines = [json.loads(line) for line in content.decode().splitlines() if line.strip()]
        return [_result(str(line.get('key')), line) for line in lines]
    state = _state(data)
    if _status(state) == 'ended' and not state.endswith('SUCCEEDED'):
        raise _job_error(model, state, data)
    return []


def _result(key: str, item: dict[str, Any]) -> BatchResult:
    if 'response' in item:
        return BatchResult(custom_id=key, status='succeeded', body=json.dumps(item['response']))
    return BatchResult(custom_id=key, status='errored', body=json.dumps(item.get('error')))


def unlisted_status(batch: Batch) -> BatchResultStatus | None:
    """Why a job left requests out of its results: one cancelled or expired while it ran lists only some."""
    state = str((batch.provider_details or {}).get('state', ''))
    if state.endswith('CANCELLED'):
        return 'canceled'
    if state.endswith('EXPIRED'):
        return 'expired'
    return None


def batch_decode(model: GoogleModel, result: BatchResult, request: BatchRequest) -> ModelResponse:
    """The `ModelResponse` of a succeeded result; the error an errored one's request would have raised live (its
    status from its `google.rpc.Code`); the unrun error of a cancelled or expired one."""
    if result.status == 'succeeded' and result.body is not None:
        return batch_priced(model._parse(json.loads(result.body)))
    if result.status == 'errored' and result.body is not None:
        error = json.loads(result.body)
        error = error if isinstance(error, dict) else {}
        if isinstance(code := error.get('code'), int) and code in RPC_STATUSES:
            status, status_code = RPC_STATUSES[code]
            # As the REST API answers a request with this status: the HTTP status as `code`, and its name.
            body: dict[str, Any] = {'error': {**error, 'code': status_code, 'status': status}}
        else:
            status_code, body = 500, {'error': error}
        raise model._http_error(status_code, model.model_name, body, None)
    raise unrun_error(model.model_name, result)


def to_batch(model: GoogleModel, data: dict[str, Any], group: str, request_count: int) -> Batch:
    """The `Batch` of the job's operation (its state kept in `provider_details`)."""
    metadata = data.get('metadata') or data
    state = _state(data)
    return Batch(
        id=str(metadata.get('name') or data['name']), model_name=model.model_name, provider_name=model.system,
        group=group, status=_status(state), created_at=parse_time(metadata.get('createTime')),
        request_count=request_count, provider_details={'state': state},
    )  # fmt: skip

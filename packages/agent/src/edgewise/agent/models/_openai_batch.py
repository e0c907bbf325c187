"""The OpenAI Batch API behind `OpenAIResponsesModel.batch_*` (as pydantic-ai 2.68's), over httpx.

Each batched request is the Responses API body the model would send on its own. The requests go up as a JSONL file
(`POST /files`, `purpose=batch`), a batch is created for the `/v1/responses` endpoint (`POST /batches`), checked
(`GET /batches/{id}`) and cancelled (`POST /batches/{id}/cancel`); its results are read back, line by line and by
`custom_id`, from the output and error files it writes (`GET /files/{id}/content`).
"""

from __future__ import annotations as _annotations

import json
import uuid
from collections import OrderedDict
from collections.abc import Sequence
from contextlib import suppress
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import pydantic_core

from ..exceptions import ModelAPIError, ModelHTTPError, UserError
from ..messages import ModelResponse
from . import _http
from ._batch_codec import (
    batch_call,
    batch_group,
    batch_priced,
    check_batch_bytes,
    encode_call,
    group_matches,
    require_ended,
    shared_group,
    unrun_error,
)
from .batch import Batch, BatchRequest, BatchResult, BatchResultStatus, BatchStatus, EncodedBatchRequest

if TYPE_CHECKING:
    from .openai import OpenAIResponsesModel

__all__ = ('MAX_BATCH_BYTES', 'MAX_BATCH_REQUESTS')

ENDPOINT = '/v1/responses'
"""The endpoint the batched requests are for."""
MAX_BATCH_BYTES = 200_000_000
"""The most bytes OpenAI takes in a batch's input file."""
MAX_BATCH_REQUESTS = 50_000
"""The most requests OpenAI takes in one batch."""

_STATUSES: dict[str, BatchStatus] = {
    'validating': 'in_progress', 'in_progress': 'in_progress', 'finalizing': 'in_progress',
    'cancelling': 'canceling',
    'completed': 'ended', 'failed': 'ended', 'expired': 'ended', 'cancelled': 'ended',
}  # fmt: skip
_UNRUN: dict[str, BatchResultStatus] = {'batch_expired': 'expired', 'batch_cancelled': 'canceled'}
"""The error codes of a line the batch ended before running."""

_UPLOADED: OrderedDict[tuple[str, str], str] = OrderedDict()
"""The input file this process uploaded for each batch it created (by the batch's endpoint and credential hashes and
id), deleted once OpenAI says the batch completed. Only these are deleted: a `Batch` handle may come from a stored
history, whose file ids are read, never trusted for a deletion. The oldest are forgotten first."""
_UPLOADED_SIZE = 1024


def _check_model(model: OpenAIResponsesModel, group: str, *, collecting: bool = False) -> None:
    if model.batch_max_requests is None:
        raise UserError(model._no_batch_api_message())
    if not group_matches(group, _group(model), collecting=collecting):
        raise UserError(
            'The OpenAI client or model does not match the batch request group. '
            'Use the model and client configuration that encoded the requests.'
        )


def _group(model: OpenAIResponsesModel) -> str:
    return batch_group(model, model=model.model_name)


def _account(model: OpenAIResponsesModel) -> str:
    group = json.loads(_group(model))
    return f'{group["endpoint"]}:{group["credential"]}'


def _url(model: OpenAIResponsesModel, path: str) -> str:
    return f'{model.provider.base_url}{path}'


async def batch_encode(model: OpenAIResponsesModel, request: BatchRequest) -> EncodedBatchRequest:
    """The Responses API body of `request`."""
    if model.batch_max_requests is None:
        raise UserError(model._no_batch_api_message())
    settings = model._merged_settings(request.model_settings)
    if settings.get('openai_background'):
        raise UserError('The OpenAI Batch API does not support `openai_background`.')
    call = await encode_call(model, request, 'OpenAI Batch API')
    body = dict(call.body)
    body.update(settings.get('extra_body') or {})
    if body.get('stream') or body.get('background'):
        raise UserError('The OpenAI Batch API does not support `stream` or `background`.')
    body.pop('stream', None)
    encoded = EncodedBatchRequest(
        custom_id=request.custom_id, group=_group(model), body=pydantic_core.to_json(body).decode()
    )
    check_batch_bytes([encoded], request_size, MAX_BATCH_BYTES, 'OpenAI')
    return encoded


def input_line(request: EncodedBatchRequest) -> bytes:
    """The line of `request` in the batch's input file."""
    return b''.join(
        (
            b'{"custom_id":', pydantic_core.to_json(request.custom_id), b',"method":"POST","url":"',
            ENDPOINT.encode(), b'","body":', request.body.encode(), b'}',
        )
    )  # fmt: skip


def request_size(request: EncodedBatchRequest) -> int:
    """The bytes `request` takes in the input file, with its newline."""
    return len(input_line(request)) + 1


def _multipart(fields: dict[str, str], name: str, filename: str, data: bytes) -> tuple[bytes, str]:
    """A `multipart/form-data` body of the text `fields` and one file, with its content type."""
    boundary = uuid.uuid4().hex
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n{value}\r\n'.encode()
        for key, value in fields.items()
    ]
    parts.append(
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
        'Content-Type: application/jsonl\r\n\r\n'.encode()
        + data
        + b'\r\n'
    )
    parts.append(f'--{boundary}--\r\n'.encode())
    return b''.join(parts), f'multipart/form-data; boundary={boundary}'


async def batch_create(model: OpenAIResponsesModel, requests: Sequence[EncodedBatchRequest]) -> Batch:
    """Upload the requests' JSONL file, then create the batch (not retried: a retry could create it twice)."""
    group = shared_group(requests, 'OpenAI', 'client configurations or models')
    _check_model(model, group)
    check_batch_bytes(requests, request_size, MAX_BATCH_BYTES, 'OpenAI')
    content, content_type = _multipart(
        {'purpose': 'batch'}, 'file', 'batch.jsonl', b'\n'.join(input_line(request) for request in requests)
    )
    upload = batch_call(model, _url(model, '/files'), content=content, headers={'content-type': content_type})
    file_id = str((await _http.post_for_data(upload))['id'])
    create = batch_call(
        model, _url(model, '/batches'), retries=False,
        body={'input_file_id': file_id, 'endpoint': ENDPOINT, 'completion_window': '24h'},
    )  # fmt: skip
    try:
        data = await _http.post_for_data(create)
    except ModelHTTPError as error:
        if error.status_code < 500:  # refused: nothing reads the file, which OpenAI would keep for 30 days
            await _delete_file(model, file_id)
        raise
    batch = to_batch(model, data, group, len(requests))
    _UPLOADED[_account(model), batch.id] = file_id
    while len(_UPLOADED) > _UPLOADED_SIZE:
        _UPLOADED.popitem(last=False)
    return batch


async def _delete_file(model: OpenAIResponsesModel, file_id: str) -> None:
    with suppress(ModelAPIError):
        await _http.send_for_bytes(batch_call(model, _url(model, f'/files/{file_id}'), method='DELETE'))


async def batch_status(model: OpenAIResponsesModel, batch: Batch) -> Batch:
    """The batch as OpenAI has it now."""
    _check_model(model, batch.group, collecting=True)
    data = await _http.post_for_data(batch_call(model, _url(model, f'/batches/{batch.id}'), method='GET'))
    return to_batch(model, data, batch.group, batch.request_count)


async def batch_cancel(model: OpenAIResponsesModel, batch: Batch) -> Batch:
    """Ask OpenAI to cancel the batch; it goes on `'canceling'` for a while."""
    _check_model(model, batch.group, collecting=True)
    data = await _http.post_for_data(batch_call(model, _url(model, f'/batches/{batch.id}/cancel')))
    return to_batch(model, data, batch.group, batch.request_count)


async def _file_lines(model: OpenAIResponsesModel, file_id: str) -> list[str]:
    content = await _http.send_for_bytes(batch_call(model, _url(model, f'/files/{file_id}/content'), method='GET'))
    return [line for line in content.decode().splitlines() if line.strip()]


async def batch_results(model: OpenAIResponsesModel, batch: Batch) -> list[BatchResult]:
    """The result of each line of the output and error files; a request with neither (the batch expired, was
    cancelled or failed validation before running it) gets one from its input line."""
    require_ended(batch)
    _check_model(model, batch.group, collecting=True)
    details = batch.provider_details or {}
    results: dict[str, BatchResult] = {}
    for key in ('output_file_id', 'error_file_id'):
        if file_id := details.get(key):
            for line in await _file_lines(model, file_id):
                result = to_result(json.loads(line))
                results[result.custom_id] = result
    if details.get('status') == 'completed':
        if (file_id := _UPLOADED.pop((_account(model), batch.id), None)) is not None:
            await _delete_file(model, file_id)  # every request ran: the input file is not needed again
    elif input_file := details.get('input_file_id'):
        for number, line in enumerate(await _file_lines(model, input_file), start=1):
            if (custom_id := json.loads(line)['custom_id']) not in results:
                results[custom_id] = _unrun_result(details, custom_id, number)
    return list(results.values())


def to_result(line: dict[str, Any]) -> BatchResult:
    """The `BatchResult` of a line of the output or error file."""
    custom_id = str(line['custom_id'])
    if (response := line.get('response')) is not None:
        if 200 <= response['status_code'] < 300:
            return BatchResult(custom_id=custom_id, status='succeeded', body=json.dumps(response['body']))
        body = {'status_code': response['status_code'], 'body': response.get('body')}
        return BatchResult(custom_id=custom_id, status='errored', body=json.dumps(body))
    error = line.get('error') or {}
    if status := _UNRUN.get(error.get('code') or ''):
        return BatchResult(custom_id=custom_id, status=status)
    body = {'status_code': 500, 'body': {'error': {'code': error.get('code'), 'message': error.get('message')}}}
    return BatchResult(custom_id=custom_id, status='errored', body=json.dumps(body))


def _unrun_result(details: dict[str, Any], custom_id: str, line_number: int) -> BatchResult:
    if details.get('status') == 'failed':
        # The input file failed validation: the batch ran nothing. A request gets the errors of its own line and
        # those of no line, or all of them when they are all about other lines.
        errors: list[Any] = details.get('errors') or []
        own = [e for e in errors if not isinstance(e, dict) or e.get('line') in (line_number, None)]
        body = {'status_code': 400, 'body': {'errors': own or errors}}
        return BatchResult(custom_id=custom_id, status='errored', body=json.dumps(body))
    return BatchResult(custom_id=custom_id, status='expired' if details.get('status') == 'expired' else 'canceled')


def batch_decode(model: OpenAIResponsesModel, result: BatchResult, request: BatchRequest) -> ModelResponse:
    """The `ModelResponse` of a succeeded result; the error of an errored one (of the category a live request's
    would have), raised; the unrun error of an expired or cancelled one."""
    if result.status == 'succeeded' and result.body is not None:
        return batch_priced(model._parse(json.loads(result.body)))
    if result.status == 'errored' and result.body is not None:
        line = json.loads(result.body)
        body = line.get('body')
        if isinstance(body, dict) and 'error' in body:  # the HTTP error's body wraps the error object
            body = body['error']
        if isinstance(body, dict) and isinstance(errors := body.get('errors'), list) and errors:
            body = errors[0]  # a failed validation: its first error stands for the request
        raise model._http_error(int(line.get('status_code') or 500), model.model_name, body, None)
    raise unrun_error(model.model_name, result)


def to_batch(model: OpenAIResponsesModel, data: dict[str, Any], group: str, request_count: int) -> Batch:
    """The `Batch` of OpenAI's batch object (its files and errors kept in `provider_details`)."""
    status = str(data.get('status'))
    details: dict[str, Any] = {'status': status, 'input_file_id': data.get('input_file_id')}
    for key in ('output_file_id', 'error_file_id'):
        if data.get(key):
            details[key] = data[key]
    if errors := (data.get('errors') or {}).get('data'):
        details['errors'] = errors
    counts = data.get('request_counts') or {}
    created = data.get('created_at')
    return Batch(
        id=str(data['id']), model_name=model.model_name, provider_name=model.system, group=group,
        # A status added later is one the batch has not ended in: the ending ones are all listed.
        status=_STATUSES.get(status, 'in_progress'),
        created_at=datetime.fromtimestamp(created, tz=timezone.utc) if created else datetime.now(tz=timezone.utc),
        request_count=counts.get('total') or request_count, provider_details=details,
    )  # fmt: skip

"""`InMemoryBatchModel`: a batch API for the test models (`TestModel`, `FunctionModel`) that runs a batch's requests
through `request()` as the batch is created (as pydantic-ai 2.68's)."""

from __future__ import annotations as _annotations

import functools
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone

from pydantic import TypeAdapter
from pydantic_core import to_json

from .._messages.model_messages import ModelResponse
from ..exceptions import ModelHTTPError, UserError
from ._batch_codec import unrun_error
from ._model import Model
from .batch import Batch, BatchRequest, BatchResult, EncodedBatchRequest

__all__ = ('InMemoryBatchModel', 'unrun_error')


@functools.cache
def _response_adapter() -> TypeAdapter[ModelResponse]:
    # Built on first use: importing the test models builds no schema.
    return TypeAdapter(ModelResponse)


@functools.cache
def _error_adapter() -> TypeAdapter[dict[str, object]]:
    return TypeAdapter(dict[str, object])


@dataclass
class _State:
    group: str = field(default_factory=lambda: f'in-memory:{uuid.uuid4().hex}')
    """Requests and batches live on the model instance, so each instance is a group of its own."""
    requests: dict[str, BatchRequest] = field(default_factory=dict)
    batches: dict[str, tuple[Batch, list[BatchResult]]] = field(default_factory=dict)
    errors: dict[str, Exception] = field(default_factory=dict)
    """Errors other than HTTP ones the requests raised, by the token of their result, raised by `batch_decode`."""


class InMemoryBatchModel(Model):
    """A model whose batch API runs a batch's requests through `request()` when the batch is created; its batches
    exist only on the instance that made them."""

    @property
    def batch_max_requests(self) -> int | None:
        """10,000."""
        return 10_000

    @property
    def _batch_state(self) -> _State:
        state: _State | None = vars(self).get('_in_memory_batch_state')
        if state is None:
            state = vars(self).setdefault('_in_memory_batch_state', _State())
        return state

    async def batch_encode(self, request: BatchRequest) -> EncodedBatchRequest:
        """A token standing for `request`, kept on the instance."""
        token = uuid.uuid4().hex
        self._batch_state.requests[token] = request
        return EncodedBatchRequest(custom_id=request.custom_id, group=self._batch_state.group, body=token)

    async def batch_create(self, requests: Sequence[EncodedBatchRequest]) -> Batch:
        """Run each request now; the batch has ended when it is returned."""
        state = self._batch_state
        results: list[BatchResult] = []
        for encoded in requests:
            request = state.requests.pop(encoded.body)
            try:
                response = await self.request(
                    request.messages, request.model_settings, request.model_request_parameters
                )
            except ModelHTTPError as error:
                body = to_json({'status_code': error.status_code, 'body': error.body}).decode()
                results.append(BatchResult(custom_id=encoded.custom_id, status='errored', body=body))
            except Exception as error:  # fails only this request, as it would fail only its own run unbatched
                state.errors[encoded.body] = error
                body = to_json({'error': encoded.body}).decode()
                results.append(BatchResult(custom_id=encoded.custom_id, status='errored', body=body))
            else:
                body = _response_adapter().dump_json(response).decode()
                results.append(BatchResult(custom_id=encoded.custom_id, status='succeeded', body=body))
        batch = Batch(
            id=f'batch_{uuid.uuid4().hex}', model_name=self.model_name, provider_name=self.system, group=state.group,
            status='ended', created_at=datetime.now(tz=timezone.utc), request_count=len(requests),
        )  # fmt: skip
        state.batches[batch.id] = (batch, results)
        return batch

    async def batch_status(self, batch: Batch) -> Batch:
        """The batch as it was created (ended)."""
        return self._stored(batch)[0]

    async def batch_results(self, batch: Batch) -> list[BatchResult]:
        """The batch's results."""
        return list(self._stored(batch)[1])

    async def batch_cancel(self, batch: Batch) -> Batch:
        """Nothing to cancel: the batch ended as it was created."""
        return self._stored(batch)[0]

    def batch_decode(self, result: BatchResult, request: BatchRequest) -> ModelResponse:
        """The response, or the request's error raised."""
        if result.status == 'succeeded' and result.body is not None:
            return _response_adapter().validate_json(result.body)
        if result.status == 'errored' and result.body is not None:
            error = _error_adapter().validate_json(result.body)
            if isinstance(token := error.get('error'), str):
                raise self._batch_state.errors.pop(token)
            status_code = error['status_code']
            assert isinstance(status_code, int)
            raise ModelHTTPError(status_code=status_code, model_name=self.model_name, body=error['body'])
        raise unrun_error(self.model_name, result)

    def _stored(self, batch: Batch) -> tuple[Batch, list[BatchResult]]:
        if (stored := self._batch_state.batches.get(batch.id)) is None:
            raise UserError(f'Batch {batch.id!r} was not created by this model instance.')
        return stored

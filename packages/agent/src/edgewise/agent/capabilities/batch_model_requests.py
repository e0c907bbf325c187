"""`BatchModelRequests`: an agent's model requests sent through their provider's batch API (as pydantic-ai 2.68's),
with the queue, submission and checks of the batches."""

from __future__ import annotations as _annotations

import math
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import KW_ONLY, dataclass, field
from datetime import timedelta
from types import TracebackType
from typing import Any, Self

import anyio
from pydantic import TypeAdapter

from ..exceptions import ModelAPIError, ModelConnectionError, ModelHTTPError, SuspendedResponseExpired, UserError
from ..messages import ModelResponse
from ..models import Model, ModelRequestContext
from ..models._batch_codec import BatchJobError, unrun_error
from ..models.batch import Batch, BatchRequest, BatchResult, EncodedBatchRequest
from ..tools import RunContext
from .abstract import AbstractCapability, WrapModelRequestHandler

__all__ = ('BatchModelRequests', 'send_in_batches')

DEFAULT_MAX_REQUESTS = 1_000
DEFAULT_MAX_RESUBMISSIONS = 2
DEFAULT_POLL_INTERVAL = timedelta(seconds=30)
DEFAULT_MAX_POLL_INTERVAL = timedelta(minutes=10)
MAX_FAILED_CHECKS = 3
"""How many checks of a batch in a row may fail in a way a live request is retried on."""
_DEFAULT_MAX_WAIT = timedelta(seconds=30)
_CANCEL_TIMEOUT = 60.0
"""The longest wait for the provider to take the cancellation of an abandoned batch."""
_DURATION = TypeAdapter(timedelta)
"""A spec's duration: seconds, or an ISO 8601 duration such as `PT5M`."""


def _transient(error: ModelHTTPError) -> bool:
    """Whether a request failing with `error` may succeed submitted again: a rate limit, a timeout, a conflict or a
    server error (what a live request is retried on)."""
    return error.status_code in (408, 409, 429) or error.status_code >= 500


@dataclass(eq=False)
class _Waiting:
    """One request waiting for its batch's result."""

    request: BatchRequest
    done: anyio.Event = field(default_factory=anyio.Event)
    response: ModelResponse | None = None
    error: BaseException | None = None
    resubmissions: int = 0
    encoded: EncodedBatchRequest | None = None
    """The request in its provider's batch format, from its encoding until its batch is created."""
    _: KW_ONLY
    model: Model
    """The model the request was made to, which encodes and decodes it (requests to several models of one provider
    share a batch when their encodings share its `group`: the first request's model submits it)."""

    def settle(self, *, response: ModelResponse | None = None, error: BaseException | None = None) -> None:
        self.response, self.error = response, error
        self.done.set()


_QueueKey = tuple[str, str]
"""The provider and the encoded `group` of a queue's requests (a group is only comparable within a provider)."""


@dataclass(eq=False)
class _Queue:
    """The requests of one provider and `group` waiting to be submitted together, whichever models they were made to
    (as pydantic-ai 2.68 queues them): the group holds what a batch's requests must share (the endpoint and account,
    and per provider the model or the beta flags)."""

    key: _QueueKey
    model: Model
    """The model that submits the queue (that of its first request: any model whose requests share the group can)."""
    oldest: float
    """When the first request of the queue came (`anyio.current_time()`)."""
    waiting: list[_Waiting] = field(default_factory=list)
    wake: anyio.Event = field(default_factory=anyio.Event)
    """Set when the queue is full, flushed or closed: a waiting request then submits it."""
    taken: bool = False
    """Whether a request took the queue to submit it (or the capability closed it)."""


@dataclass
class BatchModelRequests(AbstractCapability[Any]):
    """Sends the agent's model requests through their provider's batch API: cheaper (typically half the price),
    slower (a result can take up to a day). The run goes on as usual: each request waits in a queue with the other
    requests made through this instance that can share its batch (the same provider, and the same `group` of their
    encoding: the same endpoint and account, and per provider the same model or beta flags, whichever model instances
    they were made to), is submitted in a batch, and the batch is checked until its result comes. One instance given
    to several agents or runs batches their requests together.

    A batch is submitted when it holds `max_requests` requests, when its oldest request has waited `max_wait`, or
    when `flush()` is called. A request the provider left unrun (expired, or missing from the results), or that failed
    with a rate limit or a server error, is submitted again in a new batch, up to `max_resubmissions` times; other
    errors reach the run. The model serving each request must have a batch API (`Model.batch_max_requests`); a
    streamed request waits for its batch too, then streams the whole result at once. Leaving `async with` on the
    instance fails the requests still queued.
    """

    _: KW_ONLY

    max_requests: int = DEFAULT_MAX_REQUESTS
    """The most requests in one batch (the provider's own limit caps it)."""
    max_wait: timedelta | None = _DEFAULT_MAX_WAIT
    """How long the oldest queued request waits for others before its batch is submitted; `None`: until the batch is
    full or `flush()` is called."""
    max_resubmissions: int = DEFAULT_MAX_RESUBMISSIONS
    """How many times a request left unrun, or failed with a rate limit or server error, is submitted again."""
    poll_interval: timedelta = DEFAULT_POLL_INTERVAL
    """How long to wait before first checking a submitted batch; the wait grows by half after each check."""
    max_poll_interval: timedelta = DEFAULT_MAX_POLL_INTERVAL
    """The longest wait between checks of a batch."""

    _queues: dict[_QueueKey, _Queue] = field(default_factory=dict, init=False, repr=False, compare=False)
    _gone_is_expired: bool = field(default=True, init=False, repr=False, compare=False)
    """Whether a batch the provider no longer has (404) is a `SuspendedResponseExpired` (the runs' batches) or stays
    the provider's error (`model_request_batch`'s, as in pydantic-ai 2.68)."""
    _entered: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.max_requests < 1:
            raise UserError('`max_requests` must be at least 1.')
        if self.max_resubmissions < 0:
            raise UserError('`max_resubmissions` must not be negative.')
        if self.max_wait is not None and self.max_wait <= timedelta(0):
            raise UserError('`max_wait` must be positive.')
        if self.poll_interval <= timedelta(0) or self.max_poll_interval < self.poll_interval:
            raise UserError('`poll_interval` must be positive, and `max_poll_interval` at least `poll_interval`.')

    @classmethod
    def from_spec(
        cls,
        *,
        max_requests: int = DEFAULT_MAX_REQUESTS,
        max_wait: timedelta | float | None = _DEFAULT_MAX_WAIT,
        max_resubmissions: int = DEFAULT_MAX_RESUBMISSIONS,
        poll_interval: timedelta | float = DEFAULT_POLL_INTERVAL,
        max_poll_interval: timedelta | float = DEFAULT_MAX_POLL_INTERVAL,
    ) -> BatchModelRequests:
        """Build it from an agent spec, whose durations are seconds or ISO 8601 durations (`PT5M`)."""
        return cls(
            max_requests=max_requests,
            max_wait=None if max_wait is None else _DURATION.validate_python(max_wait),
            max_resubmissions=max_resubmissions,
            poll_interval=_DURATION.validate_python(poll_interval),
            max_poll_interval=_DURATION.validate_python(max_poll_interval),
        )

    async def wrap_model_request(
        self, ctx: RunContext[Any], *, request_context: ModelRequestContext, handler: WrapModelRequestHandler
    ) -> ModelResponse:
        """The response from the request's batch (the model is not asked directly).

        Raises:
            UserError: the model has no batch API, or the capability was closed while the request waited.
        """
        model = request_context.model
        limit = model.batch_max_requests
        if limit is None:
            raise UserError(
                f'`BatchModelRequests` needs a model with a batch API; `{type(model).__name__}` '
                f'({model.model_name!r}) has none.'
            )
        # The history as the model is sent it (`Model.prepare_messages`, as a live request's handler prepares it:
        # tools revealed, instruction and load records rendered, tool call ids fitted).
        messages = model.prepare_messages(list(request_context.messages), request_context.model_request_parameters)
        entry = _Waiting(
            BatchRequest(
                custom_id=uuid.uuid4().hex, messages=messages,
                model_settings=request_context.model_settings,
                model_request_parameters=request_context.model_request_parameters,
            ),
            model=model,
        )  # fmt: skip
        entry.encoded = await model.batch_encode(entry.request)  # (a request that cannot be encoded fails alone)
        key = (model.system, entry.encoded.group)
        queue = self._queues.get(key)
        if queue is None:
            queue = self._queues[key] = _Queue(key, model, anyio.current_time())
        queue.waiting.append(entry)
        if len(queue.waiting) >= min(self.max_requests, limit):
            queue.wake.set()
        waited = math.inf if self.max_wait is None else queue.oldest + self.max_wait.total_seconds()
        with anyio.move_on_after(waited - anyio.current_time()):
            await queue.wake.wait()
        if not queue.taken:
            await self._submit(queue)
        await entry.done.wait()
        if entry.error is not None:
            raise entry.error
        assert entry.response is not None
        return entry.response

    async def flush(self) -> None:
        """Submit every queued request now, instead of waiting for a full batch or `max_wait`."""
        for queue in self._queues.values():
            queue.wake.set()

    async def _submit(self, queue: _Queue) -> None:
        queue.taken = True
        del self._queues[queue.key]
        model, entries = queue.model, queue.waiting
        try:
            # A request its model cannot encode fails alone; the others go on in batches of their group.
            try:
                chunks = await _chunked(model, entries, self._batch_size(model), settle_errors=True)
            except Exception as error:  # splitting them failed (not one request's encoding): each fails with it
                for entry in entries:
                    if not entry.done.is_set():
                        entry.settle(error=error)
                return
            async with anyio.create_task_group() as group:
                for chunk in chunks:
                    group.start_soon(self._send, model, chunk)
        finally:
            for entry in entries:  # cancelled while the batch ran: the others are not left waiting forever
                if not entry.done.is_set():
                    entry.settle(
                        error=UserError('The batch of this request was abandoned: its submitter was cancelled.')
                    )

    def _batch_size(self, model: Model) -> int:
        return min(self.max_requests, model.batch_max_requests or self.max_requests)

    async def _send(self, model: Model, entries: list[_Waiting]) -> None:
        """Run `entries` (one group) as a batch, and new batches of what is to be submitted again."""
        try:
            while entries:
                entries = await self._run_batch(model, entries)
        except Exception as error:  # the submission or a check failed: every request of the batch fails with it
            for entry in entries:
                entry.settle(error=error)

    async def _run_batch(self, model: Model, entries: list[_Waiting]) -> list[_Waiting]:
        """Submit `entries` (encoded, of one group, within the provider's limits) as one batch and settle each from
        its result; the ones to submit again."""
        for entry in entries:  # a request submitted again is encoded again (an encoding may be good for one batch)
            if entry.encoded is None:
                entry.encoded = await entry.model.batch_encode(entry.request)
        batch = await model.batch_create([_encoded(entry) for entry in entries])
        for entry in entries:
            entry.encoded = None
        try:
            batch = await self._wait_for(model, batch)
        except BaseException:  # cancelled, or the checks failed: nobody will read the results, so stop the batch
            with anyio.CancelScope(shield=True), anyio.move_on_after(_CANCEL_TIMEOUT), suppress(Exception):
                await model.batch_cancel(batch)
            raise
        try:
            with self._kept(batch):
                listed = await model.batch_results(batch)
        except BatchJobError as error:  # the job ended without running its requests, which a new batch may do
            if not _transient(error) or all(entry.resubmissions >= self.max_resubmissions for entry in entries):
                raise
            for entry in entries:
                entry.resubmissions += 1
            return entries
        results = {result.custom_id: result for result in listed}
        unlisted = model._batch_unlisted_status(batch) or 'expired'
        again: list[_Waiting] = []
        for entry in entries:
            result = results.get(entry.request.custom_id) or BatchResult(
                custom_id=entry.request.custom_id, status=unlisted
            )
            retry = entry.resubmissions < self.max_resubmissions
            if result.status == 'expired' and retry:
                entry.resubmissions += 1
                again.append(entry)
                continue
            try:
                response = entry.model.batch_decode(result, entry.request) if result.status != 'expired' else None
                if response is None:
                    raise unrun_error(entry.model.model_name, result)
            except ModelHTTPError as error:
                if retry and _transient(error):
                    entry.resubmissions += 1
                    again.append(entry)
                else:
                    entry.settle(error=error)
            except Exception as error:
                entry.settle(error=error)
            else:
                entry.settle(response=response)
        return again

    async def _wait_for(self, model: Model, batch: Batch) -> Batch:
        """Check the batch until it ends, waiting `poll_interval` first, half as long again after each check (up to
        `max_poll_interval`). A check failing as a live request is retried on (a dropped connection, a rate limit,
        a server error) is tried again at the next poll, up to `MAX_FAILED_CHECKS` failures in a row."""
        interval = self.poll_interval.total_seconds()
        failed = 0
        while batch.status != 'ended':
            await anyio.sleep(interval)
            interval = min(interval * 1.5, self.max_poll_interval.total_seconds())
            try:
                with self._kept(batch):
                    batch = await model.batch_status(batch)
            except ModelAPIError as error:
                failed += 1
                transient = isinstance(error, ModelConnectionError) or (
                    isinstance(error, ModelHTTPError) and _transient(error)
                )
                if failed > MAX_FAILED_CHECKS or not transient:
                    raise
            else:
                failed = 0
        return batch

    @contextmanager
    def _kept(self, batch: Batch) -> Iterator[None]:
        """A 404 from the provider about `batch` as a `SuspendedResponseExpired` naming it."""
        try:
            yield
        except ModelHTTPError as error:
            if error.status_code != 404 or not self._gone_is_expired:
                raise
            raise SuspendedResponseExpired(
                f'Batch {batch.id!r} of {batch.provider_name!r} could not be read: the provider no longer has it or '
                'its results (they are kept for a limited time, for the project that made them). Start a new run '
                'from the messages before the request to try again.'
            ) from error

    async def __aenter__(self) -> Self:
        """Count the `async with` blocks open on the capability."""
        self._entered += 1
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        """When the outermost block is left, fail the requests still queued (and wake them)."""
        self._entered -= 1
        if self._entered:
            return
        queues, self._queues = list(self._queues.values()), {}
        for queue in queues:
            queue.taken = True
            for entry in queue.waiting:
                entry.settle(error=UserError('`BatchModelRequests` was closed before this request was submitted.'))
            queue.wake.set()


async def send_in_batches(
    model: Model,
    requests: Sequence[BatchRequest],
    *,
    batch_size: int,
    max_resubmissions: int,
    poll_interval: timedelta,
    max_poll_interval: timedelta,
) -> list[ModelResponse | BaseException]:
    """Submit `requests` to `model` now, in batches of at most `batch_size` (and the model's byte limit), all at once,
    and wait for them all, submitting again what `BatchModelRequests` would (`direct.model_request_batch`).

    Returns each request's response or error, in order; a job that ended without results is the error of each of its
    requests. Raises the first error creating or checking a batch, once the other batches are cancelled.
    """
    sender = BatchModelRequests(
        max_requests=batch_size, max_wait=None, max_resubmissions=max_resubmissions,
        poll_interval=poll_interval, max_poll_interval=max_poll_interval,
    )  # fmt: skip
    sender._gone_is_expired = False
    entries = [_Waiting(request, model=model) for request in requests]
    chunks = await _chunked(model, entries, batch_size, settle_errors=False)
    failures: list[Exception] = []

    async def send(chunk: list[_Waiting], scope: anyio.CancelScope) -> None:
        try:
            while chunk:
                try:
                    chunk = await sender._run_batch(model, chunk)
                except BatchJobError as error:
                    for entry in chunk:
                        entry.settle(error=error)
                    chunk = []
        except Exception as error:  # the batch could not be made or checked: the call fails, the others stop
            failures.append(error)
            scope.cancel()

    async with anyio.create_task_group() as group:
        for chunk in chunks:
            group.start_soon(send, chunk, group.cancel_scope)
    if failures:
        raise failures[0]
    outcomes: list[ModelResponse | BaseException] = []
    for entry in entries:
        outcome = entry.error or entry.response
        assert outcome is not None  # every request of a batch that ran is settled
        outcomes.append(outcome)
    return outcomes


async def _chunked(
    model: Model, entries: list[_Waiting], batch_size: int, *, settle_errors: bool
) -> list[list[_Waiting]]:
    """Encode `entries` and split them into the batches they go in, as pydantic-ai 2.68's `model_request_batch`
    does: by the `group` of their encoding (what requests must share to go in one batch: the endpoint, the model, an
    Anthropic request's beta flags...), in the order each group first comes, then into runs of at most `batch_size`
    requests and the model's `batch_max_bytes`.

    A request that cannot be encoded is settled with its error (`settle_errors`) or raises it; one encoded already
    (queued by `BatchModelRequests`) keeps its encoding.
    """
    groups: dict[str, list[_Waiting]] = {}
    for entry in entries:
        try:
            if entry.encoded is None:
                entry.encoded = await entry.model.batch_encode(entry.request)
        except Exception as error:
            if not settle_errors:
                raise
            entry.settle(error=error)
            continue
        groups.setdefault(entry.encoded.group, []).append(entry)
    max_bytes = model.batch_max_bytes
    chunks: list[list[_Waiting]] = []
    for members in groups.values():
        chunk: list[_Waiting] = []
        size = 0
        for entry in members:
            entry_size = model.batch_request_size(_encoded(entry))
            if chunk and (len(chunk) == batch_size or (max_bytes is not None and size + entry_size > max_bytes)):
                chunks.append(chunk)
                chunk, size = [], 0
            chunk.append(entry)
            size += entry_size
        chunks.append(chunk)
    return chunks


def _encoded(entry: _Waiting) -> EncodedBatchRequest:
    assert entry.encoded is not None, 'a request is encoded (by `_chunked`) before it is submitted'
    return entry.encoded

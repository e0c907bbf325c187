"""Continuing a turn the provider suspended (`ModelResponse.state == 'suspended'`): the run asks the model again with
the suspended response at the end of the messages, waiting `Model.continuation_delay(response)` first, until the turn
is whole; the segments fold into one response (`models._continuation`), which the run records once, as one request.

The wait goes through the sleep function set with `Agent.using_sleep(...)` (a durable engine's own, so that a replay
does not wait again), else `anyio.sleep`.
"""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AsyncExitStack, aclosing, asynccontextmanager, contextmanager
from contextvars import ContextVar
from datetime import datetime
from typing import Any

import anyio

from .._cost import fill_response_cost
from .._run.deps import check_continuation_usage
from ..exceptions import UnexpectedModelBehavior
from ..messages import (
    FinalResultEvent,
    ModelMessage,
    ModelResponse,
    ModelResponseState,
    ModelResponseStreamEvent,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
)
from ..models import Model, ModelRequestParameters, StreamedResponse
from ..models._continuation import (
    MAX_BACKGROUND_POLLS,
    MAX_GENERATION_CONTINUATIONS,
    MergeMode,
    cancel_abandoned_job,
    cancel_suspended_job,
    merge_mode,
    merge_responses,
)
from ..settings import ModelSettings
from ..tools import RunContext

__all__ = (
    'SleepFunction',
    'using_sleep',
    'agent_sleep',
    'continue_turn',
    'ContinuedStreamedResponse',
    'continued_stream',
)

SleepFunction = Callable[[float], Awaitable[None]]
"""An async function that waits the given number of seconds."""

_SLEEP: ContextVar[SleepFunction | None] = ContextVar('edgewise_agent_sleep', default=None)


@contextmanager
def using_sleep(sleep: SleepFunction) -> Iterator[None]:
    """Have the agent runs in this block wait with `sleep` (`Agent.using_sleep(sleep)`): a durable engine's own
    sleep, so that a run replayed after a crash does not wait again. `sleep` is given the delay in seconds.

    Used today between the segments of a turn the provider suspended (`Model.continuation_delay`).
    """
    token = _SLEEP.set(sleep)
    try:
        yield
    finally:
        _SLEEP.reset(token)


async def agent_sleep(delay: float) -> None:
    """Wait `delay` seconds with the sleep function of `using_sleep`, else `anyio.sleep`."""
    sleep = _SLEEP.get()
    await (anyio.sleep(delay) if sleep is None else sleep(delay))


def _count(response: ModelResponse, last_mode: MergeMode | None, counts: list[int]) -> None:
    """Count asking again for `response` (in `counts`: fresh segments, then polls of one job) against its bound,
    raising once the bound is passed."""
    job = response.provider_response_id
    if last_mode == 'replace-same-id':
        counts[1] += 1
        if counts[1] > MAX_BACKGROUND_POLLS:
            raise UnexpectedModelBehavior(
                f'Model response for job {job!r} remained suspended after polling the maximum of '
                f'{MAX_BACKGROUND_POLLS} times'
            )
    else:
        counts[0] += 1
        if counts[0] > MAX_GENERATION_CONTINUATIONS:
            raise UnexpectedModelBehavior(
                f'Model response {job!r} was suspended more than the maximum of {MAX_GENERATION_CONTINUATIONS} times'
            )


async def _check_usage(model: Model, run_ctx: RunContext[Any], response: ModelResponse) -> None:
    """Check the run's token and cost limits with the turn so far added (the provider's job for a turn still
    suspended is cancelled before the error is raised)."""
    try:
        check_continuation_usage(run_ctx, response.usage)
    except BaseException:
        if response.state == 'suspended':
            await cancel_suspended_job(model, response)
        raise


async def continue_turn(
    model: Model,
    messages: list[ModelMessage],
    response: ModelResponse,
    settings: ModelSettings | None,
    params: ModelRequestParameters,
    run_ctx: RunContext[Any],
    on_progress: Callable[[ModelResponse], None] | None = None,
    on_segment: Callable[[ModelResponse], None] | None = None,
) -> ModelResponse:
    """The whole turn that `response`, a suspended response to `messages`, begins: the model is asked to continue it
    until it is no longer suspended, and the segments are folded into one response.

    `on_progress` is given the turn so far after each segment (so that a hook turning a later failure into a retry
    can keep it), `on_segment` each later segment as the model returned it (the last one's usage is what the
    provider's cache served the whole prefix with). On any failure (or cancellation) the provider's job for the turn
    is cancelled first.

    Raises:
        UnexpectedModelBehavior: the turn stays suspended past `MAX_GENERATION_CONTINUATIONS` fresh segments, or one
            job past `MAX_BACKGROUND_POLLS` polls.
        UsageLimitExceeded: the turn so far exceeds the run's token (or cost) limits.
    """
    fill_response_cost(response)
    await _check_usage(model, run_ctx, response)
    if on_progress is not None:
        on_progress(response)
    counts = [0, 0]
    last_mode: MergeMode | None = None
    while response.state == 'suspended':
        try:
            _count(response, last_mode, counts)
            if delay := model.continuation_delay(response):
                await agent_sleep(delay)
            segment = await model.request([*messages, response], settings, params)
        except BaseException as error:
            await cancel_abandoned_job(model, response, error)
            raise
        # Each segment is a request of its own: priced alone before the usages are summed (tiered prices).
        fill_response_cost(segment)
        if on_segment is not None:
            on_segment(segment)
        last_mode = merge_mode(response, segment)
        response = merge_responses(response, segment)
        await _check_usage(model, run_ctx, response)
        if on_progress is not None:
            on_progress(response)
    return response


def _segment_offset(turn: ModelResponse | None, segment: ModelResponse, last_offset: int) -> int:
    """Where the parts of a segment start among the turn's parts (as `merge_responses` will place them)."""
    if turn is None:
        return 0
    mode = merge_mode(turn, segment)
    return len(turn.parts) if mode == 'accumulate' else 0 if mode == 'replace-new' else last_offset


class ContinuedStreamedResponse(StreamedResponse):
    """A streamed response whose turn the provider may suspend: when the model's stream ends with the turn suspended,
    the model is asked (streaming again) to continue it, and the segments' events come as one stream (the part
    indices of a segment that adds parts shifted after the earlier ones'); `get()` is the turn so far.

    It starts from `first`, the model's stream answering `messages`, or (`first=None`) from `seed`, a suspended
    response to `messages` that an earlier run received: its first request continues that turn."""

    def __init__(
        self,
        params: ModelRequestParameters,
        first: StreamedResponse | None,
        model: Model,
        messages: list[ModelMessage],
        settings: ModelSettings | None,
        run_ctx: RunContext[Any],
        seed: ModelResponse | None = None,
    ) -> None:
        super().__init__(params)
        self.first, self.model, self.messages, self.settings, self.run_ctx = first, model, messages, settings, run_ctx
        self._current: StreamedResponse | None = first  # the segment streaming
        self._turn: ModelResponse | None = seed  # the whole segments so far, merged
        self.final_segment: ModelResponse | None = None
        """The last segment as the model returned it, when the turn took more than one (or continued a seed)."""
        self._continuing: ModelResponse | None = seed  # the suspended turn being continued

    def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:  # pragma: no cover
        raise NotImplementedError  # `_iterate` reads the segments' own (already completed) events

    async def _iterate(self) -> AsyncIterator[ModelResponseStreamEvent]:
        try:
            async with aclosing(self._segments()) as segments:
                async for event in segments:
                    yield event
        except GeneratorExit:  # the reader left: `continued_stream` stops a job left suspended as its block ends
            raise
        except BaseException as error:
            if (continuing := self._continuing) is not None:
                self._continuing = None
                await cancel_abandoned_job(self.model, continuing, error)
            raise
        self._complete = True

    async def _segments(self) -> AsyncGenerator[ModelResponseStreamEvent]:
        segment = self.first
        counts = [0, 0]
        last_mode: MergeMode | None = None
        offset = 0
        async with AsyncExitStack() as later_segments:
            while True:
                turn_so_far = self._turn
                if segment is None:  # ask the model to go on with the suspended turn so far
                    assert turn_so_far is not None
                    _count(turn_so_far, last_mode, counts)
                    if delay := self.model.continuation_delay(turn_so_far):
                        await agent_sleep(delay)
                    messages = [*self.messages, turn_so_far]
                    params = self.model_request_parameters
                    segment = await later_segments.enter_async_context(
                        self.model.request_stream(messages, self.settings, params, self.run_ctx)
                    )
                self._current = segment
                start: int | None = None
                async for event in segment:
                    # `_usage` is read live (the run's token checks), and a model may replace its own as it streams.
                    self._usage = segment._usage if turn_so_far is None else turn_so_far.usage + segment._usage
                    if isinstance(event, FinalResultEvent):
                        if self.final_result_event is None:
                            self.final_result_event = event
                            yield event
                        continue
                    if start is None:
                        start = _segment_offset(turn_so_far, segment.get(), offset)
                    if start and isinstance(event, PartStartEvent | PartDeltaEvent | PartEndEvent):
                        event = dataclasses.replace(event, index=event.index + start)
                    yield event
                offset = start or 0
                done = segment.get()
                if turn_so_far is None and done.state != 'suspended':  # the common case: a turn in one segment
                    self._turn, self._current, self._usage = done, None, done.usage
                    return
                fill_response_cost(done)
                if turn_so_far is not None:
                    self.final_segment = done
                    last_mode = merge_mode(turn_so_far, done)
                    done = merge_responses(turn_so_far, done)
                self._turn, self._current, self._continuing = done, None, None
                self._usage = done.usage
                await _check_usage(self.model, self.run_ctx, done)
                if done.state != 'suspended':
                    return
                self._continuing, segment = done, None

    def get(self) -> ModelResponse:
        """The turn so far: the segments received whole, and the one streaming (as they will be merged)."""
        turn, current = self._turn, self._current
        if current is not None:
            now = current.get()
            turn = now if turn is None else merge_responses(turn, now)
        assert turn is not None  # a segment streams until the first is whole, or a seed starts the turn
        state: ModelResponseState = 'interrupted' if self._cancelled else 'complete' if self._complete else 'incomplete'
        return dataclasses.replace(turn, state=state)

    def _latest(self) -> StreamedResponse | ModelResponse:
        found = self._current or self.first or self._turn
        assert found is not None
        return found

    @property
    def model_name(self) -> str:
        """The name of the model answering."""
        return self._latest().model_name or self.model.model_name

    @property
    def provider_name(self) -> str | None:
        """The provider answering."""
        return self._latest().provider_name

    @property
    def provider_url(self) -> str | None:
        """The base URL of the provider answering."""
        return self._latest().provider_url

    @property
    def timestamp(self) -> datetime:
        """When the turn started."""
        return self._latest().timestamp

    async def cancel(self) -> None:
        """Stop the stream on purpose, and the provider's work on a suspended turn being continued."""
        if not self._cancelled and (current := self._current) is not None:
            await current.cancel()
        await super().cancel()
        if (continuing := self._continuing) is not None:
            self._continuing = None
            await cancel_suspended_job(self.model, continuing)


@asynccontextmanager
async def continued_stream(
    first: StreamedResponse | None,
    model: Model,
    messages: list[ModelMessage],
    settings: ModelSettings | None,
    run_ctx: RunContext[Any],
    *,
    params: ModelRequestParameters | None = None,
    seed: ModelResponse | None = None,
) -> AsyncIterator[ContinuedStreamedResponse]:
    """The stream of the whole turn that `first`, the model's stream answering `messages`, begins (or, without
    `first`, that continues `seed`, a suspended response to `messages`, sent with `params`); leaving the block closes
    it (and the later segments' streams), and cancels the provider's job of a turn left suspended."""
    params = first.model_request_parameters if first is not None else params
    assert params is not None
    stream = ContinuedStreamedResponse(params, first, model, messages, settings, run_ctx, seed)
    try:
        yield stream
    finally:
        with anyio.CancelScope(shield=True):
            await stream.close()
            # A turn left unfinished (an error, a cancellation, a reader that left) is not resumed: stop its job.
            if (continuing := stream._continuing) is not None:
                stream._continuing = None
                await cancel_suspended_job(model, continuing)

"""`AgentStream`: one streamed model response inside `agent.iter()` (what `ModelRequestNode.stream` gives), with
pydantic-ai 1.107's API: its events, its text, its output, its response snapshots and the run's usage."""

from __future__ import annotations as _annotations

import warnings
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from copy import deepcopy
from typing import Any, Generic

from typing_extensions import TypeVar

from edgewise.graph import GraphRunContext

from .._run.deps import GraphAgentDeps
from .._run.result import CallableDatetime, CallableRunUsage
from .._run.state import GraphAgentState
from .._warnings import PydanticAIDeprecationWarning
from ..exceptions import UnexpectedModelBehavior, UserError
from ..messages import (
    EnqueuedMessagesEvent,
    ModelResponse,
    ModelResponseStreamEvent,
    ModelSettingsDeltaEvent,
    TextPart,
    ToolCallPart,
)
from ..models import ModelRequestParameters, StreamedResponse
from ..models._completed_response import CompletedStreamedResponse
from ..usage import RequestUsage
from .debounce import debounce
from .output_reader import INVALID, OutputReader, text_pieces
from .response_output import deferred_requests, validate_response

__all__ = ('AgentStream', 'whole_stream')

AgentDepsT = TypeVar('AgentDepsT', default=object, contravariant=True)
OutputDataT = TypeVar('OutputDataT', default=str, covariant=True)

_NOTHING: Any = object()


class _After:
    """The `first` events, then those of `events` (a class, not a generator: nothing to close when left early)."""

    def __init__(self, first: Sequence[Any], events: AsyncIterator[Any]) -> None:
        self._first = list(first)
        self._events = events

    def __aiter__(self) -> _After:
        return self

    async def __anext__(self) -> Any:
        if self._first:
            return self._first.pop(0)
        return await self._events.__anext__()


class AgentStream(Generic[AgentDepsT, OutputDataT]):
    """The events of one streamed model response, and what they add up to.

    Iterate it for the raw events (`PartStartEvent`, `PartDeltaEvent`, `FinalResultEvent`, ...), or read the
    text (`stream_text`), the output (`stream_output`, `get_output`) or response snapshots (`stream_response`).
    Every reader shares one pass over the events: what one has read, another does not see again.
    """

    def __init__(
        self,
        response: StreamedResponse,
        ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[Any, Any]],
        check_tokens: Callable[[RequestUsage], None] | None = None,
        leading: Sequence[EnqueuedMessagesEvent | ModelSettingsDeltaEvent] = (),
    ) -> None:
        self._raw = response
        self._leading = leading
        self._ctx = ctx
        self._check_tokens = check_tokens
        self._initial_usage = deepcopy(ctx.state.usage)
        self._iterator: AsyncIterator[ModelResponseStreamEvent] | None = None
        self._cached_output: Any = _NOTHING
        self._reader = OutputReader(ctx)

    # -- events ---------------------------------------------------------------------------------------------------

    def __aiter__(self) -> AsyncIterator[ModelResponseStreamEvent]:
        if self._iterator is None:
            events = self._raw.__aiter__()
            if self._check_tokens is not None:
                events = _TokenCheckedEvents(events, self._raw, self._check_tokens)
            if self._leading:  # queued messages the request delivered, a settings change: before the response
                events = _After(self._leading, events)
            self._iterator = events
        return self._iterator

    async def drain(self) -> None:
        """Read the rest of the events, discarding them."""
        async for _ in self:
            pass

    # -- text, output, responses ----------------------------------------------------------------------------------

    async def stream_text(self, *, delta: bool = False, debounce_by: float | None = 0.1) -> AsyncIterator[str]:
        """Stream the response's text: the text so far (after the output validators, with `ctx.partial_output`
        set), or with `delta=True` each new piece (validators not applied). Once `get_output` or
        `stream_output` have the output, it is yielded whole instead.

        Args:
            delta: Yield the new pieces rather than the whole text so far.
            debounce_by: Yield at most once per this many seconds (pieces joined when `delta`); `None`: every chunk.

        Raises:
            UserError: the output is not text (use `stream_output`).
        """
        schema = self._ctx.deps.output_schema
        if not schema.allow_text_output or schema.text_function is not None or schema.tools:
            raise UserError('stream_text() can only be used with text responses')
        if isinstance(self._cached_output, str):
            yield self._cached_output
            return
        pieces = text_pieces(self)
        generators: list[AsyncGenerator[str]] = [pieces]
        if not delta:  # the text so far, through the output validators (a `ModelRetry` from them is raised)
            generators.append(self._reader.texts(pieces, skip_retries=False))
        if debounce_by is not None:
            generators.append(debounce(generators[-1], debounce_by, ''.join if delta else None))
        try:
            async for text in generators[-1]:
                yield text
        finally:
            # a reader that leaves early (or a failing validator) leaves the chain half read: close it outside in
            for generator in reversed(generators):
                await generator.aclose()

    async def stream_output(self, *, debounce_by: float | None = 0.1) -> AsyncIterator[OutputDataT]:
        """Stream the output as it grows: a partial value for each event that changes it (output validators see
        it with `ctx.partial_output` set, a `ModelRetry` from them skips it; a text part that starts empty gives
        an empty text), then the validated output, always last. The partial values are computed incrementally,
        by the reader `StreamedRunResult` uses too.

        Args:
            debounce_by: Yield at most once per this many seconds (the latest value); `None`: every change.
        """
        if self._cached_output is not _NOTHING:
            yield deepcopy(self._cached_output)
            return
        # what other readers took of the response already counts: the partial values start from it
        deferred = self._deferred_partial if self._ctx.deps.output_schema.allows_deferred_tools else None
        partials = self._reader.partial_outputs(self, empty_text=True, received=self.response.parts, deferred=deferred)
        source = partials if debounce_by is None else debounce(partials, debounce_by, None)
        try:
            async for value in source:
                yield value
        finally:
            await source.aclose()
            await partials.aclose()
        if self._raw.final_result_event is not None:
            self._cached_output = await self.validate_response_output(self.response)
            yield deepcopy(self._cached_output)

    def _deferred_partial(self) -> Any:
        """The `DeferredToolRequests` of the response so far, if it holds deferred calls and no text or output call
        and its final result event came: else `INVALID`."""
        response = self.response
        if self._raw.final_result_event is None or any(
            (isinstance(part, TextPart) and part.content)
            or (isinstance(part, ToolCallPart) and part.tool_name in self._ctx.deps.output_schema.tools)
            for part in response.parts
        ):
            return INVALID
        requests = deferred_requests(response, self._ctx.deps)
        return INVALID if requests is None else requests

    async def stream_response(self, *, debounce_by: float | None = 0.1) -> AsyncIterator[ModelResponse]:
        """Stream snapshots of the response: `state='incomplete'` while it streams, then one last snapshot
        (`'complete'`, or `'interrupted'` after `cancel()`). Content already received comes first."""
        current = self.response
        if current.state == 'incomplete' and any(part.has_content() for part in current.parts):
            yield current
        if debounce_by is None:
            async for _ in self:
                yield self.response
        else:
            grouped = debounce(self.__aiter__(), debounce_by, None)
            try:
                async for _ in grouped:
                    yield self.response
            finally:
                await grouped.aclose()
        yield self.response

    async def stream_responses(self, *, debounce_by: float | None = 0.1) -> AsyncIterator[ModelResponse]:
        """Deprecated spelling of `stream_response` (pydantic-ai 1.107 deprecates it too)."""
        warnings.warn(
            '`AgentStream.stream_responses()` is deprecated: use `stream_response()` (singular), which yields the '
            'same snapshots.',
            PydanticAIDeprecationWarning,
            stacklevel=2,
        )
        async for response in self.stream_response(debounce_by=debounce_by):
            yield response

    async def get_output(self) -> OutputDataT:
        """Read the whole response and return the validated output."""
        if self._cached_output is _NOTHING:
            await self.drain()
            self._cached_output = await self.validate_response_output(self.response)
        return deepcopy(self._cached_output)  # type: ignore[no-any-return]

    async def validate_response_output(self, message: ModelResponse, *, allow_partial: bool = False) -> OutputDataT:
        """The output `message` holds (a snapshot from `stream_response`, say), validated; with `allow_partial`
        an unfinished value is accepted and output functions are not called.

        Raises:
            UnexpectedModelBehavior: the response holds no output of the run's output type.
            pydantic.ValidationError: (with `allow_partial`) the output does not validate yet.
        """
        if self._raw.final_result_event is None:
            raise UnexpectedModelBehavior('Invalid response, unable to find output')
        output: OutputDataT = await validate_response(self._ctx, message, allow_partial=allow_partial)
        return output

    # -- the response and the run ---------------------------------------------------------------------------------

    @property
    def response(self) -> ModelResponse:
        """The response so far (`state='incomplete'` while it streams)."""
        return self._raw.get()

    @property
    def raw_response(self) -> StreamedResponse:
        """The model's streamed response itself."""
        return self._raw

    def get(self) -> ModelResponse:
        """The response so far (deprecated: use the `response` property)."""
        warnings.warn(
            '`AgentStream.get` is deprecated; use the `response` property instead.', PydanticAIDeprecationWarning, 2
        )
        return self._raw.get()

    @property
    def usage(self) -> CallableRunUsage:
        """The run's usage including this response so far (callable too, the spelling before 1.107)."""
        return CallableRunUsage.of(self._initial_usage + self._raw.usage)

    @property
    def timestamp(self) -> CallableDatetime:
        """When the response started (callable too, the spelling before 1.107)."""
        return CallableDatetime.of(self._raw.timestamp)

    async def cancel(self) -> None:
        """Stop the response: the model stops generating and the response is kept `'interrupted'`."""
        await self._raw.cancel()

    @property
    def cancelled(self) -> bool:
        """Whether `cancel()` was called."""
        return self._raw.cancelled

    @property
    def run_id(self) -> str:
        """The run's id."""
        return self._ctx.state.run_id

    @property
    def conversation_id(self) -> str:
        """The conversation's id."""
        return self._ctx.state.conversation_id

    @property
    def metadata(self) -> dict[str, Any] | None:
        """The run's metadata."""
        return self._ctx.deps.run_context(self._ctx.state).metadata

    def __repr__(self) -> str:
        return f'AgentStream(response={self.response!r})'


class _TokenCheckedEvents(AsyncIterator[ModelResponseStreamEvent]):
    """A response's events, with the run's token limits checked against the usage so far after each one (only
    when the run has token limits: the usage of a streamed response grows as it arrives)."""

    def __init__(
        self,
        events: AsyncIterator[ModelResponseStreamEvent],
        response: StreamedResponse,
        check_tokens: Callable[[RequestUsage], None],
    ) -> None:
        self._events = events
        self._response = response
        self._check_tokens = check_tokens

    def __aiter__(self) -> _TokenCheckedEvents:
        return self

    async def __anext__(self) -> ModelResponseStreamEvent:
        event = await anext(self._events)
        self._check_tokens(self._response._usage)  # the live usage: no copy per event
        return event


@asynccontextmanager
async def whole_stream(
    ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[Any, Any]],
    response: ModelResponse,
    leading: Sequence[EnqueuedMessagesEvent | ModelSettingsDeltaEvent] = (),
) -> AsyncIterator[AgentStream[Any, Any]]:
    """An `AgentStream` of a response given whole (a hook's, without the model), read to its end after the block."""
    stream: AgentStream[Any, Any] = AgentStream(
        CompletedStreamedResponse(response, model_request_parameters=ModelRequestParameters()), ctx, None, leading
    )
    yield stream
    await stream.drain()

"""`StreamedRunResult`: the result of `Agent.run_stream`, read while the run goes on.

The run is driven by whoever reads the result (no background task): each `stream_*` method pulls the run's
events, node after node, and yields what it is about. The run never stops at the first text or output tool
call: tool calls that follow in the same response still run, and the stream goes on with the next response,
until the run's real final result.
"""

from __future__ import annotations as _annotations

import copy
import dataclasses
import reprlib
import warnings
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from decimal import Decimal
from functools import partial
from typing import TYPE_CHECKING, Any, Generic, Self, cast, overload

from typing_extensions import TypeVar

from .. import messages as _messages
from .._cost import best_effort_price, prices_loaded
from .._loop.agent_run import AgentRun
from .._loop.debounce import debounce as _debounce
from .._loop.model_stream import AgentStream
from .._loop.output_reader import OutputReader, text_pieces
from .._loop.response_output import validate_response
from .._run.result import AgentRunResult, CallableDatetime, CallableRunUsage
from .._run.state import GraphAgentState
from .._warnings import PydanticAIDeprecationWarning
from ..capabilities._hook_table import EVENT_STREAM_HOOK
from ..exceptions import UserError
from ..messages import (
    AgentStreamEvent,
    FinalResultEvent,
    ModelMessage,
    ModelResponse,
)
from ..models import StreamedResponse
from .handled_events import HandledEvents
from .node_loop import EventStreamHandler, NodeEvents, stream_nodes, wrapped_events

if TYPE_CHECKING:
    from ..workspaces import Workspace

__all__ = ('StreamedRunResult',)

AgentDepsT = TypeVar('AgentDepsT', default=object, contravariant=True)
OutputDataT = TypeVar('OutputDataT', default=str, covariant=True)
_T = TypeVar('_T')


@dataclasses.dataclass(init=False, repr=False)
class StreamedRunResult(Generic[AgentDepsT, OutputDataT]):
    """The result of `agent.run_stream(...)`: stream the text, the partial output or the responses, then read
    the output, the messages and the usage.

    Reading any stream drives the run; leaving the `async with` block before the end stops it (the model's
    stream is closed, running tools are cancelled).

    pydantic-ai 2.x's constructor works too, for code that builds one by hand: `StreamedRunResult(all_messages,
    new_message_index, stream_response, on_complete)` reads one `AgentStream`, and `StreamedRunResult(all_messages,
    new_message_index, run_result=...)` gives a finished run's result (see `GivenStreamedRunResult`).

    A dataclass of 2.x's fields, as in 2.x (`==` compares them, the repr shows them, `dataclasses.replace` makes a
    result of them); a run's are its messages, where its own start and the `AgentStream` of its latest response.
    """

    # pydantic-ai 2.x's fields, in its order: what `dataclasses.fields`, `replace`, `==` and the repr see.
    _all_messages: list[ModelMessage] = dataclasses.field(repr=False)  # (the whole history: out of the repr)
    _new_message_index: int
    _stream_response: AgentStream[AgentDepsT, OutputDataT] | None = None
    _on_complete: Callable[[], Awaitable[None]] | None = None
    _run_result: AgentRunResult[OutputDataT] | None = None
    is_complete: bool = dataclasses.field(default=False, init=False)
    """Whether the run has ended with its final result (for a run that ended before the `async with` block, on
    deferred tool calls, once its output has been read; for a result made of a stream, once it was read whole)."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Self:
        if cls is StreamedRunResult and not isinstance(args[0] if args else kwargs.get('agent_run'), AgentRun):
            return cast(Self, object.__new__(GivenStreamedRunResult))
        return object.__new__(cls)

    @overload
    def __init__(
        self, agent_run: AgentRun[AgentDepsT, OutputDataT], event_stream_handler: EventStreamHandler | None = None
    ) -> None: ...

    @overload
    def __init__(
        self,
        all_messages: list[ModelMessage],
        new_message_index: int,
        stream_response: AgentStream[AgentDepsT, OutputDataT] | None = None,
        on_complete: Callable[[], Awaitable[None]] | None = None,
    ) -> None: ...

    @overload
    def __init__(
        self, all_messages: list[ModelMessage], new_message_index: int, *, run_result: AgentRunResult[OutputDataT]
    ) -> None: ...

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Read the run of `agent_run` (what `Agent.run_stream` does), handing each streamed node's events to
        `event_stream_handler`; pydantic-ai 2.x's arguments make a `GivenStreamedRunResult` instead."""
        self._setup(*args, **kwargs)

    def _setup(
        self, agent_run: AgentRun[Any, OutputDataT], event_stream_handler: EventStreamHandler | None = None
    ) -> None:
        self._run = agent_run
        self._all_messages = agent_run.ctx.state.message_history
        self._new_message_index = agent_run.ctx.deps.new_message_index
        self._handler = event_stream_handler
        self._handled: HandledEvents | None = None  # the node stream the event stream handler gets
        # The capabilities' `wrap_run_event_stream` gets each node's events (handed over as the handler's are).
        self._wraps = EVENT_STREAM_HOOK in agent_run.ctx.deps.hooked
        self._source: AsyncGenerator[AgentStreamEvent] = self._drive()
        # The events read by `start()` before the reader came: those of the response being streamed.
        self._buffer: deque[AgentStreamEvent] = deque()
        self._events: AsyncGenerator[AgentStreamEvent] = self._buffered()
        self._response: StreamedResponse | None = None
        self._responses = 0  # model responses started so far
        self._result: AgentRunResult[OutputDataT] | None = None
        self._ended_before_block = False
        self._interrupted: ModelResponse | None = None  # the response cut off by `cancel()`
        self._cancelled = False
        self._stopped = False  # the run raised (or was closed) before its end
        # Every generator made for a stream, closed with the run: a reader may leave a stream half read.
        self._generators: list[AsyncGenerator[Any]] = []

    def _reader(self) -> OutputReader:  # one per read: kept on the result, it would hold the result in a cycle
        return OutputReader(self._run.ctx, lambda: self._responses)  # (which response an event belongs to)

    def _track(self, generator: AsyncGenerator[_T]) -> AsyncGenerator[_T]:
        self._generators.append(generator)
        return generator

    def _read(self, events: NodeEvents) -> AsyncIterable[AgentStreamEvent]:
        if isinstance(events, AgentStream):  # the fields of 2.x's result made of the stream
            self._stream_response = cast('AgentStream[AgentDepsT, OutputDataT]', events)
            self._new_message_index = self._run.ctx.deps.new_message_index
            self._response = events.raw_response
            self._responses += 1
        if self._handler is not None or self._wraps:
            run = self._run.ctx
            wrap = partial(wrapped_events, self._run) if self._wraps else None
            self._handled = HandledEvents(events, self._handler, run.deps.run_context(run.state), wrap)
            return self._handled
        return events

    async def _drive(self) -> AsyncGenerator[AgentStreamEvent]:
        run = self._run
        try:
            async with aclosing(stream_nodes(run, self._read, wrap_events=False)) as events:
                async for event in events:
                    yield event
        except BaseException:
            self._stopped = True  # (`result` says so: the run has no settled output)
            raise
        self._result = run.result
        self._settle()

    def _settle(self) -> None:
        """The run ended, or its output was read: it is complete once it has its result."""
        self.is_complete = self._result is not None

    async def start(self) -> None:
        """Run up to the response that starts the final result (its `FinalResultEvent`), as pydantic-ai's
        `run_stream` does before its block is entered: tools called by the responses before it have run, and the
        streams then read from the start of that response. A run that ends without one is run to its end."""
        response = self._responses
        async for event in self._source:
            if self._responses != response:
                response = self._responses
                self._buffer.clear()
            self._buffer.append(event)
            if isinstance(event, FinalResultEvent):
                if self._handled is not None:
                    # As pydantic-ai: the handler gets the events up to the final result, and none after.
                    self._handler = None
                    self._wraps = False
                    await self._handled.hand_over()
                return
        # A run that ended before the block (on deferred tool calls) is complete once its output is read, as in
        # pydantic-ai.
        self._ended_before_block = self._result is not None
        self.is_complete = False

    async def _buffered(self) -> AsyncGenerator[AgentStreamEvent]:
        while self._buffer:
            yield self._buffer.popleft()
        async for event in self._source:
            yield event

    async def _finish(self) -> None:
        async for _ in self._events:
            pass

    async def aclose(self) -> None:
        """Stop the run if it is still going (what leaving the `async with` block does)."""
        for generator in reversed(self._generators):
            await generator.aclose()
        await self._events.aclose()
        await self._source.aclose()

    # -- streams --------------------------------------------------------------------------------------------------

    def stream_text(self, *, delta: bool = False, debounce_by: float | None = 0.1) -> AsyncIterator[str]:
        """Stream the text of the run's responses as it arrives.

        Args:
            delta: Yield each new piece of text, instead of the whole text of the current response so far.
            debounce_by: Yield at most once per this many seconds (the latest text; pieces are joined when
                `delta`); `None` yields on every chunk.

        A response that is followed by another one (because it also called tools) is streamed too: with
        `delta=False` the text starts over with each response; the last response's text is the output.
        With `delta=False`, output validators see each text so far (`ctx.partial_output` set): what they
        return is yielded, and a `ModelRetry` skips that text.

        Raises:
            UserError: the output is structured (use `stream_output`).
        """
        schema = self._run.ctx.deps.output_schema
        if not schema.allow_text_output or schema.text_function is not None:
            raise UserError(
                'stream_text() can only be used with text responses; use stream_output() for structured output.'
            )
        if self._result is not None and isinstance(self._result.output, str):
            # The run is over: its output, once (as pydantic-ai streams a cached output again).
            return _Stream(self._track(self._read_out(_once(self._result.output))))
        pieces = self._track(text_pieces(self._events))
        source = pieces if delta else self._track(self._reader().texts(pieces))
        if debounce_by is not None:
            source = self._track(_debounce(source, debounce_by, ''.join if delta else None))
        return _Stream(source)

    async def _read_out(self, values: AsyncGenerator[_T]) -> AsyncGenerator[_T]:
        async for value in values:
            yield value
        self._settle()

    def stream_output(self, *, debounce_by: float | None = 0.1) -> AsyncIterator[OutputDataT]:
        """Stream the output as it grows: partial values validated against the output type, then the output.

        For text output, the text so far. For structured output, a validated partial value for every chunk
        that changes it; output validators see each one with `ctx.partial_output` set (a `ModelRetry` from
        them skips that partial value). The last value yielded is the run's output.

        Args:
            debounce_by: Yield at most once per this many seconds (the latest value); `None`: every change.
        """
        return _Stream(self._track(self._outputs(debounce_by)))

    async def _outputs(self, debounce_by: float | None) -> AsyncGenerator[Any]:
        if self._result is not None:  # the run is over: its output, once, as a copy
            yield copy.deepcopy(self._result.output)
            self._settle()
            return
        partials = self._track(self._reader().partial_outputs(self._events))
        source = partials if debounce_by is None else self._track(_debounce(partials, debounce_by, None))
        async for value in source:
            yield value
        await self._finish()
        assert self._result is not None
        # The output is always the last value, even when it equals the last partial one (as in pydantic-ai): a
        # reader can take the last value for the validated output.
        yield self._result.output
        self._settle()

    def stream_response(self, *, debounce_by: float | None = 0.1) -> AsyncIterator[ModelResponse]:
        """Stream the model response being received, as a `ModelResponse` rebuilt on each event.

        While a response streams its `state` is `'incomplete'`; the last value yielded is the run's last
        response, `'complete'` (or `'interrupted'` after `cancel()`).

        Args:
            debounce_by: Yield at most once per this many seconds (the latest response); `None`: every event.
        """
        return _Stream(self._track(self._responses_then_last(debounce_by)))

    def stream_responses(self, *, debounce_by: float | None = 0.1) -> AsyncIterator[tuple[ModelResponse, bool]]:
        """`stream_response()` as `(response, is_last)` pairs (deprecated in pydantic-ai 1.107, as here).

        `is_last` is `True` for a response that is no longer streaming.
        """
        warnings.warn(
            '`StreamedRunResult.stream_responses()` is deprecated: use `stream_response()` and '
            "`response.state != 'incomplete'` for `is_last`.",
            PydanticAIDeprecationWarning,
            stacklevel=2,
        )
        return _Stream(self._track(self._pairs(self.stream_response(debounce_by=debounce_by))))

    async def _pairs(self, responses: AsyncIterator[ModelResponse]) -> AsyncGenerator[tuple[ModelResponse, bool]]:
        async for response in responses:
            yield response, response.state != 'incomplete'

    async def _responses_then_last(self, debounce_by: float | None) -> AsyncGenerator[ModelResponse]:
        async def changed() -> AsyncGenerator[Any]:
            # As pydantic-ai: what arrived before the block was entered shows as one snapshot (when it has
            # content), then a snapshot follows each event.
            before = len(self._buffer)
            streamed = self._response
            # (A run already over, ended on deferred calls before the block, shows only its last response.)
            if (
                before
                and streamed is not None
                and self._result is None
                and any(_has_content(p) for p in streamed.get().parts)
            ):
                yield streamed
            async for event in self._events:
                if before:
                    before -= 1
                elif self._response is not None and event.event_kind in _RESPONSE_EVENT_KINDS:
                    yield self._response

        source = self._track(changed())
        if debounce_by is not None:
            source = self._track(_debounce(source, debounce_by, None))
        # Built only for the values that are yielded: building costs the size of the response so far, and
        # debouncing drops most values. A value is built as soon as it is yielded, so it shows the response
        # as of its event.
        # `cancel()` closes this generator (as every stream of the result): no response follows a cancellation.
        async for streamed in source:
            yield streamed.get()
        await self._finish()
        last = self.response
        if last.state == 'complete' and last.run_id is None and self._response is not None:
            # The whole response, as the run records it: with the run's ids (pydantic-ai's last snapshot).
            state = self._run.ctx.state
            last = dataclasses.replace(last, run_id=state.run_id, conversation_id=state.conversation_id)
        yield last
        self._settle()

    # -- cancelling -----------------------------------------------------------------------------------------------

    async def cancel(self) -> None:
        """Stop the run now: the model stops generating, and the response received so far is kept in
        `all_messages()` and `response` with `state='interrupted'`. Streams being read end.

        After the run is complete this only sets `cancelled`.
        """
        if self._cancelled:
            return
        self._cancelled = True
        if self._result is not None:
            return
        streamed = self._response
        if streamed is not None:
            await streamed.cancel()
            if not streamed.complete:
                self._interrupted = streamed.get()
                self._interrupted.run_id = self._run.ctx.state.run_id
                self._interrupted.conversation_id = self._run.ctx.state.conversation_id
        await self.aclose()

    @property
    def cancelled(self) -> bool:
        """Whether `cancel()` was called."""
        return self._cancelled

    # -- results --------------------------------------------------------------------------------------------------

    async def get_output(self) -> OutputDataT:
        """Run to the end (reading what is left of the stream) and return the output."""
        await self._finish()
        assert self._result is not None
        # A copy each time: a caller changing what it got does not change what the next call gets.
        output: OutputDataT = copy.deepcopy(self._result.output)
        self._settle()
        return output

    @property
    def response(self) -> ModelResponse:
        """The current response: the one being streamed (`state='incomplete'`), the one cut by `cancel()`, or
        the run's last response; a streamed response as it was received (without the run's ids, as pydantic-ai).

        Raises:
            UserError: no response has started yet.
        """
        if self._interrupted is not None:
            return self._interrupted
        streamed = self._response
        if streamed is not None:
            # the streamed response as received (pydantic-ai's `response`: without the run's ids)
            return streamed.get()
        for message in reversed(self._run.all_messages()):
            if isinstance(message, ModelResponse):
                return message
        raise UserError('No response yet: read the stream first.')

    async def validate_response_output(self, message: ModelResponse, *, allow_partial: bool = False) -> OutputDataT:
        """Validate a response (one from `stream_response()`, say) into an output value.

        Text (for text output), the output tool's arguments, or JSON text (native and prompted output) are
        validated against the output type, and output validators run (with `ctx.partial_output` set when
        `allow_partial`); output functions run only when not `allow_partial`.

        Args:
            message: The response to validate.
            allow_partial: Accept an unfinished value (an incomplete last item or string is left out).

        Raises:
            UnexpectedModelBehavior: the response holds no output of the run's output type.
            pydantic.ValidationError: the output does not validate.
        """
        if self._ended_before_block:
            # The run ended on deferred tool calls before the block: its output is what any response gives (as in
            # pydantic-ai), none of them holding output of its own.
            assert self._result is not None
            ended: OutputDataT = copy.deepcopy(self._result.output)
            return ended
        output: OutputDataT = await validate_response(self._run.ctx, message, allow_partial=allow_partial)
        return output

    @property
    def usage(self) -> CallableRunUsage:
        """The usage of the run so far, the response being streamed included (`result.usage`; calling it, the
        spelling before pydantic-ai 1.107, still works but is deprecated)."""
        usage = self._run.ctx.state.usage
        streamed = self._response
        if streamed is not None and not streamed.complete and self._result is None and self._interrupted is None:
            in_progress = streamed.usage
            usage = usage + in_progress
            if in_progress.cost is None and prices_loaded():  # the cost so far of the response, as 2.x estimates it
                price = best_effort_price(
                    in_progress,
                    model_name=streamed.model_name,
                    provider_api_url=streamed.provider_url,
                    provider_name=streamed.provider_name,
                    genai_request_timestamp=streamed.timestamp,
                    price_context=streamed.provider_details,
                )
                if price is not None:
                    usage.cost = (usage.cost or Decimal(0)) + price.total_price
        return CallableRunUsage.of(usage)

    @property
    def timestamp(self) -> CallableDatetime:
        """When the current response started (the last one once the run is over); callable too, as before 1.107.

        Raises:
            UserError: no response has started yet.
        """
        return CallableDatetime.of(self.response.timestamp)

    @property
    def run_id(self) -> str:
        """The id of the run."""
        return self._run.run_id

    @property
    def conversation_id(self) -> str:
        """The id of the conversation the run belongs to."""
        return self._run.conversation_id

    @property
    def metadata(self) -> dict[str, Any] | None:
        """The run's metadata."""
        return self._run.metadata

    def all_messages(self, *, output_tool_return_content: str | None = None) -> list[ModelMessage]:
        """Every message so far, including the message history the run was given.

        Args:
            output_tool_return_content: Once the run is complete, replace the content of the output tool's
                return part with this.
        """
        if output_tool_return_content is not None:
            return self._complete_result().all_messages(output_tool_return_content=output_tool_return_content)
        messages = self._run.all_messages()
        if self._interrupted is not None and (not messages or messages[-1] is not self._interrupted):
            messages = [*messages, self._interrupted]
        return messages

    def all_messages_json(self, *, output_tool_return_content: str | None = None) -> bytes:
        """`all_messages()` as JSON."""
        return _messages.ModelMessagesTypeAdapter.dump_json(
            self.all_messages(output_tool_return_content=output_tool_return_content)
        )

    def new_messages(self, *, output_tool_return_content: str | None = None) -> list[ModelMessage]:
        """The messages of this run so far."""
        start = self._run.ctx.deps.new_message_index
        return self.all_messages(output_tool_return_content=output_tool_return_content)[start:]

    def new_messages_json(self, *, output_tool_return_content: str | None = None) -> bytes:
        """`new_messages()` as JSON."""
        return _messages.ModelMessagesTypeAdapter.dump_json(
            self.new_messages(output_tool_return_content=output_tool_return_content)
        )

    @property
    def result(self) -> AgentRunResult[OutputDataT]:
        """The run as an `AgentRunResult` (the same output, messages, usage, ids and workspace), once the stream has
        been read to the run's end: for code that keeps the run after the stream is gone (pydantic-ai 2.68).

        Raises:
            UserError: the run is still streaming, or it stopped (cancelled, or raised) before its end.
        """
        if self._cancelled or self._stopped:
            raise UserError(_STOPPED_MESSAGE)
        if not self.is_complete:
            raise UserError(_STREAMING_MESSAGE)
        return self._complete_result()

    @property
    def workspace(self) -> Workspace:
        """The workspace of the run (`ctx.workspace`; a detached one when the run has none attached)."""
        workspace: Workspace = self._run.ctx.deps.workspace
        return workspace

    def _complete_result(self) -> AgentRunResult[OutputDataT]:
        if self._result is None:
            raise UserError('The run is not complete yet: read the stream (or `await get_output()`) first.')
        return self._result

    @reprlib.recursive_repr()
    def __repr__(self) -> str:
        # 2.x's dataclass repr, under the public name whichever way the result was made
        shown = ', '.join(f'{f.name}={getattr(self, f.name)!r}' for f in dataclasses.fields(self) if f.repr)
        return f'StreamedRunResult({shown})'


class GivenStreamedRunResult(StreamedRunResult[AgentDepsT, OutputDataT]):
    """A `StreamedRunResult` made with pydantic-ai 2.x's constructor: the messages so far and where the run's own
    start, and either the `AgentStream` of the response to read (`on_complete` is awaited once it is read) or the
    `AgentRunResult` of a run that is over. `all_messages()` is the list given, to which the streamed response is
    added once it is read.

    Made by `StreamedRunResult(...)` itself when given these arguments (it is a `StreamedRunResult`).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # `dataclasses.replace` gives the fields by their own names (`_all_messages=...`)
        self._take(*args, **{name.removeprefix('_'): value for name, value in kwargs.items()})

    def _take(
        self,
        all_messages: list[ModelMessage],
        new_message_index: int,
        stream_response: AgentStream[Any, OutputDataT] | None = None,
        on_complete: Callable[[], Awaitable[None]] | None = None,
        run_result: AgentRunResult[OutputDataT] | None = None,
    ) -> None:
        self._all_messages = all_messages
        self._new_message_index = new_message_index
        self._stream_response = stream_response
        self._on_complete = on_complete
        self._run_result = run_result
        self._cancelled = False
        self._settled: tuple[OutputDataT] | None = None  # the stream's output, once read whole

    def _given(self) -> AgentRunResult[OutputDataT] | AgentStream[Any, OutputDataT]:
        source = self._run_result if self._run_result is not None else self._stream_response
        if source is None:
            raise UserError(
                'This StreamedRunResult was made with neither a `stream_response` nor a `run_result`: it has nothing '
                'to read. Give it one of them, or use `agent.run_stream(...)`.'
            )
        return source

    async def _completed(self, response: ModelResponse | None = None) -> None:
        """Mark the result complete (once): a streamed response is added to the messages, then `on_complete` runs."""
        if self.is_complete:
            return
        self.is_complete = True
        if response is not None:
            self._record(response)
        if self._on_complete is not None:
            await self._on_complete()

    def _record(self, response: ModelResponse) -> None:
        """Add the streamed response to the messages, with the run's ids (as the run records a response)."""
        assert self._stream_response is not None  # only a streamed response is recorded
        response.run_id = self._stream_response.run_id
        response.conversation_id = self._stream_response.conversation_id
        self._all_messages.append(response)

    def _track(self, generator: AsyncGenerator[_T]) -> AsyncGenerator[_T]:
        return generator  # nothing to close with the run: the stream given belongs to whoever made it

    async def start(self) -> None:
        """Nothing to run ahead: the response is read as the streams are."""

    async def aclose(self) -> None:
        """Nothing to stop: the stream given belongs to whoever made it."""

    async def stream_text(self, *, delta: bool = False, debounce_by: float | None = 0.1) -> AsyncIterator[str]:
        """The response's text (see `AgentStream.stream_text`); a finished run's text output, once.

        Raises:
            UserError: the output is not text.
        """
        source = self._given()
        if isinstance(source, AgentStream):
            async for text in source.stream_text(delta=delta, debounce_by=debounce_by):
                yield text
            await self._completed(source.response)
            return
        if not isinstance(source.output, str):
            raise UserError('stream_text() can only be used with text responses; use stream_output() instead.')
        yield source.output
        await self._completed()

    async def stream_output(self, *, debounce_by: float | None = 0.1) -> AsyncIterator[OutputDataT]:
        """The output as it grows (see `AgentStream.stream_output`); a finished run's output, once."""
        source = self._given()
        if isinstance(source, AgentStream):
            last: tuple[OutputDataT] | None = None
            async for output in source.stream_output(debounce_by=debounce_by):
                last = (output,)
                yield output
            self._settled = last
            await self._completed(source.response)
            return
        yield source.output
        await self._completed()

    async def stream_response(self, *, debounce_by: float | None = 0.1) -> AsyncIterator[ModelResponse]:
        """Snapshots of the response (see `AgentStream.stream_response`); a finished run's last response, once."""
        source = self._given()
        if isinstance(source, AgentStream):
            last: ModelResponse | None = None
            async for last in source.stream_response(debounce_by=debounce_by):
                yield last
            await self._completed(last)
            return
        yield source.response
        await self._completed()

    async def get_output(self) -> OutputDataT:
        """Read the whole response and return the validated output (a finished run's output)."""
        source = self._given()
        if isinstance(source, AgentStream):
            output = await source.get_output()
            self._settled = (output,)
            await self._completed(source.response)
            return output
        await self._completed()
        return source.output

    @property
    def result(self) -> AgentRunResult[OutputDataT]:
        """The finished run's result given; for a stream, the run as an `AgentRunResult` once its output was read
        (`get_output()`, or `stream_output()` to its end): the messages given with the response, its usage and ids.

        Raises:
            UserError: the stream is still being read, was cancelled, or its output was not read as a whole.
        """
        source = self._given()
        if isinstance(source, AgentRunResult):
            return source
        if self._cancelled:
            raise UserError(_STOPPED_MESSAGE)
        if not self.is_complete:
            raise UserError(_STREAMING_MESSAGE)
        if self._settled is None:
            raise UserError(
                'The stream was read as text or as responses, not as output, so it has no validated output to settle '
                'on: `await get_output()` first (it reads what is left, here nothing).'
            )
        state = GraphAgentState(
            message_history=self._all_messages,
            usage=dataclasses.replace(source.usage),
            run_id=source.run_id,
            conversation_id=source.conversation_id,
            metadata=source.metadata,
        )
        result = AgentRunResult(self._settled[0], _state=state, _new_message_index=self._new_message_index)
        result.__dict__['_workspace'] = source._run_ctx.workspace
        return result

    @property
    def workspace(self) -> Workspace:
        """The workspace of the run: the finished run's, or that of the stream's run context."""
        source = self._given()
        return source.workspace if isinstance(source, AgentRunResult) else source._run_ctx.workspace

    async def validate_response_output(self, message: ModelResponse, *, allow_partial: bool = False) -> OutputDataT:
        """The output `message` holds, validated (see `AgentStream.validate_response_output`); a finished run's
        output whatever the message."""
        source = self._given()
        if isinstance(source, AgentStream):
            return await source.validate_response_output(message, allow_partial=allow_partial)
        return source.output

    async def cancel(self) -> None:
        """Stop the streamed response (kept `'interrupted'` and added to the messages); after the stream is read, or
        for a finished run, this only sets `cancelled`."""
        self._cancelled = True
        if self._stream_response is not None and not self.is_complete:
            await self._stream_response.cancel()
            self.is_complete = True
            self._record(self._stream_response.response)

    @property
    def response(self) -> ModelResponse:
        """The response being streamed, or the finished run's last response."""
        return self._given().response

    @property
    def usage(self) -> CallableRunUsage:
        """The run's usage, the streamed response's so far included."""
        return self._given().usage

    @property
    def timestamp(self) -> CallableDatetime:
        """When the current response started."""
        return self._given().timestamp

    @property
    def run_id(self) -> str:
        """The id of the run.

        Raises:
            UserError: the finished run's result has no run state (made by hand without `_state`).
        """
        return _known_id(self._given().run_id, 'run_id')

    @property
    def conversation_id(self) -> str:
        """The id of the conversation the run belongs to (see `run_id`)."""
        return _known_id(self._given().conversation_id, 'conversation_id')

    @property
    def metadata(self) -> dict[str, Any] | None:
        """The run's metadata: the finished run's, else the stream's; `None` when given neither."""
        if self._run_result is not None:
            return self._run_result.metadata
        if self._stream_response is not None:
            return self._stream_response.metadata
        return None

    def all_messages(self, *, output_tool_return_content: str | None = None) -> list[ModelMessage]:
        """The messages given, with the streamed response once it is read.

        Raises:
            UserError: `output_tool_return_content` is given (not supported for a result made this way, as in 2.x).
        """
        if output_tool_return_content is not None:
            raise UserError(
                '`output_tool_return_content` is not supported by a StreamedRunResult made from its messages; '
                'read the output tool return from `all_messages()` instead.'
            )
        return self._all_messages

    def new_messages(self, *, output_tool_return_content: str | None = None) -> list[ModelMessage]:
        """The messages from `new_message_index` on."""
        return self.all_messages(output_tool_return_content=output_tool_return_content)[self._new_message_index :]


_STREAMING_MESSAGE = (
    'The run is still streaming, so it has no settled result yet: read it to its end first (`get_output()`, or '
    '`stream_output()`, `stream_text()` or `stream_response()` to their end).'
)
_STOPPED_MESSAGE = (
    'The run stopped before it finished, so it has no settled result; the messages recorded until it stopped are '
    'in `all_messages()`.'
)


def _known_id(value: str | None, name: str) -> str:
    if value is None:
        raise UserError(f'The run result this StreamedRunResult was given has no `{name}` (it has no run state).')
    return value


class _Stream(AsyncIterator[_T]):
    """What the `stream_*` methods return: an iterator over a generator the result closes with the run (a
    class, so that a reader leaving it half read leaves no generator for the garbage collector to finish)."""

    def __init__(self, generator: AsyncGenerator[_T]) -> None:
        self._generator = generator

    def __aiter__(self) -> _Stream[_T]:
        return self

    async def __anext__(self) -> _T:
        return await self._generator.__anext__()


async def _once(value: _T) -> AsyncGenerator[_T]:
    yield value


_RESPONSE_EVENT_KINDS = frozenset({'part_start', 'part_delta', 'part_end', 'final_result'})
"""The events of a model response (a snapshot of the response follows each; not the tool call events)."""


def _has_content(part: Any) -> bool:
    has_content = getattr(part, 'has_content', None)
    return bool(has_content()) if has_content is not None else True

"""`UIEventStream`: turns the events of an agent run into the events of a UI protocol, and encodes them."""

from __future__ import annotations as _annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeAlias, cast
from uuid import uuid4

import anyio.to_thread
from typing_extensions import TypeVar

from ..exceptions import RunCancelled
from ..messages import (
    AgentStreamEvent,
    CapabilityEvent,
    CompactionPart,
    CustomEvent,
    DeferredToolRequestsEvent,
    DeferredToolResultsEvent,
    FilePart,
    FinalResultEvent,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    NativeToolCallPart,
    NativeToolReturnPart,
    OutputToolCallEvent,
    OutputToolResultEvent,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
    SpeechPart,
    TextPart,
    TextPartDelta,
    ThinkingPart,
    ThinkingPartDelta,
    ToolCallEvent,
    ToolCallPart,
    ToolCallPartDelta,
    ToolResultEvent,
    ToolReturnPart,
    UnknownCustomEvent,
)
from ..output import OutputDataT
from ..result import AgentRunResult, AgentRunResultEvent
from ..tools import AgentDepsT
from ._starlette import streaming_response

if TYPE_CHECKING:
    from starlette.responses import StreamingResponse

__all__ = ('SSE_CONTENT_TYPE', 'NativeEvent', 'OnCancelFunc', 'OnCompleteFunc', 'UIEventStream')

SSE_CONTENT_TYPE = 'text/event-stream'
"""The content type of a server-sent events response."""

RunInputT = TypeVar('RunInputT')
EventT = TypeVar('EventT')
_ArgT = TypeVar('_ArgT')

NativeEvent: TypeAlias = AgentStreamEvent | AgentRunResultEvent[Any]
"""An event of `Agent.run_stream_events`: a stream or tool event, or the closing `AgentRunResultEvent`."""

_Callback: TypeAlias = (
    Callable[[_ArgT], None] | Callable[[_ArgT], Awaitable[None]] | Callable[[_ArgT], AsyncIterator[EventT]]
)
OnCompleteFunc: TypeAlias = _Callback[AgentRunResult[Any], EventT]
"""Called with the result when the run completes: a plain or async function, or an async generator whose
protocol events are sent after the run's own."""
OnCancelFunc: TypeAlias = _Callback[RunCancelled, EventT]
"""Called with the `RunCancelled` of a run the application cancelled (`RunContext.cancel()`, its cancellation
token; `dispatch_request` cancels the run when the client goes away): the place to store
`cancelled.all_messages()`. A plain or async function, or an async generator whose protocol events are sent."""

_TRACKED_PARTS = (TextPart, ThinkingPart, ToolCallPart, NativeToolCallPart)
_INTERRUPTED = 'Tool execution was interrupted by an error.'
_CANCELLED = 'The tool call was interrupted before a result was produced.'


@dataclass
class UIEventStream(ABC, Generic[RunInputT, EventT, AgentDepsT, OutputDataT]):
    """Turns the events of an agent run into the events of one UI protocol.

    `transform_stream` calls the `handle_*` method of each event kind, and the hooks `before_stream`,
    `after_stream`, `before_request`/`after_request` (around tool handling), `before_response`/`after_response`
    (around each streamed model response) and `on_error`; a protocol overrides those it needs.
    `encode_event` writes one protocol event; `streaming_response` answers an HTTP request with the stream
    (Starlette, the `ui` extra).
    """

    run_input: RunInputT | None = None
    """The protocol's run input the stream answers, or `None` when the stream only encodes events."""
    accept: str | None = None
    """The request's `Accept` header, for protocols that encode in more than one way."""
    message_id: str = field(default_factory=lambda: str(uuid4()))
    """The id of the protocol message being streamed."""

    _turn: Literal['request', 'response'] | None = field(default=None, init=False, repr=False)
    _result: AgentRunResult[OutputDataT] | None = field(default=None, init=False, repr=False)
    _final_result_event: FinalResultEvent | None = field(default=None, init=False, repr=False)
    _pending_calls: dict[str, tuple[bool, str]] = field(default_factory=dict, init=False, repr=False)
    _open_part: tuple[int, TextPart | ThinkingPart | ToolCallPart | NativeToolCallPart] | None = field(
        default=None, init=False, repr=False
    )
    _cancelled: RunCancelled | None = field(default=None, init=False, repr=False)

    def new_message_id(self) -> str:
        """Start a new protocol message: a fresh `message_id`, returned."""
        self.message_id = str(uuid4())
        return self.message_id

    @property
    def response_headers(self) -> Mapping[str, str] | None:
        """Extra headers of the streaming response."""
        return None

    @property
    def content_type(self) -> str:
        """The content type of the streaming response (server-sent events unless a protocol says otherwise)."""
        return SSE_CONTENT_TYPE

    @property
    def cancelled(self) -> RunCancelled | None:
        """The `RunCancelled` of the run once the stream has ended with its cancellation (it holds the messages to
        store), else `None`."""
        return self._cancelled

    @abstractmethod
    def encode_event(self, event: EventT) -> str:
        """One protocol event as the text sent for it."""
        raise NotImplementedError

    async def encode_stream(self, stream: AsyncIterator[EventT]) -> AsyncIterator[str]:
        """Each protocol event of `stream` as the text sent for it."""
        async for event in stream:
            yield self.encode_event(event)

    def streaming_response(
        self, stream: AsyncIterator[EventT], *, on_disconnect: Callable[[], None] | None = None
    ) -> StreamingResponse:
        """A Starlette `StreamingResponse` sending `stream` encoded (needs the `ui` extra).

        Args:
            stream: The protocol events.
            on_disconnect: Called when the client goes away (e.g. the cancel of a run's `CancellationToken`); the
                stream is then read to its end, its events dropped, so that the run's end is seen (`on_cancel`).
        """
        body = self.encode_stream(stream)
        what = '`UIEventStream.streaming_response()`'
        return cast(
            'StreamingResponse',
            streaming_response(
                body, headers=self.response_headers, media_type=self.content_type, on_disconnect=on_disconnect,
                what=what,
            ),
        )  # fmt: skip

    async def transform_stream(
        self,
        stream: AsyncIterator[NativeEvent],
        on_complete: OnCompleteFunc[EventT] | None = None,
        on_cancel: OnCancelFunc[EventT] | None = None,
    ) -> AsyncIterator[EventT]:
        """The protocol events of a run's events.

        An error raised by `stream` ends the protocol stream cleanly: the part being streamed is closed, each
        tool call still running gets a failed result, then `on_error` says what went wrong. A run the application
        cancelled (`RunCancelled`) ends it the same way, its running tool calls answered as interrupted; then
        `on_cancel` and `on_cancelled` are called instead of `on_error`.

        Args:
            stream: The run's events, as `Agent.run_stream_events` gives them.
            on_complete: Called with the run's result when it completes; see `OnCompleteFunc`.
            on_cancel: Called with the `RunCancelled` when the run was cancelled; see `OnCancelFunc`.
        """
        async for out in self.before_stream():
            yield out
        try:
            async for event in stream:
                async for out in self._track(event):
                    yield out
                async for out in self.handle_event(event):
                    yield out
                if isinstance(event, AgentRunResultEvent) and on_complete is not None:
                    async for out in self._call(on_complete, event.result):
                        yield out
                # Open only once its start was sent: an error in between leaves nothing to close.
                if isinstance(event, PartStartEvent) and isinstance(event.part, _TRACKED_PARTS):
                    self._open_part = (event.index, event.part)
        except Exception as error:
            cancelled = error if isinstance(error, RunCancelled) else None
            async for out in self._close_after_error(cancelled is not None):
                yield out
            if cancelled is None:
                async for out in self.on_error(error):
                    yield out
            else:
                self._cancelled = cancelled
                if on_cancel is not None:
                    async for out in self._call(on_cancel, cancelled):
                        yield out
                async for out in self.on_cancelled(cancelled):
                    yield out
        finally:
            aclose = getattr(stream, 'aclose', None)
            if aclose is not None:
                await aclose()
        async for out in self._turn_to(None):
            yield out
        async for out in self.after_stream():
            yield out

    async def _track(self, event: NativeEvent) -> AsyncIterator[EventT]:
        """Follow the run's turns, its open part and its running tool calls."""
        if isinstance(event, PartStartEvent):
            async for out in self._turn_to('response'):
                yield out
        elif isinstance(event, PartEndEvent):
            self._open_part = None
        elif isinstance(event, ToolCallEvent):
            is_output = isinstance(event, OutputToolCallEvent)
            self._pending_calls[event.part.tool_call_id] = (is_output, event.part.tool_name)
            if is_output:
                self._final_result_event = None
            async for out in self._turn_to('request'):
                yield out
        elif isinstance(event, ToolResultEvent):
            self._pending_calls.pop(event.part.tool_call_id, None)
        elif isinstance(event, FinalResultEvent):
            self._final_result_event = event
        elif isinstance(event, AgentRunResultEvent):
            self._result = cast(AgentRunResult[OutputDataT], event.result)
            async for out in self._turn_to(None):
                yield out

    async def _close_after_error(self, cancelled: bool = False) -> AsyncIterator[EventT]:
        if self._open_part is not None:
            index, part = self._open_part
            self._open_part = None
            async for out in self.handle_part_end(PartEndEvent(index=index, part=part)):
                yield out
        final = self._final_result_event
        if final is not None and final.tool_call_id and final.tool_name:
            self._pending_calls.setdefault(final.tool_call_id, (True, final.tool_name))
        self._final_result_event = None
        for tool_call_id, (is_output, tool_name) in self._pending_calls.items():
            async for out in self._turn_to('request'):
                yield out
            if cancelled:
                failed = ToolReturnPart(tool_name, _CANCELLED, tool_call_id, outcome='interrupted')
            else:
                failed = ToolReturnPart(tool_name, _INTERRUPTED, tool_call_id, outcome='failed')
            if is_output:
                async for out in self.handle_output_tool_result(OutputToolResultEvent(failed)):
                    yield out
            else:
                async for out in self.handle_function_tool_result(FunctionToolResultEvent(failed)):
                    yield out
        self._pending_calls.clear()

    async def _call(self, callback: _Callback[_ArgT, EventT], arg: _ArgT) -> AsyncIterator[EventT]:
        if inspect.isasyncgenfunction(callback):
            async for out in callback(arg):
                yield out
            return
        if inspect.iscoroutinefunction(callback) or inspect.iscoroutinefunction(type(callback).__call__):
            await cast(Callable[[_ArgT], Awaitable[None]], callback)(arg)
            return
        # A plain function may block: it runs in a thread. What it returns travels boxed, as trio refuses a thread's
        # function that returns a coroutine (a plain function may return an awaitable or an async iterator).
        (returned,) = await anyio.to_thread.run_sync(lambda: (callback(arg),))
        if isinstance(returned, AsyncIterator):
            async for out in returned:
                yield out
        elif inspect.isawaitable(returned):
            await returned

    async def _turn_to(self, turn: Literal['request', 'response'] | None) -> AsyncIterator[EventT]:
        if turn == self._turn:
            return
        if self._turn == 'request':
            async for out in self.after_request():
                yield out
        elif self._turn == 'response':
            async for out in self.after_response():
                yield out
        self._turn = turn
        if turn == 'request':
            async for out in self.before_request():
                yield out
        elif turn == 'response':
            async for out in self.before_response():
                yield out

    async def handle_event(self, event: NativeEvent) -> AsyncIterator[EventT]:
        """The protocol events of one run event: calls the `handle_*` method of its kind."""
        handled: AsyncIterator[EventT] | None
        if isinstance(event, PartStartEvent):
            handled = self.handle_part_start(event)
        elif isinstance(event, PartDeltaEvent):
            handled = self.handle_part_delta(event)
        elif isinstance(event, PartEndEvent):
            handled = self.handle_part_end(event)
        elif isinstance(event, FinalResultEvent):
            handled = self.handle_final_result(event)
        elif isinstance(event, FunctionToolCallEvent):
            handled = self.handle_function_tool_call(event)
        elif isinstance(event, FunctionToolResultEvent):
            handled = self.handle_function_tool_result(event)
        elif isinstance(event, OutputToolCallEvent):
            handled = self.handle_output_tool_call(event)
        elif isinstance(event, OutputToolResultEvent):
            handled = self.handle_output_tool_result(event)
        elif isinstance(event, AgentRunResultEvent):
            handled = self.handle_run_result(event)
        elif isinstance(event, DeferredToolRequestsEvent):
            handled = self.handle_deferred_tool_requests(event)
        elif isinstance(event, DeferredToolResultsEvent):
            handled = self.handle_deferred_tool_results(event)
        elif isinstance(event, CustomEvent):
            # Checked here, for every protocol: an event class declared `ui=False` never reaches a frontend, nor
            # does an event whose class this process never defined (its `ui` is unknown: it stays on the server).
            forwarded = type(event).ui and not isinstance(event, UnknownCustomEvent)
            handled = self.handle_custom_event(event) if forwarded else None
        elif isinstance(event, CapabilityEvent):
            handled = self.handle_capability_event(event)
        else:  # the deprecated native tool events repeat what the parts already said, the other events nothing
            handled = None
        if handled is not None:
            async for out in handled:
                yield out

    async def handle_part_start(self, event: PartStartEvent) -> AsyncIterator[EventT]:
        """A response part starts: calls the `handle_*_start` method of its kind (or that of a native tool's
        return, or of a file)."""
        part = event.part
        handled: AsyncIterator[EventT]
        if isinstance(part, TextPart):
            handled = self.handle_text_start(part, follows_text=event.previous_part_kind == 'text')
        elif isinstance(part, ThinkingPart):
            handled = self.handle_thinking_start(part, follows_thinking=event.previous_part_kind == 'thinking')
        elif isinstance(part, NativeToolCallPart):
            handled = self.handle_builtin_tool_call_start(part)
        elif isinstance(part, ToolCallPart):
            handled = self.handle_tool_call_start(part)
        elif isinstance(part, NativeToolReturnPart):
            handled = self.handle_builtin_tool_return(part)
        elif isinstance(part, CompactionPart):
            handled = self.handle_compaction(part)
        elif isinstance(part, SpeechPart):
            return  # spoken turns of realtime sessions are not shown in UI streams (as in pydantic-ai)
        else:
            assert isinstance(part, FilePart), part
            handled = self.handle_file(part)
        async for out in handled:
            yield out

    async def handle_part_delta(self, event: PartDeltaEvent) -> AsyncIterator[EventT]:
        """More of a response part: calls the `handle_*_delta` method of its kind."""
        delta = event.delta
        handled: AsyncIterator[EventT]
        if isinstance(delta, TextPartDelta):
            handled = self.handle_text_delta(delta)
        elif isinstance(delta, ThinkingPartDelta):
            handled = self.handle_thinking_delta(delta)
        elif isinstance(delta, ToolCallPartDelta):
            handled = self.handle_tool_call_delta(delta)
        else:
            return  # a spoken turn's delta: not shown in UI streams
        async for out in handled:
            yield out

    async def handle_part_end(self, event: PartEndEvent) -> AsyncIterator[EventT]:
        """A response part is complete: calls the `handle_*_end` method of its kind (parts streamed whole,
        native tool returns and files, have none)."""
        part = event.part
        handled: AsyncIterator[EventT] | None = None
        if isinstance(part, TextPart):
            handled = self.handle_text_end(part, followed_by_text=event.next_part_kind == 'text')
        elif isinstance(part, ThinkingPart):
            handled = self.handle_thinking_end(part, followed_by_thinking=event.next_part_kind == 'thinking')
        elif isinstance(part, NativeToolCallPart):
            handled = self.handle_builtin_tool_call_end(part)
        elif isinstance(part, ToolCallPart):
            handled = self.handle_tool_call_end(part)
        if handled is not None:
            async for out in handled:
                yield out

    # Hooks and handlers: each yields nothing unless a protocol overrides it.

    async def handle_compaction(self, part: CompactionPart) -> AsyncIterator[EventT]:
        """A `CompactionPart` the model made (the provider compacted the conversation)."""
        return
        yield  # an async generator that yields nothing

    async def before_stream(self) -> AsyncIterator[EventT]:
        """Events sent before any of the run's."""
        return
        yield  # an async generator that yields nothing

    async def after_stream(self) -> AsyncIterator[EventT]:
        """Events sent after all of the run's."""
        return
        yield  # an async generator that yields nothing

    async def on_error(self, error: Exception) -> AsyncIterator[EventT]:
        """Events telling that the run failed with `error`."""
        return
        yield  # an async generator that yields nothing

    async def on_cancelled(self, cancelled: RunCancelled) -> AsyncIterator[EventT]:
        """Events telling that the application cancelled the run (by default those of `on_error`)."""
        async for out in self.on_error(cancelled):
            yield out

    async def before_request(self) -> AsyncIterator[EventT]:
        """Events sent when the run turns to calling tools."""
        return
        yield  # an async generator that yields nothing

    async def after_request(self) -> AsyncIterator[EventT]:
        """Events sent when the run is done calling tools."""
        return
        yield  # an async generator that yields nothing

    async def before_response(self) -> AsyncIterator[EventT]:
        """Events sent when a model response starts streaming."""
        return
        yield  # an async generator that yields nothing

    async def after_response(self) -> AsyncIterator[EventT]:
        """Events sent when a model response is done streaming."""
        return
        yield  # an async generator that yields nothing

    async def handle_text_start(self, part: TextPart, follows_text: bool = False) -> AsyncIterator[EventT]:
        """A text part starts (`follows_text`: right after another text part)."""
        return
        yield  # an async generator that yields nothing

    async def handle_text_delta(self, delta: TextPartDelta) -> AsyncIterator[EventT]:
        """More text."""
        return
        yield  # an async generator that yields nothing

    async def handle_text_end(self, part: TextPart, followed_by_text: bool = False) -> AsyncIterator[EventT]:
        """A text part ends (`followed_by_text`: another text part comes right after)."""
        return
        yield  # an async generator that yields nothing

    async def handle_thinking_start(self, part: ThinkingPart, follows_thinking: bool = False) -> AsyncIterator[EventT]:
        """A thinking part starts."""
        return
        yield  # an async generator that yields nothing

    async def handle_thinking_delta(self, delta: ThinkingPartDelta) -> AsyncIterator[EventT]:
        """More thinking."""
        return
        yield  # an async generator that yields nothing

    async def handle_thinking_end(
        self, part: ThinkingPart, followed_by_thinking: bool = False
    ) -> AsyncIterator[EventT]:
        """A thinking part ends."""
        return
        yield  # an async generator that yields nothing

    async def handle_tool_call_start(self, part: ToolCallPart) -> AsyncIterator[EventT]:
        """A tool call starts streaming."""
        return
        yield  # an async generator that yields nothing

    async def handle_tool_call_delta(self, delta: ToolCallPartDelta) -> AsyncIterator[EventT]:
        """More of a tool call's arguments."""
        return
        yield  # an async generator that yields nothing

    async def handle_tool_call_end(self, part: ToolCallPart) -> AsyncIterator[EventT]:
        """A tool call is streamed whole."""
        return
        yield  # an async generator that yields nothing

    async def handle_builtin_tool_call_start(self, part: NativeToolCallPart) -> AsyncIterator[EventT]:
        """A call of a provider's native tool starts."""
        return
        yield  # an async generator that yields nothing

    async def handle_builtin_tool_call_end(self, part: NativeToolCallPart) -> AsyncIterator[EventT]:
        """A call of a provider's native tool is streamed whole."""
        return
        yield  # an async generator that yields nothing

    async def handle_builtin_tool_return(self, part: NativeToolReturnPart) -> AsyncIterator[EventT]:
        """The result of a provider's native tool."""
        return
        yield  # an async generator that yields nothing

    async def handle_file(self, part: FilePart) -> AsyncIterator[EventT]:
        """A file the model made."""
        return
        yield  # an async generator that yields nothing

    async def handle_final_result(self, event: FinalResultEvent) -> AsyncIterator[EventT]:
        """The response holds a candidate for the final result."""
        return
        yield  # an async generator that yields nothing

    async def handle_function_tool_call(self, event: FunctionToolCallEvent) -> AsyncIterator[EventT]:
        """A function tool is about to be called."""
        return
        yield  # an async generator that yields nothing

    async def handle_function_tool_result(self, event: FunctionToolResultEvent) -> AsyncIterator[EventT]:
        """A function tool's result (or retry prompt)."""
        return
        yield  # an async generator that yields nothing

    async def handle_output_tool_call(self, event: OutputToolCallEvent) -> AsyncIterator[EventT]:
        """An output tool is about to be called."""
        return
        yield  # an async generator that yields nothing

    async def handle_output_tool_result(self, event: OutputToolResultEvent) -> AsyncIterator[EventT]:
        """An output tool's result (or retry prompt)."""
        return
        yield  # an async generator that yields nothing

    async def handle_run_result(self, event: AgentRunResultEvent[Any]) -> AsyncIterator[EventT]:
        """The run is complete."""
        return
        yield  # an async generator that yields nothing

    async def handle_deferred_tool_requests(self, event: DeferredToolRequestsEvent) -> AsyncIterator[EventT]:
        """A step ended on tool calls that wait (for approval or for results given from outside); a protocol shows
        them from the run's output, so nothing by default."""
        return
        yield  # an async generator that yields nothing

    async def handle_deferred_tool_results(self, event: DeferredToolResultsEvent) -> AsyncIterator[EventT]:
        """A resumed run took the answers to the tool calls it waited for; nothing by default."""
        return
        yield  # an async generator that yields nothing

    async def handle_custom_event(self, event: CustomEvent) -> AsyncIterator[EventT]:
        """An application's event (`RunContext.emit`, `AgentRun.emit`) of a class the frontend may see; nothing by
        default (the protocols send its `to_payload()`)."""
        return
        yield  # an async generator that yields nothing

    async def handle_capability_event(self, event: CapabilityEvent) -> AsyncIterator[EventT]:
        """A capability's event: not for frontends, nothing by default (an application that wants one shown
        listens to it and emits a `CustomEvent`)."""
        return
        yield  # an async generator that yields nothing

"""Streaming events: deltas of response parts, the start and end of parts, and the handling of tool calls.

Names, fields and `event_kind` / `part_delta_kind` tags match pydantic-ai 1.x; `edgewise.agent.messages`
re-exports them all. The last event of `run_stream_events`, `AgentRunResultEvent`, holds a run's result and
lives with it (`_run.result`).
"""

from __future__ import annotations as _annotations

import warnings
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, replace
from typing import Annotated, Any, Literal, TypeAlias, overload

import pydantic
from typing_extensions import deprecated

from .._messages.citations import Citation
from .._messages.model_messages import (
    CapabilityLoadDeltaPart,
    ModelMessage,
    ModelResponsePart,
    ModelSettingsDeltaPart,
    NativeToolCallPart,
    NativeToolReturnPart,
    RetryPromptPart,
    TextPart,
    ThinkingPart,
    ToolAvailabilityDeltaPart,
    ToolCallPart,
    ToolReturnPart,
)
from .._messages.speech import SpeechPartDelta
from .._tools.deferred_calls import DeferredToolRequests, DeferredToolResults
from .._warnings import PydanticAIDeprecationWarning
from ..exceptions import UnexpectedModelBehavior
from .custom_events import CapabilityEvent, CustomEvent

__all__ = (
    'TextPartDelta',
    'ThinkingPartDelta',
    'ToolCallPartDelta',
    'ModelResponsePartDelta',
    'ProviderDetailsDelta',
    'PartStartEvent',
    'PartDeltaEvent',
    'PartEndEvent',
    'FinalResultEvent',
    'ModelResponseStreamEvent',
    'FunctionToolCallEvent',
    'ToolCallEvent',
    'ToolResultEvent',
    'FunctionToolResultEvent',
    'OutputToolCallEvent',
    'OutputToolResultEvent',
    'DeferredToolRequestsEvent',
    'DeferredToolResultsEvent',
    'ToolAvailabilityDeltaEvent',
    'CapabilityLoadDeltaEvent',
    'ModelSettingsDeltaEvent',
    'EnqueuedMessagesEvent',
    'BuiltinToolCallEvent',
    'BuiltinToolResultEvent',
    'HandleResponseEvent',
    'RealtimeSessionErrorEvent',
    'AgentStreamEvent',
)

PartKind = Literal[
    'text', 'thinking', 'tool-call', 'builtin-tool-call', 'builtin-tool-return', 'file', 'compaction', 'speech'
]
"""The `part_kind` of a response part."""


def _repr(obj: object) -> str:
    # Fields left at their default are not shown, as in the reprs of messages.
    shown = []
    for f in obj.__dataclass_fields__.values():  # type: ignore[attr-defined]
        value = getattr(obj, f.name)
        if f.default is not value:
            shown.append(f'{f.name}={value!r}')
    return f'{type(obj).__name__}({", ".join(shown)})'


def _details_or_none(details: object) -> object:
    return None if callable(details) else details


ProviderDetailsDelta: TypeAlias = Annotated[
    dict[str, Any] | Callable[[dict[str, Any] | None], dict[str, Any]] | None,
    pydantic.PlainSerializer(_details_or_none, when_used='json'),
]
"""The `provider_details` of a delta: a dict merged into the part's, a function of the part's details giving the
new ones, or `None`; a function serializes to JSON as `null`."""


@dataclass(repr=False)
class TextPartDelta:
    """New text to append to a `TextPart`."""

    content_delta: str
    """The text to append."""
    _: KW_ONLY
    provider_name: str | None = None
    """The provider that produced the text."""
    provider_details: dict[str, Any] | None = None
    """Provider-specific data, merged into the part's."""
    citations_delta: list[Citation] | None = None
    """All of the part's citations, replacing any it has (sent once the part's text is complete, in a delta without
    text that also sets `provider_details['citations']`; a provider that cites at the end of the response sends
    it then, possibly after the part's `PartEndEvent`)."""
    part_delta_kind: Literal['text'] = 'text'
    """Tag of this delta kind."""

    def apply(self, part: ModelResponsePart) -> TextPart:
        """The `TextPart` with this delta applied.

        Raises:
            ValueError: `part` is not a `TextPart`.
        """
        if not isinstance(part, TextPart):
            raise ValueError(f'Cannot apply a TextPartDelta to {type(part).__name__}')
        return replace(
            part,
            content=part.content + self.content_delta,
            provider_name=self.provider_name or part.provider_name,
            provider_details={**(part.provider_details or {}), **(self.provider_details or {})} or None,
            citations=part.citations if self.citations_delta is None else self.citations_delta,
        )

    __repr__ = _repr


@dataclass(repr=False, kw_only=True)
class ThinkingPartDelta:
    """New reasoning text (or a signature) for a `ThinkingPart`."""

    content_delta: str | None = None
    """The reasoning text to append."""
    signature_delta: str | None = None
    """The part's signature (replaces the previous one; it is not appended)."""
    provider_name: str | None = None
    """The provider that produced the reasoning."""
    provider_details: ProviderDetailsDelta = None
    """Provider-specific data, merged into the part's; or a function of the part's data giving the new data
    (serialized as `null`: an event that crosses a process boundary carries no function)."""
    part_delta_kind: Literal['thinking'] = 'thinking'
    """Tag of this delta kind."""

    @overload
    def apply(self, part: ModelResponsePart) -> ThinkingPart: ...

    @overload
    def apply(self, part: ThinkingPartDelta) -> ThinkingPartDelta: ...

    def apply(self, part: ModelResponsePart | ThinkingPartDelta) -> ThinkingPart | ThinkingPartDelta:
        """The `ThinkingPart` with this delta applied; or, applied to an earlier delta, the two deltas as one.

        Raises:
            ValueError: `part` is neither a `ThinkingPart` nor a `ThinkingPartDelta`, or this delta, applied to a
                delta, has neither content nor signature.
        """
        if isinstance(part, ThinkingPartDelta):
            return self._merged_into(part)
        if not isinstance(part, ThinkingPart):
            raise ValueError(f'Cannot apply a ThinkingPartDelta to {type(part).__name__}')
        details = self.provider_details
        if callable(details):
            details = details(part.provider_details)
        return replace(
            part,
            content=part.content + (self.content_delta or ''),
            signature=self.signature_delta if self.signature_delta is not None else part.signature,
            provider_name=self.provider_name or part.provider_name,
            provider_details={**(part.provider_details or {}), **(details or {})} or None,
        )

    def _merged_into(self, earlier: ThinkingPartDelta) -> ThinkingPartDelta:
        if self.content_delta is None and self.signature_delta is None:
            raise ValueError('Cannot apply ThinkingPartDelta with no content or signature')
        content = earlier.content_delta
        if self.content_delta is not None:
            content = (content or '') + self.content_delta
        return replace(
            earlier,
            content_delta=content,
            signature_delta=self.signature_delta if self.signature_delta is not None else earlier.signature_delta,
            provider_name=self.provider_name if self.provider_name is not None else earlier.provider_name,
            provider_details=_chained_details(earlier.provider_details, self.provider_details),
        )

    __repr__ = _repr


_Details: TypeAlias = dict[str, Any] | Callable[[dict[str, Any] | None], dict[str, Any]] | None


def _chained_details(first: _Details, then: _Details) -> _Details:
    """Provider details that have the effect of applying `first`, then `then` (each a dict to merge, or a function)."""
    if then is None:
        return first
    if not callable(first) and not callable(then):
        return {**(first or {}), **then}

    def chained(details: dict[str, Any] | None) -> dict[str, Any]:
        for step in (first, then):
            details = step(details) if callable(step) else {**(details or {}), **(step or {})}
        return details or {}

    return chained


@dataclass(repr=False, kw_only=True)
class ToolCallPartDelta:
    """A piece of a tool call: more of its name, more of its arguments, or its id."""

    tool_name_delta: str | None = None
    """Text to append to the tool name."""
    args_delta: str | dict[str, Any] | None = None
    """JSON text to append to the arguments, or a dict to merge into them."""
    tool_call_id: str | None = None
    """The call's id (replaces the previous one)."""
    provider_name: str | None = None
    """The provider that produced the call."""
    provider_details: dict[str, Any] | None = None
    """Provider-specific data, merged into the part's."""
    part_delta_kind: Literal['tool_call'] = 'tool_call'
    """Tag of this delta kind (note: `tool_call`, where the part's kind is `tool-call`)."""

    def apply(self, part: ModelResponsePart) -> ToolCallPart | NativeToolCallPart:
        """The tool call (a `ToolCallPart` or `NativeToolCallPart`) with this delta applied.

        Raises:
            ValueError: `part` is not a tool call.
            UnexpectedModelBehavior: JSON text is applied to dict arguments, or a dict to JSON text.
        """
        if not isinstance(part, ToolCallPart | NativeToolCallPart):
            raise ValueError(f'Cannot apply a ToolCallPartDelta to {type(part).__name__}')
        args = part.args
        if isinstance(self.args_delta, str):
            if isinstance(args, dict):
                raise UnexpectedModelBehavior(
                    f'Cannot apply JSON text to the dict arguments of tool {part.tool_name!r}'
                )
            args = (args or '') + self.args_delta
        elif isinstance(self.args_delta, dict):
            if isinstance(args, str):
                raise UnexpectedModelBehavior(f'Cannot apply a dict to the JSON arguments of tool {part.tool_name!r}')
            args = {**(args or {}), **self.args_delta}
        return replace(
            part,
            tool_name=part.tool_name + (self.tool_name_delta or ''),
            args=args,
            tool_call_id=self.tool_call_id or part.tool_call_id,
            provider_name=self.provider_name or part.provider_name,
            provider_details={**(part.provider_details or {}), **(self.provider_details or {})} or None,
        )

    __repr__ = _repr


ModelResponsePartDelta = Annotated[
    TextPartDelta | ThinkingPartDelta | ToolCallPartDelta | SpeechPartDelta, pydantic.Discriminator('part_delta_kind')
]
"""A delta of any response part."""


@dataclass(repr=False, kw_only=True)
class PartStartEvent:
    """A new part of the response starts (with its first content)."""

    index: int
    """The part's index in the response."""
    part: ModelResponsePart
    """The part as it starts; later `PartDeltaEvent`s extend it."""
    previous_part_kind: PartKind | None = None
    """The kind of the part before it, if any."""
    event_kind: Literal['part_start'] = 'part_start'
    """Tag of this event kind."""

    __repr__ = _repr


@dataclass(repr=False, kw_only=True)
class PartDeltaEvent:
    """More content for the part at `index`."""

    index: int
    """The part's index in the response."""
    delta: ModelResponsePartDelta
    """What to apply to the part."""
    event_kind: Literal['part_delta'] = 'part_delta'
    """Tag of this event kind."""

    __repr__ = _repr


@dataclass(repr=False, kw_only=True)
class PartEndEvent:
    """The part at `index` is complete."""

    index: int
    """The part's index in the response."""
    part: ModelResponsePart
    """The complete part."""
    next_part_kind: PartKind | None = None
    """The kind of the part after it, if any."""
    event_kind: Literal['part_end'] = 'part_end'
    """Tag of this event kind."""

    __repr__ = _repr


@dataclass(repr=False, kw_only=True)
class FinalResultEvent:
    """The response being streamed holds a candidate for the final result: output text, or an output tool call.

    In Edgewise the run goes on if tool calls follow in the same response (see the streaming guide).
    """

    tool_name: str | None
    """The output tool called, or `None` for text output."""
    tool_call_id: str | None
    """The id of that output tool call."""
    event_kind: Literal['final_result'] = 'final_result'
    """Tag of this event kind."""

    __repr__ = _repr


ModelResponseStreamEvent = Annotated[
    PartStartEvent | PartDeltaEvent | PartEndEvent | FinalResultEvent, pydantic.Discriminator('event_kind')
]
"""An event of a streamed model response."""


@dataclass(repr=False)
class ToolCallEvent:
    """A tool is about to be called: the base of `FunctionToolCallEvent` and `OutputToolCallEvent`, to match both."""

    part: ToolCallPart
    """The tool call."""
    _: KW_ONLY
    args_valid: bool | None = None
    """Whether the arguments validated (`None`: not checked before the call)."""

    @property
    def tool_call_id(self) -> str:
        """The id of the call, shared with its result event."""
        return self.part.tool_call_id

    __repr__ = _repr


@dataclass(repr=False)
class FunctionToolCallEvent(ToolCallEvent):
    """A function tool is about to be called."""

    event_kind: Literal['function_tool_call'] = 'function_tool_call'
    """Tag of this event kind."""


@dataclass(repr=False)
class OutputToolCallEvent(ToolCallEvent):
    """An output tool call is about to be processed."""

    event_kind: Literal['output_tool_call'] = 'output_tool_call'
    """Tag of this event kind."""


@dataclass(repr=False)
class ToolResultEvent:
    """A tool call has finished: the base of `FunctionToolResultEvent` and `OutputToolResultEvent`, to match both."""

    part: ToolReturnPart | RetryPromptPart
    """The part sent back to the model for the call."""

    @property
    def tool_call_id(self) -> str:
        """The id of the call, shared with its call event."""
        return self.part.tool_call_id

    __repr__ = _repr


@dataclass(repr=False, init=False)
class FunctionToolResultEvent(ToolResultEvent):
    """A function tool call has finished (or was skipped, or failed and is retried)."""

    _: KW_ONLY
    content: str | None = None
    """Extra user content sent after the result (unused by function tools here)."""
    event_kind: Literal['function_tool_result'] = 'function_tool_result'
    """Tag of this event kind."""

    def __init__(
        self,
        part: ToolReturnPart | RetryPromptPart | None = None,
        *,
        content: str | None = None,
        event_kind: Literal['function_tool_result'] = 'function_tool_result',
        result: ToolReturnPart | RetryPromptPart | None = None,
    ) -> None:
        if result is not None:
            if part is not None:
                raise TypeError('FunctionToolResultEvent: pass either `part` or `result` (deprecated alias), not both')
            warnings.warn(
                'Passing `result=...` to `FunctionToolResultEvent` is deprecated, use `part=...` instead.',
                PydanticAIDeprecationWarning,
                stacklevel=2,
            )
            part = result
        if part is None:
            raise TypeError("FunctionToolResultEvent: missing required argument 'part'")
        self.part = part
        self.content = content
        self.event_kind = event_kind

    @property
    @deprecated('`result` is deprecated, use `part` instead.')
    def result(self) -> ToolReturnPart | RetryPromptPart:
        """Deprecated alias of `part`."""
        return self.part


@dataclass(repr=False)
class OutputToolResultEvent(ToolResultEvent):
    """An output tool call has been processed."""

    _: KW_ONLY
    event_kind: Literal['output_tool_result'] = 'output_tool_result'
    """Tag of this event kind."""


@deprecated(
    '`BuiltinToolCallEvent` is deprecated, look for `PartStartEvent` and `PartDeltaEvent` with `NativeToolCallPart` '
    'instead.'
)
@dataclass(repr=False)
class BuiltinToolCallEvent:
    """Deprecated (no run emits it): a call to a tool the provider runs shows as a `PartStartEvent` of a
    `NativeToolCallPart`."""

    part: NativeToolCallPart
    """The call."""
    _: KW_ONLY
    event_kind: Literal['builtin_tool_call'] = 'builtin_tool_call'
    """Tag of this event kind."""

    __repr__ = _repr


@deprecated(
    '`BuiltinToolResultEvent` is deprecated, look for `PartStartEvent` and `PartDeltaEvent` with '
    '`NativeToolReturnPart` instead.'
)
@dataclass(repr=False)
class BuiltinToolResultEvent:
    """Deprecated (no run emits it): the result of a tool the provider runs shows as a `PartStartEvent` of a
    `NativeToolReturnPart`."""

    result: NativeToolReturnPart
    """The result."""
    _: KW_ONLY
    event_kind: Literal['builtin_tool_result'] = 'builtin_tool_result'
    """Tag of this event kind."""

    __repr__ = _repr


@dataclass(repr=False)
class DeferredToolRequestsEvent:
    """Tool calls of the response wait for approval or for a result from outside the run: the batch, given once
    after their `FunctionToolCallEvent`s and before any `HandleDeferredToolCalls` handler answers them (the calls
    no handler answers end the run as its `DeferredToolRequests` output)."""

    requests: DeferredToolRequests
    """The calls waiting: external ones and ones needing approval, with their metadata."""
    _: KW_ONLY
    event_kind: Literal['deferred_tool_requests'] = 'deferred_tool_requests'
    """Tag of this event kind."""

    __repr__ = _repr


@dataclass(repr=False)
class DeferredToolResultsEvent:
    """A `HandleDeferredToolCalls` handler answered deferred calls inside the run: its answers, given before the
    answered calls run (each then gives its `FunctionToolResultEvent`). Not given for the `deferred_tool_results`
    a caller passes to a new run."""

    results: DeferredToolResults
    """The handler's answers, by tool call id."""
    _: KW_ONLY
    event_kind: Literal['deferred_tool_results'] = 'deferred_tool_results'
    """Tag of this event kind."""

    __repr__ = _repr


@dataclass(repr=False, kw_only=True)
class ToolAvailabilityDeltaEvent:
    """Tools became available to the model mid-run: the `ToolAvailabilityDeltaPart` recorded in the history (after
    the results of the response's tool calls), given after the `FunctionToolResultEvent`s. It names only the tools
    new to the run (a `ToolReturn.tools` naming tools revealed before gives no event)."""

    part: ToolAvailabilityDeltaPart
    """The part recorded in the history."""
    event_kind: Literal['tool_availability_delta'] = 'tool_availability_delta'
    """Tag of this event kind."""

    __repr__ = _repr


@dataclass(repr=False, kw_only=True)
class CapabilityLoadDeltaEvent:
    """On-demand capabilities were loaded without a `load_capability` call: the `CapabilityLoadDeltaPart` recorded in
    the history, given so that a reader rebuilding the history from the stream keeps it."""

    part: CapabilityLoadDeltaPart
    """The part recorded in the history."""
    event_kind: Literal['capability_load_delta'] = 'capability_load_delta'
    """Tag of this event kind."""

    __repr__ = _repr


@dataclass(repr=False, kw_only=True)
class ModelSettingsDeltaEvent:
    """The recorded model settings changed: the `ModelSettingsDeltaPart` recorded in the history (on the request
    that sends the change), given before the model's response."""

    part: ModelSettingsDeltaPart
    """The part recorded in the history."""
    event_kind: Literal['model_settings_delta'] = 'model_settings_delta'
    """Tag of this event kind."""

    __repr__ = _repr


@dataclass(repr=False, kw_only=True)
class EnqueuedMessagesEvent:
    """Messages queued with `enqueue` (`RunContext.enqueue`, `AgentRun.enqueue`) joined the run's history: one event
    per `enqueue` call, given by the model request node that sends them, before the model's response."""

    enqueue_id: str
    """The id the `enqueue` call returned."""
    messages: tuple[ModelMessage, ...]
    """The messages delivered: the objects of the history, with their timestamp, run id and conversation id set."""
    event_kind: Literal['enqueued_messages'] = 'enqueued_messages'
    """Tag of this event kind."""

    __repr__ = _repr


HandleResponseEvent = Annotated[
    FunctionToolCallEvent
    | FunctionToolResultEvent
    | OutputToolCallEvent
    | OutputToolResultEvent
    | DeferredToolRequestsEvent
    | DeferredToolResultsEvent
    | ToolAvailabilityDeltaEvent
    | CapabilityLoadDeltaEvent
    | ModelSettingsDeltaEvent
    | BuiltinToolCallEvent  # pyright: ignore[reportDeprecated]
    | BuiltinToolResultEvent,  # pyright: ignore[reportDeprecated]
    pydantic.Discriminator('event_kind'),
]
"""An event of the handling of a model response (its tool calls)."""


@dataclass(repr=False)
class RealtimeSessionErrorEvent:
    """An error the provider reported in a realtime (speech) session.

    Edgewise does not run realtime sessions; the event is part of the stream vocabulary so that events recorded
    by one (pydantic-ai 2.x's) load and serialize.
    """

    message: str
    """What went wrong, for people."""
    _: KW_ONLY
    type: str | None = None
    """The provider's category of the error (`invalid_request_error`, `server_error`, ...)."""
    code: str | None = None
    """The provider's error code, if any."""
    recoverable: bool = True
    """Whether the session can go on (an error of the protocol) or not (a dropped connection)."""
    event_kind: Literal['realtime_session_error'] = 'realtime_session_error'
    """Tag of this event kind."""

    __repr__ = _repr


AgentStreamEvent = Annotated[
    ModelResponseStreamEvent
    | EnqueuedMessagesEvent
    | HandleResponseEvent
    | RealtimeSessionErrorEvent
    | CustomEvent
    | CapabilityEvent,
    pydantic.Discriminator('event_kind'),
]
"""Any event of an agent run's stream."""

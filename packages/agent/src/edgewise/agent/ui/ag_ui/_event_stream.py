"""`AGUIEventStream`: an agent run's events as AG-UI events."""

from __future__ import annotations as _annotations

import json
import time
from collections.abc import AsyncIterator
from dataclasses import KW_ONLY, dataclass, field
from typing import Any
from uuid import uuid4

import pydantic_core

from ..._tools.mcp_apps import MCP_APPS_UI_TYPE, mcp_app_payload, mcp_app_record
from ...exceptions import RunCancelled
from ...messages import (
    CustomEvent,
    FunctionToolResultEvent,
    NativeToolCallPart,
    NativeToolReturnPart,
    OutputToolResultEvent,
    RetryPromptPart,
    TextPart,
    TextPartDelta,
    ThinkingPart,
    ThinkingPartDelta,
    ToolCallPart,
    ToolCallPartDelta,
    ToolReturnPart,
)
from ...output import OutputDataT
from ...tools import AgentDepsT, DeferredToolRequests
from .._event_stream import SSE_CONTENT_TYPE, NativeEvent, UIEventStream
from ._interrupts import approval_interrupt
from ._sdk import DEFAULT_AG_UI_VERSION, core, encoder, parse_ag_ui_version

__all__ = ('NATIVE_TOOL_CALL_PREFIX', 'AGUIEventStream', 'tool_return_text')

NATIVE_TOOL_CALL_PREFIX = 'pyd_ai_builtin'
"""The id of a native tool's call on the wire: this, the provider's name and the call's id, joined by `|`."""


def tool_return_text(part: ToolReturnPart | NativeToolReturnPart) -> str:
    """A tool's result as the text of a `TOOL_CALL_RESULT` (JSON unless it is a string)."""
    content = part.content
    if isinstance(content, str):
        return content
    return pydantic_core.to_json(content, bytes_mode='base64').decode()


_ACTIVITY_EVENTS_VERSION = (0, 1, 19)
"""The first AG-UI version with activity events (an MCP App's record is sent as one)."""


def _now() -> int:
    return int(time.time() * 1000)


@dataclass
class AGUIEventStream(UIEventStream[Any, Any, AgentDepsT, OutputDataT]):
    """An agent run's events as AG-UI events: `RUN_STARTED`, text, reasoning and tool call events, then
    `RUN_FINISHED` (with an interrupt per tool call waiting for approval) or `RUN_ERROR`."""

    ag_ui_version: str = DEFAULT_AG_UI_VERSION
    """The AG-UI version of the client."""
    _: KW_ONLY
    thread_id: str = field(default_factory=lambda: str(uuid4()))
    """The thread's id (the run input's, when there is one)."""
    run_id: str = field(default_factory=lambda: str(uuid4()))
    """The protocol's id of the run (the run input's, when there is one)."""

    _native_ids: dict[str, str] = field(default_factory=dict, init=False, repr=False)
    _failed: bool = field(default=False, init=False, repr=False)
    _reasoning_id: str | None = field(default=None, init=False, repr=False)
    _reasoning_text: bool = field(default=False, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.run_input is not None:
            self.thread_id = self.run_input.thread_id
            self.run_id = self.run_input.run_id

    @property
    def content_type(self) -> str:
        """The content type the client accepts (server-sent events by default)."""
        return encoder.EventEncoder(accept=self.accept or SSE_CONTENT_TYPE).get_content_type()

    def encode_event(self, event: Any) -> str:
        """One event, encoded as the client accepts."""
        return encoder.EventEncoder(accept=self.accept or SSE_CONTENT_TYPE).encode(event)

    async def handle_event(self, event: NativeEvent) -> AsyncIterator[Any]:
        """The AG-UI events of one run event, each stamped with the time."""
        async for out in super().handle_event(event):
            if out.timestamp is None:
                out.timestamp = _now()
            yield out

    async def before_stream(self) -> AsyncIterator[Any]:
        """`RUN_STARTED`."""
        yield core.RunStartedEvent(thread_id=self.thread_id, run_id=self.run_id, timestamp=_now())

    async def before_response(self) -> AsyncIterator[Any]:
        """A new message id for each model response."""
        self.new_message_id()
        return
        yield  # an async generator that yields nothing

    async def after_stream(self) -> AsyncIterator[Any]:
        """`RUN_FINISHED`, unless the run failed."""
        if self._failed:
            return
        output = self._result.output if self._result is not None else None
        outcome: Any = None  # a plain success says nothing more, as before AG-UI had outcomes
        if isinstance(output, DeferredToolRequests) and output.approvals:
            interrupts = [approval_interrupt(call, output.metadata) for call in output.approvals]
            outcome = core.RunFinishedInterruptOutcome(interrupts=interrupts)
        yield core.RunFinishedEvent(thread_id=self.thread_id, run_id=self.run_id, outcome=outcome, timestamp=_now())

    async def on_error(self, error: Exception) -> AsyncIterator[Any]:
        """`RUN_ERROR`."""
        self._failed = True
        yield core.RunErrorEvent(message=str(error), timestamp=_now())

    async def on_cancelled(self, cancelled: RunCancelled) -> AsyncIterator[Any]:
        """Nothing: AG-UI has no cancelled outcome, so a cancelled run ends with a plain `RUN_FINISHED`."""
        return
        yield  # an async generator that yields nothing

    async def handle_text_start(self, part: TextPart, follows_text: bool = False) -> AsyncIterator[Any]:
        """`TEXT_MESSAGE_START` (unless it goes on the text before) and the first content."""
        if not follows_text:
            yield core.TextMessageStartEvent(message_id=self.new_message_id(), role='assistant')
        if part.content:
            yield core.TextMessageContentEvent(message_id=self.message_id, delta=part.content)

    async def handle_text_delta(self, delta: TextPartDelta) -> AsyncIterator[Any]:
        """`TEXT_MESSAGE_CONTENT`."""
        if delta.content_delta:
            yield core.TextMessageContentEvent(message_id=self.message_id, delta=delta.content_delta)

    async def handle_text_end(self, part: TextPart, followed_by_text: bool = False) -> AsyncIterator[Any]:
        """`TEXT_MESSAGE_END` (unless more text follows)."""
        if not followed_by_text:
            yield core.TextMessageEndEvent(message_id=self.message_id)

    async def handle_thinking_start(self, part: ThinkingPart, follows_thinking: bool = False) -> AsyncIterator[Any]:
        """`REASONING_START` (and the message, once there is content)."""
        self._reasoning_id = str(uuid4())
        yield core.ReasoningStartEvent(message_id=self._reasoning_id)
        if part.content:
            yield core.ReasoningMessageStartEvent(message_id=self._reasoning_id, role='reasoning')
            yield core.ReasoningMessageContentEvent(message_id=self._reasoning_id, delta=part.content)
        self._reasoning_text = bool(part.content)

    async def handle_thinking_delta(self, delta: ThinkingPartDelta) -> AsyncIterator[Any]:
        """`REASONING_MESSAGE_CONTENT`."""
        if not delta.content_delta or self._reasoning_id is None:
            return
        if not self._reasoning_text:
            self._reasoning_text = True
            yield core.ReasoningMessageStartEvent(message_id=self._reasoning_id, role='reasoning')
        yield core.ReasoningMessageContentEvent(message_id=self._reasoning_id, delta=delta.content_delta)

    async def handle_thinking_end(self, part: ThinkingPart, followed_by_thinking: bool = False) -> AsyncIterator[Any]:
        """`REASONING_MESSAGE_END`, the signature as `REASONING_ENCRYPTED_VALUE`, `REASONING_END`."""
        if self._reasoning_id is None:
            return
        if self._reasoning_text:
            yield core.ReasoningMessageEndEvent(message_id=self._reasoning_id)
        kept = {k: v for k, v in (('id', part.id), ('signature', part.signature)) if v is not None}
        kept.update({k: v for k, v in (('provider_name', part.provider_name),) if v is not None})
        if kept:
            yield core.ReasoningEncryptedValueEvent(
                subtype='message', entity_id=self._reasoning_id, encrypted_value=json.dumps(kept)
            )
        yield core.ReasoningEndEvent(message_id=self._reasoning_id)
        self._reasoning_id = None

    async def _call_start(self, part: ToolCallPart | NativeToolCallPart, call_id: str) -> AsyncIterator[Any]:
        yield core.ToolCallStartEvent(
            tool_call_id=call_id, tool_call_name=part.tool_name, parent_message_id=self.message_id
        )
        if part.args:
            text = part.args if isinstance(part.args, str) else part.args_as_json_str()
            yield core.ToolCallArgsEvent(tool_call_id=call_id, delta=text)

    async def handle_tool_call_start(self, part: ToolCallPart) -> AsyncIterator[Any]:
        """`TOOL_CALL_START` and the first arguments."""
        async for out in self._call_start(part, part.tool_call_id):
            yield out

    async def handle_builtin_tool_call_start(self, part: NativeToolCallPart) -> AsyncIterator[Any]:
        """`TOOL_CALL_START` of a native tool, under a prefixed id."""
        wire_id = '|'.join((NATIVE_TOOL_CALL_PREFIX, part.provider_name or '', part.tool_call_id))
        self._native_ids[part.tool_call_id] = wire_id
        async for out in self._call_start(part, wire_id):
            yield out

    async def handle_tool_call_delta(self, delta: ToolCallPartDelta) -> AsyncIterator[Any]:
        """`TOOL_CALL_ARGS`."""
        if delta.tool_call_id is None or delta.args_delta is None:
            return
        call_id = self._native_ids.get(delta.tool_call_id, delta.tool_call_id)
        args = delta.args_delta
        text = args if isinstance(args, str) else pydantic_core.to_json(args).decode()
        yield core.ToolCallArgsEvent(tool_call_id=call_id, delta=text)

    async def handle_tool_call_end(self, part: ToolCallPart) -> AsyncIterator[Any]:
        """`TOOL_CALL_END`."""
        yield core.ToolCallEndEvent(tool_call_id=part.tool_call_id)

    async def handle_builtin_tool_call_end(self, part: NativeToolCallPart) -> AsyncIterator[Any]:
        """`TOOL_CALL_END` of a native tool."""
        yield core.ToolCallEndEvent(tool_call_id=self._native_ids.get(part.tool_call_id, part.tool_call_id))

    async def handle_builtin_tool_return(self, part: NativeToolReturnPart) -> AsyncIterator[Any]:
        """`TOOL_CALL_RESULT` of a native tool."""
        call_id = self._native_ids.get(part.tool_call_id, part.tool_call_id)
        yield core.ToolCallResultEvent(
            message_id=str(uuid4()), tool_call_id=call_id, content=tool_return_text(part), role='tool'
        )

    async def handle_function_tool_result(self, event: FunctionToolResultEvent) -> AsyncIterator[Any]:
        """`TOOL_CALL_RESULT` (a retry prompt's text for a failed call), then any AG-UI events the tool returned
        as its metadata."""
        async for out in self._tool_result(event.part):
            yield out

    async def handle_output_tool_result(self, event: OutputToolResultEvent) -> AsyncIterator[Any]:
        """As `handle_function_tool_result`."""
        async for out in self._tool_result(event.part):
            yield out

    async def handle_custom_event(self, event: CustomEvent) -> AsyncIterator[Any]:
        """An AG-UI `CustomEvent` named as the event, whose value is its payload (an AG-UI event given as the payload
        is sent as it is)."""
        payload = event.to_payload()
        yield payload if isinstance(payload, core.BaseEvent) else core.CustomEvent(name=event.name, value=payload)

    async def _tool_result(self, part: ToolReturnPart | RetryPromptPart) -> AsyncIterator[Any]:
        text = part.model_response() if isinstance(part, RetryPromptPart) else tool_return_text(part)
        yield core.ToolCallResultEvent(
            message_id=self.new_message_id(), tool_call_id=part.tool_call_id, content=text, role='tool'
        )
        if isinstance(part, ToolReturnPart):
            app = mcp_app_record(part.metadata)
            if app is not None and parse_ag_ui_version(self.ag_ui_version) >= _ACTIVITY_EVENTS_VERSION:
                yield core.ActivitySnapshotEvent(
                    message_id=str(uuid4()), activity_type=MCP_APPS_UI_TYPE, content=mcp_app_payload(app)
                )
            extra = part.metadata
            items = extra if isinstance(extra, list | tuple) else [extra]
            for item in items:
                if isinstance(item, core.BaseEvent):
                    yield item

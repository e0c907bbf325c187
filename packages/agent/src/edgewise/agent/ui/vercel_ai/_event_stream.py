"""`VercelAIEventStream`: an agent run's events as the Vercel AI SDK's UI message stream."""

from __future__ import annotations as _annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Literal

import pydantic_core

from ...exceptions import RunCancelled
from ...messages import (
    CustomEvent,
    FilePart,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    NativeToolCallPart,
    NativeToolReturnPart,
    OutputToolCallEvent,
    OutputToolResultEvent,
    RetryPromptPart,
    TextPart,
    TextPartDelta,
    ThinkingPart,
    ThinkingPartDelta,
    ToolCallEvent,
    ToolCallPart,
    ToolCallPartDelta,
    ToolReturnPart,
)
from ...output import OutputDataT
from ...result import AgentRunResultEvent
from ...tools import AgentDepsT, DeferredToolRequests
from .._event_stream import UIEventStream
from ._metadata import _CARRIERS, dump_message_metadata, metadata_chunks, part_metadata, tool_output
from .request_types import RequestData
from .response_types import (
    AbortChunk,
    BaseChunk,
    DataChunk,
    DoneChunk,
    ErrorChunk,
    FileChunk,
    FinishChunk,
    FinishReason,
    FinishStepChunk,
    MessageMetadataChunk,
    ReasoningDeltaChunk,
    ReasoningEndChunk,
    ReasoningStartChunk,
    StartChunk,
    StartStepChunk,
    TextDeltaChunk,
    TextEndChunk,
    TextStartChunk,
    ToolApprovalRequestChunk,
    ToolInputAvailableChunk,
    ToolInputDeltaChunk,
    ToolInputErrorChunk,
    ToolInputStartChunk,
    ToolOutputAvailableChunk,
    ToolOutputDeniedChunk,
    ToolOutputErrorChunk,
)

__all__ = ('VERCEL_AI_DSP_HEADERS', 'VercelAIEventStream')

VERCEL_AI_DSP_HEADERS = {'x-vercel-ai-ui-message-stream': 'v1'}
"""The header that tells an AI SDK front end the response is a UI message stream."""

_FINISH_REASONS: dict[str, FinishReason] = {
    'stop': 'stop',
    'length': 'length',
    'content_filter': 'content-filter',
    'tool_call': 'tool-calls',
    'error': 'error',
}


def _call_metadata(part: ToolCallPart | NativeToolCallPart) -> dict[str, Any] | None:
    return part_metadata(
        id=part.id, provider_name=part.provider_name, provider_details=part.provider_details, tool_kind=part.tool_kind
    )


def _input_available(part: ToolCallPart | NativeToolCallPart, provider_executed: bool | None = None) -> BaseChunk:
    return ToolInputAvailableChunk(
        tool_call_id=part.tool_call_id,
        tool_name=part.tool_name,
        input=part.args_as_dict(),
        provider_executed=provider_executed,
        provider_metadata=_call_metadata(part),
    )


@dataclass
class VercelAIEventStream(UIEventStream[RequestData, BaseChunk, AgentDepsT, OutputDataT]):
    """An agent run's events as the chunks of the Vercel AI SDK's UI message stream (server-sent events).

    A message is `start`, then per model response a step (`start-step` ... `finish-step`) of text, reasoning
    and tool chunks, then `message-metadata`, `finish` and `[DONE]`. With `sdk_version=6` (or 7), a run that
    ends waiting for approvals sends a `tool-approval-request` per call, and denied calls `tool-output-denied`.
    """

    _: KW_ONLY
    sdk_version: Literal[5, 6, 7] = 5
    """The AI SDK major version of the front end (6 and 7 send the same chunks)."""
    server_message_id: str | None = None
    """The id of the assistant's message, sent in `start` if set."""

    _step_started: bool = field(default=False, init=False, repr=False)
    _finish_reason: FinishReason = field(default=None, init=False, repr=False)
    _streamed_calls: dict[str, ToolCallPart] = field(default_factory=dict, init=False, repr=False)
    _invalid_calls: dict[str, ToolCallPart] = field(default_factory=dict, init=False, repr=False)

    @property
    def response_headers(self) -> Mapping[str, str] | None:
        """The UI message stream's header."""
        return VERCEL_AI_DSP_HEADERS

    def encode_event(self, event: BaseChunk) -> str:
        """One server-sent event: `data: <chunk>`."""
        return f'data: {event.encode(self.sdk_version)}\n\n'

    async def before_stream(self) -> AsyncIterator[BaseChunk]:
        """`start`."""
        yield StartChunk(message_id=self.server_message_id)

    async def before_response(self) -> AsyncIterator[BaseChunk]:
        """A new step for each model response."""
        if self._step_started:
            yield FinishStepChunk()
        self._step_started = True
        yield StartStepChunk()

    async def after_stream(self) -> AsyncIterator[BaseChunk]:
        """`finish-step`, `finish`, `[DONE]`."""
        yield FinishStepChunk()
        yield FinishChunk(finish_reason=self._finish_reason)
        yield DoneChunk()

    async def on_error(self, error: Exception) -> AsyncIterator[BaseChunk]:
        """The arguments of calls left streaming, then `error`."""
        for part in self._streamed_calls.values():
            yield _input_available(part)
        self._streamed_calls.clear()
        self._finish_reason = 'error'
        yield ErrorChunk(error_text=str(error))

    async def on_cancelled(self, cancelled: RunCancelled) -> AsyncIterator[BaseChunk]:
        """An `abort` chunk: the run was cancelled."""
        yield AbortChunk(reason='The agent run was cancelled.')

    async def handle_custom_event(self, event: CustomEvent) -> AsyncIterator[BaseChunk]:
        """A `data-<name>` chunk holding the event's payload (a data chunk given as the payload is sent as it is)."""
        payload = event.to_payload()
        yield payload if isinstance(payload, _CARRIERS) else DataChunk(type=f'data-{event.name}', data=payload)

    async def handle_run_result(self, event: AgentRunResultEvent[Any]) -> AsyncIterator[BaseChunk]:
        """The message's metadata, and the approvals the run waits for (AI SDK 6)."""
        for part in self._streamed_calls.values():  # calls deferred before they were announced
            yield _input_available(part)
        self._streamed_calls.clear()
        reason = event.result.response.finish_reason
        if reason:
            self._finish_reason = _FINISH_REASONS.get(reason, 'other')
        yield MessageMetadataChunk(message_metadata=dump_message_metadata(event.result.response))
        output = event.result.output
        if self.sdk_version >= 6 and isinstance(output, DeferredToolRequests):
            for call in output.approvals:
                yield ToolApprovalRequestChunk(approval_id=call.tool_call_id, tool_call_id=call.tool_call_id)

    async def handle_text_start(self, part: TextPart, follows_text: bool = False) -> AsyncIterator[BaseChunk]:
        """`text-start` (unless it goes on the text before) and its first text."""
        metadata = part_metadata(id=part.id, provider_name=part.provider_name, provider_details=part.provider_details)
        if not follows_text:
            yield TextStartChunk(id=self.new_message_id(), provider_metadata=metadata)
        if part.content:
            yield TextDeltaChunk(id=self.message_id, delta=part.content, provider_metadata=metadata)

    async def handle_text_delta(self, delta: TextPartDelta) -> AsyncIterator[BaseChunk]:
        """`text-delta`."""
        if delta.content_delta:
            metadata = part_metadata(provider_name=delta.provider_name, provider_details=delta.provider_details)
            yield TextDeltaChunk(id=self.message_id, delta=delta.content_delta, provider_metadata=metadata)

    async def handle_text_end(self, part: TextPart, followed_by_text: bool = False) -> AsyncIterator[BaseChunk]:
        """`text-end` (unless more text follows)."""
        if not followed_by_text:
            metadata = part_metadata(
                id=part.id, provider_name=part.provider_name, provider_details=part.provider_details
            )
            yield TextEndChunk(id=self.message_id, provider_metadata=metadata)

    @staticmethod
    def _thinking_metadata(part: ThinkingPart) -> dict[str, Any] | None:
        return part_metadata(
            id=part.id,
            signature=part.signature,
            provider_name=part.provider_name,
            provider_details=part.provider_details,
        )

    async def handle_thinking_start(
        self, part: ThinkingPart, follows_thinking: bool = False
    ) -> AsyncIterator[BaseChunk]:
        """`reasoning-start` and its first text."""
        metadata = self._thinking_metadata(part)
        yield ReasoningStartChunk(id=self.new_message_id(), provider_metadata=metadata)
        if part.content:
            yield ReasoningDeltaChunk(id=self.message_id, delta=part.content, provider_metadata=metadata)

    async def handle_thinking_delta(self, delta: ThinkingPartDelta) -> AsyncIterator[BaseChunk]:
        """`reasoning-delta`."""
        if delta.content_delta:
            metadata = part_metadata(
                provider_name=delta.provider_name,
                signature=delta.signature_delta,
                provider_details=None if callable(delta.provider_details) else delta.provider_details,
            )
            yield ReasoningDeltaChunk(id=self.message_id, delta=delta.content_delta, provider_metadata=metadata)

    async def handle_thinking_end(
        self, part: ThinkingPart, followed_by_thinking: bool = False
    ) -> AsyncIterator[BaseChunk]:
        """`reasoning-end`."""
        yield ReasoningEndChunk(id=self.message_id, provider_metadata=self._thinking_metadata(part))

    async def handle_tool_call_start(self, part: ToolCallPart) -> AsyncIterator[BaseChunk]:
        """`tool-input-start` and the first arguments."""
        async for chunk in self._call_start(part, None):
            yield chunk

    async def handle_builtin_tool_call_start(self, part: NativeToolCallPart) -> AsyncIterator[BaseChunk]:
        """`tool-input-start` of a native tool (run by the provider)."""
        async for chunk in self._call_start(part, True):
            yield chunk

    async def _call_start(
        self, part: ToolCallPart | NativeToolCallPart, provider_executed: bool | None
    ) -> AsyncIterator[BaseChunk]:
        yield ToolInputStartChunk(
            tool_call_id=part.tool_call_id,
            tool_name=part.tool_name,
            provider_executed=provider_executed,
            provider_metadata=_call_metadata(part),
        )
        if part.args:
            # Streamed arguments may be a fragment of JSON: sent as they are, the deltas complete them.
            text = part.args if isinstance(part.args, str) else part.args_as_json_str()
            yield ToolInputDeltaChunk(tool_call_id=part.tool_call_id, input_text_delta=text)

    async def handle_tool_call_delta(self, delta: ToolCallPartDelta) -> AsyncIterator[BaseChunk]:
        """`tool-input-delta`."""
        if delta.tool_call_id is None or delta.args_delta is None:
            return
        args = delta.args_delta
        text = args if isinstance(args, str) else pydantic_core.to_json(args).decode()
        yield ToolInputDeltaChunk(tool_call_id=delta.tool_call_id, input_text_delta=text)

    async def handle_tool_call_end(self, part: ToolCallPart) -> AsyncIterator[BaseChunk]:
        """Nothing yet: `tool-input-available` waits for the call's validation (its call event)."""
        self._streamed_calls[part.tool_call_id] = part
        return
        yield  # an async generator that yields nothing

    async def handle_builtin_tool_call_end(self, part: NativeToolCallPart) -> AsyncIterator[BaseChunk]:
        """`tool-input-available` of a native tool."""
        yield _input_available(part, provider_executed=True)

    async def handle_function_tool_call(self, event: FunctionToolCallEvent) -> AsyncIterator[BaseChunk]:
        """`tool-input-available`, or (AI SDK 6) nothing yet for invalid arguments."""
        async for chunk in self._call_event(event):
            yield chunk

    async def handle_output_tool_call(self, event: OutputToolCallEvent) -> AsyncIterator[BaseChunk]:
        """As `handle_function_tool_call`."""
        async for chunk in self._call_event(event):
            yield chunk

    async def _call_event(self, event: ToolCallEvent) -> AsyncIterator[BaseChunk]:
        part = event.part
        self._streamed_calls.pop(part.tool_call_id, None)
        if event.args_valid is None:  # a call of an earlier run, answered now: announced back then
            return
        if event.args_valid is False and self.sdk_version >= 6:
            self._invalid_calls[part.tool_call_id] = part  # `tool-input-error` with its retry prompt
            return
        yield _input_available(part)

    async def handle_builtin_tool_return(self, part: NativeToolReturnPart) -> AsyncIterator[BaseChunk]:
        """The result of a native tool."""
        if part.outcome == 'denied' and self.sdk_version >= 6:
            yield ToolOutputDeniedChunk(tool_call_id=part.tool_call_id)
        elif part.outcome == 'failed':
            yield ToolOutputErrorChunk(tool_call_id=part.tool_call_id, error_text=part.model_response_str())
        else:
            yield ToolOutputAvailableChunk(
                tool_call_id=part.tool_call_id, output=tool_output(part), provider_executed=True
            )

    async def handle_file(self, part: FilePart) -> AsyncIterator[BaseChunk]:
        """`file`, as a `data:` URL."""
        yield FileChunk(url=part.content.data_uri, media_type=part.content.media_type)

    async def handle_function_tool_result(self, event: FunctionToolResultEvent) -> AsyncIterator[BaseChunk]:
        """The call's result: `tool-output-available`, `-error` or `-denied`, or `tool-input-error`."""
        async for chunk in self._result_chunks(event.part):
            yield chunk

    async def handle_output_tool_result(self, event: OutputToolResultEvent) -> AsyncIterator[BaseChunk]:
        """As `handle_function_tool_result`."""
        async for chunk in self._result_chunks(event.part):
            yield chunk

    async def _result_chunks(self, part: ToolReturnPart | RetryPromptPart) -> AsyncIterator[BaseChunk]:
        call_id = part.tool_call_id
        invalid = self._invalid_calls.pop(call_id, None)
        streamed = self._streamed_calls.pop(call_id, None)
        if invalid is not None and isinstance(part, ToolReturnPart) and part.outcome == 'success':
            # The call ran after all (a resumed step tells `args_valid=False` of calls it then runs).
            streamed, invalid = invalid, None
        if streamed is not None and invalid is None:  # the run failed before the call's event
            yield _input_available(streamed)
        error_text = part.model_response() if isinstance(part, RetryPromptPart) else part.model_response_str()
        if isinstance(part, ToolReturnPart) and part.outcome == 'denied' and self.sdk_version >= 6:
            yield ToolOutputDeniedChunk(tool_call_id=call_id)
        elif invalid is not None:
            yield ToolInputErrorChunk(
                tool_call_id=call_id,
                tool_name=invalid.tool_name,
                input=invalid.args_as_dict(),
                provider_metadata=_call_metadata(invalid),
                error_text=error_text,
            )
        elif isinstance(part, RetryPromptPart) or part.outcome == 'failed':
            yield ToolOutputErrorChunk(tool_call_id=call_id, error_text=error_text)
        else:
            yield ToolOutputAvailableChunk(tool_call_id=call_id, output=tool_output(part))
        if isinstance(part, ToolReturnPart):
            for chunk in metadata_chunks(part):
                yield chunk

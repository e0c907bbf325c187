"""The provider-neutral message model: what an agent sends to a model and what it gets back, and the events
of a streamed run.

A conversation is a list of `ModelMessage`: `ModelRequest`s (prompts, tool returns, retry prompts) and
`ModelResponse`s (text, thinking, tool calls). Field names and the `kind` / `part_kind` / `event_kind` tags
match pydantic-ai 1.x, so histories serialized by one load in the other (`ModelMessagesTypeAdapter`).
The classes are defined in `_messages.model_messages` and `_message_flow.events`; this module is their public home.
"""

from __future__ import annotations as _annotations

import warnings
from typing import TYPE_CHECKING, Any

from ._message_flow.custom_events import (
    CAPABILITY_EVENT_TYPES,
    CUSTOM_EVENT_TYPES,
    CapabilityEvent,
    CustomEvent,
    UnknownCapabilityEvent,
    UnknownCustomEvent,
)
from ._message_flow.events import (
    AgentStreamEvent,
    BuiltinToolCallEvent,
    BuiltinToolResultEvent,
    CapabilityLoadDeltaEvent,
    DeferredToolRequestsEvent,
    DeferredToolResultsEvent,
    EnqueuedMessagesEvent,
    FinalResultEvent,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    HandleResponseEvent,
    ModelResponsePartDelta,
    ModelResponseStreamEvent,
    ModelSettingsDeltaEvent,
    OutputToolCallEvent,
    OutputToolResultEvent,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
    ProviderDetailsDelta,
    RealtimeSessionErrorEvent,
    TextPartDelta,
    ThinkingPartDelta,
    ToolAvailabilityDeltaEvent,
    ToolCallEvent,
    ToolCallPartDelta,
    ToolResultEvent,
)
from ._messages.attempts import ModelRequestAttempt
from ._messages.citations import (
    Citation,
    CitationAnchor,
    CitationSource,
    ContentCitationAnchor,
    DocumentCitationSource,
    MarkerCitationAnchor,
    WebCitationSource,
)
from ._messages.compaction import CompactionPart
from ._messages.content import (
    MULTI_MODAL_CONTENT_TYPES,
    AudioFormat,
    AudioMediaType,
    AudioUrl,
    BinaryAudio,
    BinaryContent,
    BinaryImage,
    CachePoint,
    DocumentFormat,
    DocumentMediaType,
    DocumentUrl,
    FileUrl,
    ForceDownloadMode,
    ImageFormat,
    ImageMediaType,
    ImageUrl,
    MultiModalContent,
    StructuredContent,
    StructuredContentFormat,
    TextContent,
    ToolReturn,
    ToolReturnContent,
    UploadedFile,
    UploadedFileProviderName,
    VideoFormat,
    VideoMediaType,
    VideoUrl,
    is_multi_modal_content,
)
from ._messages.deltas import CapabilityLoadDeltaPart, ModelSettingsDeltaPart
from ._messages.history import narrow_message_parts, post_compaction_window
from ._messages.instructions import (
    AgentInstructionSource,
    CapabilityInstructionSource,
    InstructionBaselinePart,
    InstructionChangePolicy,
    InstructionDeltaPart,
    InstructionDigest,
    InstructionId,
    InstructionSource,
    RunInstructionSource,
    SerializedInstructionId,
    ToolsetInstructionSource,
)
from ._messages.model_messages import (
    INVALID_JSON_KEY,
    RETURN_VALUE_KEY,
    BaseToolCallPart,
    BaseToolReturnPart,
    FilePart,
    FinishReason,
    InstructionPart,
    LoadCapabilityCallPart,
    LoadCapabilityReturnPart,
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelRequestState,
    ModelResponse,
    ModelResponsePart,
    ModelResponseState,
    NativeToolCallPart,
    NativeToolReturnPart,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolAvailabilityDeltaPart,
    ToolCallPart,
    ToolReturnPart,
    ToolSearchArgs,
    ToolSearchCallPart,
    ToolSearchMatch,
    ToolSearchReturnContent,
    ToolSearchReturnPart,
    UserContent,
    UserPromptPart,
    generate_tool_call_id,
    messages_type_adapter,
)
from ._messages.retry_feedback import RetryFeedbackCause, RetryFeedbackPart, RetryInfo, ToolRetryCause
from ._messages.speech import SpeechPart, SpeechPartDelta, SpeechTimestamp, SpeechTimestampGranularity
from ._messages.workspace_refs import Authority, WorkspaceRef
from ._tools.tool_kinds import ToolKind, ToolKindLike, ToolPartKind, parse_tool_kind
from ._warnings import PydanticAIDeprecationWarning

if TYPE_CHECKING:
    from pydantic import TypeAdapter

    from ._messages.sanitize import sanitize_messages

__all__ = (
    # files and other prompt content
    'AudioMediaType',
    'ImageMediaType',
    'DocumentMediaType',
    'VideoMediaType',
    'AudioFormat',
    'ImageFormat',
    'DocumentFormat',
    'VideoFormat',
    'ForceDownloadMode',
    'FileUrl',
    'ImageUrl',
    'AudioUrl',
    'VideoUrl',
    'DocumentUrl',
    'BinaryContent',
    'BinaryImage',
    'BinaryAudio',
    'StructuredContent',
    'Citation',
    'CitationAnchor',
    'CitationSource',
    'ContentCitationAnchor',
    'DocumentCitationSource',
    'MarkerCitationAnchor',
    'WebCitationSource',
    'StructuredContentFormat',
    'TextContent',
    'CachePoint',
    'UploadedFile',
    'UploadedFileProviderName',
    'MultiModalContent',
    'MULTI_MODAL_CONTENT_TYPES',
    'is_multi_modal_content',
    'ToolReturn',
    'ToolReturnContent',
    # parts and messages
    'RETURN_VALUE_KEY',
    'INVALID_JSON_KEY',
    'SystemPromptPart',
    'UserPromptPart',
    'UserContent',
    'BaseToolReturnPart',
    'ToolReturnPart',
    'LoadCapabilityReturnPart',
    'ToolSearchReturnPart',
    'ToolAvailabilityDeltaPart',
    'NativeToolReturnPart',
    'RetryPromptPart',
    'InstructionPart',
    'InstructionChangePolicy',
    'InstructionSource',
    'AgentInstructionSource',
    'ToolsetInstructionSource',
    'CapabilityInstructionSource',
    'RunInstructionSource',
    'InstructionId',
    'SerializedInstructionId',
    'InstructionDeltaPart',
    'InstructionDigest',
    'InstructionBaselinePart',
    'CapabilityLoadDeltaPart',
    'ModelSettingsDeltaPart',
    'ModelRequestPart',
    'ModelRequest',
    'TextPart',
    'ThinkingPart',
    'FilePart',
    'CompactionPart',
    'SpeechPart',
    'SpeechTimestamp',
    'SpeechTimestampGranularity',
    'BaseToolCallPart',
    'ToolCallPart',
    'LoadCapabilityCallPart',
    'ToolSearchCallPart',
    'ToolSearchArgs',
    'ToolSearchMatch',
    'ToolSearchReturnContent',
    'NativeToolCallPart',
    'ModelResponsePart',
    'ModelResponse',
    'ModelRequestAttempt',
    'RetryInfo',
    'RetryFeedbackPart',
    'RetryFeedbackCause',
    'ToolRetryCause',
    'ModelRequestState',
    'ModelResponseState',
    'ModelMessage',
    'FinishReason',
    'ModelMessagesTypeAdapter',
    'generate_tool_call_id',
    'post_compaction_window',
    'narrow_message_parts',
    'sanitize_messages',
    # streaming events
    'TextPartDelta',
    'ThinkingPartDelta',
    'ToolCallPartDelta',
    'SpeechPartDelta',
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
    # events defined by applications and capabilities
    'CustomEvent',
    'UnknownCustomEvent',
    'CapabilityEvent',
    'UnknownCapabilityEvent',
    'CUSTOM_EVENT_TYPES',
    'CAPABILITY_EVENT_TYPES',
    # what a tool is, whatever it is called
    'ToolKind',
    'ToolKindLike',
    'ToolPartKind',
    'parse_tool_kind',
    # workspaces
    'Authority',
    'WorkspaceRef',
)

_RENAMED_PARTS = {'BuiltinToolCallPart': 'NativeToolCallPart', 'BuiltinToolReturnPart': 'NativeToolReturnPart'}


def __getattr__(name: str) -> Any:
    if name in _RENAMED_PARTS:
        new_name = _RENAMED_PARTS[name]
        message = f'`edgewise.agent.messages.{name}` is deprecated, use `edgewise.agent.messages.{new_name}` instead.'
        warnings.warn(message, PydanticAIDeprecationWarning, stacklevel=2)
        return globals()[new_name]
    if name == 'ModelMessagesTypeAdapter':
        return messages_type_adapter()
    if name == 'sanitize_messages':  # (its module loads on first use: the agent itself never sanitizes)
        from ._messages.sanitize import sanitize_messages

        return sanitize_messages
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')


def __dir__() -> list[str]:
    return sorted({*globals(), 'ModelMessagesTypeAdapter', 'sanitize_messages'})


if TYPE_CHECKING:
    ModelMessagesTypeAdapter: TypeAdapter[list[ModelMessage]]
    """Validates and serializes lists of messages (`validate_json`, `dump_json`, `validate_python`)."""

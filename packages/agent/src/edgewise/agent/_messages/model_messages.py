"""The provider-neutral message model: what an agent sends to a model and what it gets back.

A conversation is a list of `ModelMessage`: `ModelRequest`s (prompts, tool returns, retry prompts) and
`ModelResponse`s (text, thinking, tool calls). Field names and the `kind` / `part_kind` tags match
pydantic-ai 1.x, so histories serialized by one load in the other (`ModelMessagesTypeAdapter`).

The public home of these classes is `edgewise.agent.messages`, which re-exports them with the streaming events
(defined above this module, in `_message_flow.events`, since events carry parts).
"""

from __future__ import annotations as _annotations

import contextlib
import warnings
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

import pydantic
import pydantic_core

from .._warnings import PydanticAIDeprecationWarning
from .attempts import ModelRequestAttempt
from .citations import Citation
from .compaction import CompactionPart
from .content import BinaryContent, BinaryImage, CachePoint, FileUrl, TextContent, UploadedFile, UserContent
from .deltas import CapabilityLoadDeltaPart, ModelSettingsDeltaPart
from .instructions import InstructionBaselinePart, InstructionDeltaPart, InstructionPart
from .retry_feedback import RetryFeedbackPart
from .speech import SpeechPart
from .tool_parts import (
    INVALID_JSON_KEY,
    KIND_CALL_PARTS,
    KIND_RETURN_PARTS,
    RETURN_VALUE_KEY,
    TOOL_SEARCH_TOOL_KIND,
    BaseToolCallPart,
    BaseToolReturnPart,
    LoadCapabilityArgs,
    LoadCapabilityCallPart,
    LoadCapabilityReturn,
    LoadCapabilityReturnPart,
    NativeToolCallPart,
    NativeToolReturnPart,
    ToolCallPart,
    ToolReturnPart,
    ToolSearchArgs,
    ToolSearchCallPart,
    ToolSearchMatch,
    ToolSearchReturnContent,
    ToolSearchReturnPart,
    _now_utc,
    _repr,
    generate_tool_call_id,
    narrow_tool_parts,
)
from .usage_counts import RequestUsage
from .workspace_refs import WorkspaceRef

if TYPE_CHECKING:
    from .otel import OtelMessagePart, TraceContentOptions

__all__ = (
    'ModelRequestState',
    'messages_type_adapter',
    'RETURN_VALUE_KEY',
    'INVALID_JSON_KEY',
    'SystemPromptPart',
    'UserPromptPart',
    'UserContent',
    'BaseToolReturnPart',
    'ToolReturnPart',
    'LoadCapabilityArgs',
    'LoadCapabilityReturn',
    'LoadCapabilityReturnPart',
    'ToolSearchArgs',
    'ToolSearchMatch',
    'ToolSearchReturnContent',
    'ToolSearchReturnPart',
    'ToolAvailabilityDeltaPart',
    'TOOL_SEARCH_TOOL_KIND',
    'NativeToolReturnPart',
    'InstructionPart',
    'InstructionDeltaPart',
    'InstructionBaselinePart',
    'CapabilityLoadDeltaPart',
    'ModelSettingsDeltaPart',
    'RetryPromptPart',
    'ModelRequestPart',
    'ModelRequest',
    'TextPart',
    'ThinkingPart',
    'FilePart',
    'BaseToolCallPart',
    'ToolCallPart',
    'LoadCapabilityCallPart',
    'ToolSearchCallPart',
    'NativeToolCallPart',
    'ModelResponsePart',
    'ModelResponse',
    'ModelMessage',
    'FinishReason',
    'generate_tool_call_id',
)


@dataclass(repr=False)
class SystemPromptPart:
    """A system prompt: instructions kept in the message history (unlike `ModelRequest.instructions`)."""

    content: str
    """The prompt's text."""
    _: KW_ONLY
    timestamp: datetime = field(default_factory=_now_utc)
    """When the part was created."""
    dynamic_ref: str | None = None
    """The qualified name of the `dynamic=True` system prompt function that wrote it, if any."""
    context_id: str | None = None
    """The id of the `<pyai:context>` element the model is sent this prompt in (`'system_prompt:<name>'`, set for a
    system prompt registered with `on_change='append'`), or `None` to send the text as it is. The first part of an
    id in a conversation states the prompt; each later one replaces it, and an empty one withdraws it."""
    scope: Literal['conversation', 'request'] = 'conversation'
    """For how many model requests the prompt counts.

    - `'conversation'` (the default; what a history stored without this field loads as): every request from the one
      it is in onwards.
    - `'request'`: only the request it is in (a continuation of that request included). The part stays in the
      history, but later requests leave it out: `Model.prepare_messages` drops it, or, on a profile with
      `supports_request_scoped_system_prompts`, the API stops showing it (Anthropic's `clear_at`). Meant for text
      that is restated with every request, such as what is left of a budget; text that must still hold afterwards
      wants the default.
    """
    part_kind: Literal['system-prompt'] = 'system-prompt'
    """Tag of this part kind in serialized messages."""

    def otel_message_parts(self, settings: TraceContentOptions) -> list[OtelMessagePart]:
        """The prompt as an OpenTelemetry GenAI text part (its text only when `settings` let content be recorded)."""
        return [_otel_text(self.content, settings)]

    def __repr__(self) -> str:
        shown = _repr(self, ('content', 'timestamp', 'dynamic_ref', 'context_id'))
        return shown if self.scope == 'conversation' else f"{shown[:-1]}, scope='request')"


@dataclass(repr=False)
class UserPromptPart:
    """The user's prompt."""

    content: str | Sequence[UserContent]
    """The prompt: text, or a sequence of content items."""
    _: KW_ONLY
    timestamp: datetime = field(default_factory=_now_utc)
    """When the part was created."""
    part_kind: Literal['user-prompt'] = 'user-prompt'
    """Tag of this part kind in serialized messages."""

    def otel_message_parts(self, settings: TraceContentOptions) -> list[OtelMessagePart]:
        """The prompt as OpenTelemetry GenAI parts: text, files by URL (`uri` parts from format 4 on), file data
        (`blob`) and files stored by a provider (`file`); cache points are left out. Texts, URLs, ids and data
        are written only as `settings` allow."""
        from .otel import OtelFilePart, binary_part  # (loaded by the first traced run)

        items = [self.content] if isinstance(self.content, str) else self.content
        parts: list[OtelMessagePart] = []
        for item in items:
            if isinstance(item, str | TextContent):
                parts.append(_otel_text(item if isinstance(item, str) else item.content, settings))
            elif isinstance(item, FileUrl):
                parts.append(_otel_url(item, settings))
            elif isinstance(item, BinaryContent):
                parts.append(binary_part(item, settings))
            elif isinstance(item, UploadedFile):
                category = item.media_type.partition('/')[0]
                modality = category if category in ('image', 'audio', 'video') else 'document'
                stored = OtelFilePart(type='file', modality=modality, mime_type=item.media_type)
                if settings.include_content:
                    stored['file_id'] = item.file_id
                parts.append(stored)
            else:  # a cache point marks where a provider may cache the prompt: nothing to trace
                assert isinstance(item, CachePoint)
        return parts

    def __repr__(self) -> str:
        return _repr(self, ('content', 'timestamp'))


@dataclass(repr=False)
class RetryPromptPart:
    """Tells the model why its last answer was rejected (a `ModelRetry`, validation errors) and to try again."""

    content: list[pydantic_core.ErrorDetails] | str
    """The validation errors, or the message of a `ModelRetry`."""
    _: KW_ONLY
    tool_name: str | None = None
    """The tool whose call failed; `None` when the output text failed."""
    tool_call_id: str = field(default_factory=generate_tool_call_id)
    """The id of the failed tool call."""
    timestamp: datetime = field(default_factory=_now_utc)
    """When the part was created."""
    part_kind: Literal['retry-prompt'] = 'retry-prompt'
    """Tag of this part kind in serialized messages."""

    def model_response(self) -> str:
        """The text the model is sent."""
        if isinstance(self.content, str):
            description = self.content if self.tool_name is not None else f'Validation feedback:\n{self.content}'
        else:
            errors: list[dict[str, Any]] = [{k: v for k, v in e.items() if k != 'ctx'} for e in self.content]
            if self.tool_name is None:
                # The model already sees the JSON it wrote; repeating top-level inputs adds nothing.
                errors = [{k: v for k, v in e.items() if k != 'input' or len(e['loc']) > 1} for e in errors]
            json_errors = pydantic_core.to_json(errors, indent=2).decode()
            count = len(self.content)
            description = f'{count} validation error{"" if count == 1 else "s"}:\n```json\n{json_errors}\n```'
        return f'{description}\n\nFix the errors and try again.'

    def otel_message_parts(self, settings: TraceContentOptions) -> list[OtelMessagePart]:
        """The retry prompt as an OpenTelemetry GenAI part: a `tool_call_response` when it answers a tool call,
        else text (what the model is told, only when `settings` let content be recorded)."""
        from .otel import OtelToolCallResponsePart  # (loaded by the first traced run)

        if self.tool_name is None:
            return [_otel_text(self.model_response(), settings)]
        part = OtelToolCallResponsePart(type='tool_call_response', id=self.tool_call_id, name=self.tool_name)
        if settings.include_content:
            part['result'] = self.model_response()
        return [part]

    def __repr__(self) -> str:
        return _repr(self, ('content', 'tool_name', 'tool_call_id', 'timestamp'))


@dataclass(repr=False, kw_only=True)
class ToolAvailabilityDeltaPart:
    """Marks the point of a conversation from which more tools are available to the model: those a tool revealed
    (`ToolReturn(tools=[...])`), a tool search found or a loaded capability brought. Only additions: a tool is
    never withdrawn mid-run (telling a provider so would invalidate its cached prompt).

    The model sees it as a short system note naming the tools (see `announce_tool_availability`)."""

    tools_added: Annotated[
        list[str], pydantic.Field(validation_alias=pydantic.AliasChoices('tools_added', 'added'))
    ] = field(default_factory=list)
    """The names of the tools available from here on (a name that is not a deferred tool of the run is ignored)."""
    tool_call_id: str | None = None
    """The tool call whose return revealed them, if any."""
    part_kind: Literal['tool-availability-delta'] = 'tool-availability-delta'
    """Tag of this part kind in serialized messages."""

    def otel_message_parts(self, settings: TraceContentOptions) -> list[OtelMessagePart]:
        """The change as an OpenTelemetry GenAI text part naming the tools, whatever `settings` say of content:
        tool names are no user content, and the request's tool definitions show them anyway."""
        from .otel import OtelTextPart  # (loaded by the first traced run)

        added = ', '.join(f'+{name}' for name in self.tools_added)
        return [OtelTextPart(type='text', content=f'Tool availability changed: {added}')]

    def __repr__(self) -> str:
        return _repr(self, ('tools_added', 'tool_call_id'))


ModelRequestPart = Annotated[
    SystemPromptPart
    | UserPromptPart
    | SpeechPart
    | ToolReturnPart
    | RetryPromptPart
    | RetryFeedbackPart
    | ToolAvailabilityDeltaPart
    | CapabilityLoadDeltaPart
    | ModelSettingsDeltaPart
    | InstructionDeltaPart
    | InstructionBaselinePart,
    pydantic.Discriminator('part_kind'),
]
"""A part of a request to a model."""


def _typed_parts(parts: list[Any]) -> list[Any]:
    # A check per part after validation: a discriminator function would make pydantic validate every part from
    # Python objects, not from the JSON.
    return narrow_tool_parts(parts)


def _registered_parts(parts: Sequence[Any]) -> Sequence[Any]:
    """`parts` with the tool parts of kinds that have typed parts registered as those (a list is changed in place,
    so that whoever passed it sees the message's parts)."""
    listed = parts if isinstance(parts, list) else list(parts)
    narrow_tool_parts(listed, registered_only=True)
    return parts if listed is parts or all(a is b for a, b in zip(listed, parts, strict=True)) else listed


def _as_list(parts: Sequence[Any]) -> list[Any]:
    """Parts serialized as a list, with the parts' own schema: pydantic serializes a `Sequence` field by inferring
    each item's type, several times slower in JSON (and every snapshot of a durable agent run holds messages)."""
    return parts if type(parts) is list else list(parts)


@dataclass(repr=False)
class ModelRequest:
    """A request to a model: prompts, tool returns and retry prompts."""

    parts: Annotated[
        Sequence[ModelRequestPart],
        pydantic.AfterValidator(_typed_parts),
        pydantic.PlainSerializer(_as_list, return_type=list[ModelRequestPart]),
    ]
    """The parts of the request."""
    _: KW_ONLY
    timestamp: datetime | None = None
    """When the request was sent."""
    instructions: str | None = None
    """Instructions sent with this request only (not kept as a system prompt in the history)."""
    kind: Literal['request'] = 'request'
    """Tag of requests in serialized histories."""
    run_id: str | None = None
    """The id of the agent run that sent the request."""
    conversation_id: str | None = None
    """The id of the conversation (runs sharing a message history) the request belongs to."""
    metadata: dict[str, Any] | None = None
    """Data kept for the application and not sent to the model."""
    state: ModelRequestState = 'complete'
    """`'interrupted'` for a request the run was still putting together (the results of the tool calls that had
    finished) when an error or a cancellation stopped it: it was never sent. `capture_run_messages()` and
    `RunCancelled.all_messages()` keep it so that the partial state can be seen; a run given such a history answers
    the calls left open as interrupted and sends the rest."""

    def __post_init__(self) -> None:
        _check_speakers(self.parts, 'user', 'ModelRequest')
        if KIND_CALL_PARTS or KIND_RETURN_PARTS:  # the tool parts of kinds with typed parts, as those
            self.parts = _registered_parts(self.parts)

    @classmethod
    def user_text_prompt(cls, user_prompt: str, *, instructions: str | None = None) -> ModelRequest:
        """A request holding only the user's prompt."""
        return cls(parts=[UserPromptPart(user_prompt)], instructions=instructions)

    def __repr__(self) -> str:
        shown = _repr(self, ('parts', 'timestamp', 'instructions', 'run_id', 'conversation_id', 'metadata'))
        return shown if self.state == 'complete' else f'{shown[:-1]}, state={self.state!r})'


ModelRequestState: TypeAlias = Literal['complete', 'interrupted']
"""Where a request stands: `'complete'`, or `'interrupted'` while it was being put together (never sent)."""


@dataclass(repr=False)
class TextPart:
    """Text from the model."""

    content: str
    """The text."""
    _: KW_ONLY
    id: str | None = None
    """The provider's id of the part."""
    provider_name: str | None = None
    """The provider that produced the part."""
    provider_details: dict[str, Any] | None = None
    """Provider-specific data."""
    citations: list[Citation] | None = None
    """The sources backing this text, when the provider cites any (what else it says about them, such as page
    numbers or scores, is in `provider_details['citations']`)."""
    part_kind: Literal['text'] = 'text'
    """Tag of this part kind in serialized messages."""

    def has_content(self) -> bool:
        """Whether the text is not empty."""
        return bool(self.content)

    def __repr__(self) -> str:
        return _repr(self, ('content', 'id', 'provider_name', 'provider_details', 'citations'))


@dataclass(repr=False)
class ThinkingPart:
    """The model's reasoning, for models that share it."""

    content: str
    """The reasoning text."""
    _: KW_ONLY
    id: str | None = None
    """The provider's id of the part."""
    signature: str | None = None
    """The provider's signature of the reasoning, sent back to it unchanged."""
    provider_name: str | None = None
    """The provider that produced the part."""
    provider_details: dict[str, Any] | None = None
    """Provider-specific data."""
    part_kind: Literal['thinking'] = 'thinking'
    """Tag of this part kind in serialized messages."""

    def has_content(self) -> bool:
        """Whether the reasoning is not empty."""
        return bool(self.content)

    def __repr__(self) -> str:
        return _repr(self, ('content', 'id', 'signature', 'provider_name', 'provider_details'))


@dataclass(repr=False)
class FilePart:
    """A file made by the model (an image it drew)."""

    content: Annotated[BinaryContent, pydantic.AfterValidator(BinaryContent.narrow_type)]
    """The file; a `BinaryImage` when it is an image."""
    _: KW_ONLY
    id: str | None = None
    """The provider's id of the part."""
    provider_name: str | None = None
    """The provider that produced the part."""
    provider_details: dict[str, Any] | None = None
    """Provider-specific data."""
    part_kind: Literal['file'] = 'file'
    """Tag of this part kind in serialized messages."""

    def has_content(self) -> bool:
        """Whether the file has data."""
        return bool(self.content.data)

    def __repr__(self) -> str:
        return _repr(self, ('content', 'id', 'provider_name', 'provider_details'))


ModelResponsePart = Annotated[
    TextPart
    | ThinkingPart
    | ToolCallPart
    | NativeToolCallPart
    | NativeToolReturnPart
    | CompactionPart
    | FilePart
    | SpeechPart,
    pydantic.Discriminator('part_kind'),
]
"""A part of a model's response."""

FinishReason = Literal['stop', 'length', 'content_filter', 'tool_call', 'error']
"""Why the model stopped generating, normalized across providers."""


ModelResponseState: TypeAlias = Literal['complete', 'incomplete', 'suspended', 'interrupted']
"""Where a response stands: received whole, still streaming, paused by the provider mid-turn or still being worked on
by it (`'suspended'`: a batch or background request; the run asks the model to continue it, or ends with it as a
`PendingModelResponse` output when the output type has one), or cut off by `cancel()`."""


@dataclass(repr=False)
class ModelResponse:
    """A model's response: text, thinking and tool calls, with the request's usage."""

    parts: Annotated[
        Sequence[ModelResponsePart],
        pydantic.AfterValidator(_typed_parts),
        pydantic.PlainSerializer(_as_list, return_type=list[ModelResponsePart]),
    ]
    """The parts of the response."""
    _: KW_ONLY
    usage: RequestUsage = field(default_factory=RequestUsage)
    """The tokens used by the request."""
    model_name: str | None = None
    """The name of the model that answered."""
    model_id: str | None = None
    """The id of the model the run sent the request to, as it was given (`'openai:gpt-5'`, an alias a capability's
    `resolve_model_id` resolved), else the model's `model_id`: it names the model as configured, where `model_name`
    is what the provider reports. Set by the agent on the responses of its model requests (a response that has one
    keeps it); `None` on one no request made (`SkipModelRequest`)."""
    timestamp: datetime = field(default_factory=_now_utc)
    """When the response was received."""
    kind: Literal['response'] = 'response'
    """Tag of responses in serialized histories."""
    provider_name: str | None = None
    """The provider that answered."""
    provider_url: str | None = None
    """The base URL of the provider's API that answered (set by the HTTP models)."""
    canonical_system: str | None = None
    """The system whose keys verify the signed or encrypted data of this response (thinking signatures, encrypted
    reasoning), when `provider_name` does not tell it (`'openai'` for an `openai-codex` response, `'azure'` or
    `'google-cloud'` where one provider serves two systems); it applies to the parts whose `provider_name` is this
    response's. `None` (left out of the repr) when `provider_name` tells it."""
    # Histories stored by pydantic-ai 1.x before its rename have `vendor_details` and `vendor_id`.
    provider_details: Annotated[
        dict[str, Any] | None,
        pydantic.Field(validation_alias=pydantic.AliasChoices('provider_details', 'vendor_details')),
    ] = None
    """Provider-specific data."""
    provider_response_id: Annotated[
        str | None, pydantic.Field(validation_alias=pydantic.AliasChoices('provider_response_id', 'vendor_id'))
    ] = None
    """The provider's id of the response."""
    finish_reason: FinishReason | None = None
    """Why the model stopped generating."""
    run_id: str | None = None
    """The id of the agent run that received the response."""
    conversation_id: str | None = None
    """The id of the conversation (runs sharing a message history) the response belongs to."""
    metadata: dict[str, Any] | None = None
    """Data kept for the application."""
    workspace_ref: WorkspaceRef | None = None
    """The workspace environment the run worked in, so that a run continuing this history can reuse it: recorded on
    each response as it is made, and on the last one again when the run ends. Never sent to a model."""
    history_digest: str | None = None
    """A digest of this response's parts and of the history before it as sent (without `metadata` fields and
    instructions), by models that continue server-side state: a later request continues from this response only
    while both are unchanged. Never sent to a model."""
    failed_attempts: list[ModelRequestAttempt] | None = None
    """The attempts at this request that failed before this response, in order (the models a `FallbackModel` or
    `ModelFallback` moved on from, the attempts a hook's `RetryModelRequest` ended). Their usage is not in `usage`
    (this response's own) but counts in the run's usage and token and cost limits; a turned-down response's parts
    are not kept. Never sent to a model."""
    state: ModelResponseState = 'complete'
    """`'incomplete'` while the response is being streamed, `'interrupted'` once a stream is cancelled, `'suspended'`
    when the provider paused the turn and expects to be asked to continue it (Anthropic's `pause_turn`, a background
    job still running)."""

    def __post_init__(self) -> None:
        _check_speakers(self.parts, 'assistant', 'ModelResponse')
        if KIND_CALL_PARTS or KIND_RETURN_PARTS:  # the tool parts of kinds with typed parts, as those
            self.parts = _registered_parts(self.parts)

    @property
    def text(self) -> str | None:
        """The text of the response, or `None` when there is none: adjacent text parts joined, runs of text
        separated by other parts joined with a blank line. The transcript of a spoken part counts as text (a
        spoken part without one does not)."""
        runs: list[str] = []
        in_run = False
        for part in self.parts:
            if isinstance(part, TextPart) or (isinstance(part, SpeechPart) and part.transcript):
                if in_run:
                    runs[-1] += part.content
                else:
                    runs.append(part.content)
                in_run = True
            else:
                in_run = False
        return '\n\n'.join(runs) if runs else None

    @property
    def thinking(self) -> str | None:
        """The thinking parts joined with blank lines, or `None` when there are none."""
        thoughts = [part.content for part in self.parts if isinstance(part, ThinkingPart)]
        return '\n\n'.join(thoughts) if thoughts else None

    @property
    def files(self) -> list[BinaryContent]:
        """The files the model made."""
        return [part.content for part in self.parts if isinstance(part, FilePart)]

    @property
    def images(self) -> list[BinaryImage]:
        """The images the model made."""
        return [file for file in self.files if isinstance(file, BinaryImage)]

    @property
    def tool_calls(self) -> list[ToolCallPart]:
        """The tool call parts."""
        return [part for part in self.parts if isinstance(part, ToolCallPart)]

    @property
    def native_tool_calls(self) -> list[tuple[NativeToolCallPart, NativeToolReturnPart]]:
        """The calls of tools the provider ran, each with its result (calls without one in this response are
        left out)."""
        returns = {p.tool_call_id: p for p in self.parts if isinstance(p, NativeToolReturnPart)}
        calls = (p for p in self.parts if isinstance(p, NativeToolCallPart))
        return [(call, returns[call.tool_call_id]) for call in calls if call.tool_call_id in returns]

    @property
    def builtin_tool_calls(self) -> list[tuple[NativeToolCallPart, NativeToolReturnPart]]:
        """Deprecated: `native_tool_calls`."""
        warnings.warn(
            '`ModelResponse.builtin_tool_calls` is deprecated, use `ModelResponse.native_tool_calls` instead.',
            PydanticAIDeprecationWarning,
            stacklevel=2,
        )
        return self.native_tool_calls

    def otel_message_parts(self, settings: TraceContentOptions) -> list[OtelMessagePart]:
        """The response as OpenTelemetry GenAI parts: text, thinking, file data, tool calls and the returns of the
        provider's native tools (`builtin`), spoken turns; a compaction summary is left out. Contents are written
        only as `settings` allow."""
        from .otel import OtelThinkingPart, binary_part  # (loaded by the first traced run)

        parts: list[OtelMessagePart] = []
        for part in self.parts:
            if isinstance(part, TextPart):
                parts.append(_otel_text(part.content, settings))
            elif isinstance(part, ThinkingPart):
                thinking = OtelThinkingPart(type='thinking')
                if settings.include_content:
                    thinking['content'] = part.content
                parts.append(thinking)
            elif isinstance(part, FilePart):
                parts.append(binary_part(part.content, settings))
            elif isinstance(part, BaseToolCallPart):
                parts.append(_otel_tool_call(part, settings))
            elif isinstance(part, NativeToolReturnPart):
                (returned,) = part.otel_message_parts(settings)
                returned['builtin'] = True  # type: ignore[typeddict-unknown-key]
                parts.append(returned)
            elif isinstance(part, SpeechPart):
                parts.extend(part.otel_message_parts(settings))
            # a `CompactionPart` has no counterpart in the conventions
        return parts

    def __repr__(self) -> str:
        names = ('parts', 'usage', 'model_name', 'model_id', 'timestamp', 'provider_name', 'canonical_system')
        later = ('run_id', 'conversation_id', 'workspace_ref', 'history_digest', 'failed_attempts')
        return _repr(self, (*names, 'provider_response_id', *later))


def _otel_text(text: str, settings: TraceContentOptions) -> OtelMessagePart:
    from .otel import OtelTextPart  # (loaded by the first traced run)

    part = OtelTextPart(type='text')
    if settings.include_content:
        part['content'] = text
    return part


_URL_MODALITIES: dict[str, Literal['image', 'audio', 'video']] = {
    'image-url': 'image',
    'audio-url': 'audio',
    'video-url': 'video',
}


def _otel_url(file: FileUrl, settings: TraceContentOptions) -> OtelMessagePart:
    from .otel import OtelMediaUrlPart, OtelUriPart  # (loaded by the first traced run)

    kind: Literal['image-url', 'audio-url', 'video-url', 'document-url'] = file.kind  # type: ignore[attr-defined]
    if settings.version < 4:
        old = OtelMediaUrlPart(type=kind)
        if settings.include_content:
            old['url'] = file.url
        return old
    part = OtelUriPart(type='uri')
    if (modality := _URL_MODALITIES.get(kind)) is not None:
        part['modality'] = modality
    with contextlib.suppress(ValueError):  # a URL that does not tell its media type goes without one
        part['mime_type'] = file.media_type
    if settings.include_content:
        part['uri'] = file.url
    return part


def _otel_tool_call(call: BaseToolCallPart, settings: TraceContentOptions) -> OtelMessagePart:
    from .otel import OtelToolCallPart, traced_value  # (loaded by the first traced run)

    part = OtelToolCallPart(type='tool_call', id=call.tool_call_id, name=call.tool_name)
    if isinstance(call, NativeToolCallPart):
        part['builtin'] = True
    if settings.include_content and call.args is not None:
        if isinstance(call.args, str):
            part['arguments'] = call.args
        else:
            part['arguments'] = {key: traced_value(value, settings) for key, value in call.args.items()}
    return part


ModelMessage = Annotated[ModelRequest | ModelResponse, pydantic.Discriminator('kind')]
"""A message of a conversation: a request or a response."""


def _check_speakers(parts: Sequence[Any], speaker: str, message: str) -> None:
    # A ValueError (not a UserError): when a history is loaded, pydantic turns it into a ValidationError that
    # says where the part is.
    for part in parts:
        if isinstance(part, SpeechPart) and part.speaker != speaker:
            raise ValueError(f'`SpeechPart` in `{message}.parts` must have `speaker={speaker!r}`, got {part.speaker!r}')


_type_adapter: pydantic.TypeAdapter[list[ModelMessage]] | None = None


def messages_type_adapter() -> pydantic.TypeAdapter[list[ModelMessage]]:
    """The type adapter of message lists (`messages.ModelMessagesTypeAdapter`), built on first use: building it
    takes milliseconds, which only programs that (de)serialize histories pay for."""
    global _type_adapter
    if _type_adapter is None:
        config = pydantic.ConfigDict(defer_build=True, ser_json_bytes='base64', val_json_bytes='base64')
        _type_adapter = pydantic.TypeAdapter(list[ModelMessage], config=config)
    return _type_adapter

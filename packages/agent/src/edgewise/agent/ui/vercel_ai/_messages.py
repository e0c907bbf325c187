"""Vercel AI `UIMessage`s to Edgewise messages and back.

A `UIMessage` of the assistant holds a whole turn: its text and its tool calls with their results. Edgewise
splits that into model responses and the requests returning tool results; `MessagesBuilder` does the split.
Tool results come back as `tool-output-available` (success), `tool-output-error` (failure or retry prompt:
a retry prompt reloads as a failed result) and `tool-output-denied` (a denial, with its reason).
"""

from __future__ import annotations as _annotations

import json
import uuid
from collections.abc import Callable, Sequence
from typing import Any, Literal, cast

from ...messages import (
    AudioUrl,
    BinaryContent,
    CachePoint,
    DocumentUrl,
    FilePart,
    FileUrl,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    RetryPromptPart,
    SystemPromptPart,
    TextContent,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UploadedFile,
    UserContent,
    UserPromptPart,
    VideoUrl,
)
from .._messages_builder import MessagesBuilder
from ._metadata import (
    DataCarrier,
    apply_message_metadata,
    dump_message_metadata,
    metadata_chunks,
    part_metadata,
    read_metadata,
    tool_output,
)
from .request_types import (
    DataUIPart,
    DynamicToolApprovalRespondedPart,
    FileUIPart,
    ReasoningUIPart,
    SourceDocumentUIPart,
    SourceUrlUIPart,
    StepStartUIPart,
    TextUIPart,
    ToolApprovalRequested,
    ToolApprovalRequestedPart,
    ToolApprovalResponded,
    ToolApprovalRespondedPart,
    ToolInputAvailablePart,
    ToolOutputAvailablePart,
    ToolOutputDeniedPart,
    ToolOutputErrorPart,
    UIMessage,
    UIMessagePart,
)
from .response_types import DataChunk, SourceDocumentChunk, SourceUrlChunk

__all__ = ('MessageIdFunc', 'approval_responses', 'dump_ui_messages', 'load_ui_messages')

Role = Literal['system', 'user', 'assistant']
MessageIdFunc = Callable[[ModelRequest | ModelResponse, Role, int], str]
"""Makes the id of a `UIMessage` from the Edgewise message it comes from, its role and its position."""

_URL_TYPES: dict[str, type[ImageUrl | VideoUrl | AudioUrl | DocumentUrl]] = {
    'image': ImageUrl,
    'video': VideoUrl,
    'audio': AudioUrl,
}
_DENIED = 'The tool call was denied.'


def approval_responses(messages: Sequence[UIMessage]) -> list[tuple[str, ToolApprovalResponded]]:
    """The answered approvals of the assistant's tool calls not run yet (`approval-responded`), by call id."""
    found: list[tuple[str, ToolApprovalResponded]] = []
    for message in messages:
        if message.role != 'assistant':
            continue
        for part in message.parts:
            if isinstance(part, ToolApprovalRespondedPart | DynamicToolApprovalRespondedPart) and isinstance(
                part.approval, ToolApprovalResponded
            ):
                found.append((part.tool_call_id, part.approval))
    return found


def load_ui_messages(messages: Sequence[UIMessage]) -> list[ModelMessage]:
    """Edgewise messages from a chat's `UIMessage`s."""
    builder = MessagesBuilder()
    for message in messages:
        mark = builder.checkpoint()
        if message.role == 'system':
            for part in message.parts:
                if isinstance(part, TextUIPart):
                    builder.add(SystemPromptPart(part.text))
        elif message.role == 'user':
            content: list[UserContent] = []
            for part in message.parts:
                if isinstance(part, TextUIPart):
                    content.append(part.text)
                elif isinstance(part, FileUIPart):
                    content.append(_user_file(part))
            if content:
                prompt = content[0] if len(content) == 1 and isinstance(content[0], str) else content
                builder.add(UserPromptPart(prompt))
        else:
            for part in message.parts:
                _load_assistant_part(builder, part)
        kind = ModelResponse if message.role == 'assistant' else ModelRequest
        built = builder.last_modified(mark, of_type=kind)
        if built is not None:
            apply_message_metadata(built, message.metadata)
    return builder.messages


def _user_file(part: FileUIPart) -> UserContent:
    own = read_metadata(part.provider_metadata)
    vendor = own.get('vendor_metadata')
    if part.url.startswith('data:'):
        data = BinaryContent.from_data_uri(part.url)
        return BinaryContent.narrow_type(BinaryContent(data.data, media_type=data.media_type, vendor_metadata=vendor))
    if own.get('file_id') and own.get('provider_name'):
        return UploadedFile(own['file_id'], own['provider_name'], media_type=part.media_type, vendor_metadata=vendor)
    url_type: type[ImageUrl | VideoUrl | AudioUrl | DocumentUrl] = _URL_TYPES.get(
        part.media_type.split('/', 1)[0], DocumentUrl
    )
    return url_type(
        part.url, media_type=part.media_type, force_download=own.get('force_download', False), vendor_metadata=vendor
    )


def _args(value: Any) -> str | dict[str, Any] | None:
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            return value
        return cast(dict[str, Any], parsed) if isinstance(parsed, dict) else value
    if value is None or isinstance(value, dict):
        return cast(dict[str, Any] | None, value)
    return json.dumps(value)


def _load_assistant_part(builder: MessagesBuilder, part: UIMessagePart) -> None:
    if isinstance(part, TextUIPart):
        own = read_metadata(part.provider_metadata)
        builder.add(
            TextPart(
                part.text,
                id=own.get('id'),
                provider_name=own.get('provider_name'),
                provider_details=own.get('provider_details'),
            )
        )
    elif isinstance(part, ReasoningUIPart):
        own = read_metadata(part.provider_metadata)
        builder.add(
            ThinkingPart(
                part.text,
                id=own.get('id'),
                signature=None if part.state == 'streaming' else own.get('signature'),
                provider_name=own.get('provider_name'),
                provider_details=own.get('provider_details'),
            )
        )
    elif isinstance(part, FileUIPart):
        if not part.url.startswith('data:'):
            raise ValueError(
                f'An assistant file part must hold its content as a `data:` URL, not {part.url[:40]!r}: the files a '
                'model made are sent that way.'
            )
        own = read_metadata(part.provider_metadata)
        content = BinaryContent.from_data_uri(part.url)
        if isinstance(own.get('vendor_metadata'), dict):
            content.vendor_metadata = own['vendor_metadata']
        builder.add(
            FilePart(
                content,
                id=own.get('id'),
                provider_name=own.get('provider_name'),
                provider_details=own.get('provider_details'),
            )
        )
    elif isinstance(part, DataUIPart | SourceUrlUIPart | SourceDocumentUIPart | StepStartUIPart):
        return  # shown by the front end; nothing the model needs
    else:
        _load_tool_part(builder, part)


def _load_tool_part(builder: MessagesBuilder, part: Any) -> None:
    name: str = part.tool_name if part.type == 'dynamic-tool' else part.type.removeprefix('tool-')
    call_id: str = part.tool_call_id
    own = read_metadata(part.call_provider_metadata)
    details: dict[str, Any] = {'id': own.get('id'), 'provider_name': own.get('provider_name')}
    details['provider_details'] = own.get('provider_details')
    if part.provider_executed:
        builder.add(NativeToolCallPart(name, _args(part.input), call_id, tool_kind=own.get('tool_kind'), **details))
        returned = _returned(part)
        if returned is not None:
            content, outcome = returned
            builder.add(
                NativeToolReturnPart(
                    name,
                    content,
                    call_id,
                    outcome=outcome,
                    provider_name=details['provider_name'],
                    provider_details=details['provider_details'],
                )
            )
        return
    builder.add(ToolCallPart(name, _args(part.input), call_id, tool_kind=own.get('tool_kind'), **details))
    returned = _returned(part)
    if returned is not None:
        content, outcome = returned
        builder.add(ToolReturnPart(name, content, call_id, outcome=outcome))


def _returned(part: Any) -> tuple[Any, Literal['success', 'failed', 'denied']] | None:
    if part.state == 'output-available':
        return part.output, 'success'
    if part.state == 'output-error':
        return part.error_text, 'failed'
    if part.state == 'output-denied':
        approval = part.approval
        reason = approval.reason if isinstance(approval, ToolApprovalResponded) and approval.reason else _DENIED
        return reason, 'denied'
    return None


def default_message_id(message: ModelRequest | ModelResponse, role: Role, index: int) -> str:
    """A `UIMessage` id that is the same each time a history is dumped: from the provider's response id or
    the run id, else from the message's timestamp, kind, role and position."""
    if isinstance(message, ModelResponse) and message.provider_response_id:
        return f'{message.provider_response_id}-{index}'
    if message.run_id:
        return f'{message.run_id}-{index}'
    stamp = message.timestamp.isoformat() if message.timestamp else ''
    return str(uuid.uuid5(uuid.NAMESPACE_OID, f'{stamp}-{message.kind}-{role}-{index}'))


def dump_ui_messages(
    messages: Sequence[ModelMessage], *, message_id: MessageIdFunc | None = None, sdk_version: int = 5
) -> list[UIMessage]:
    """A chat's `UIMessage`s from Edgewise messages.

    A tool call with no result in `messages` is waiting: `approval-requested` for AI SDK 6 and later (so that a
    reloaded chat shows its approval prompt), `input-available` before.
    """
    make_id = message_id or default_message_id
    results: dict[str, ToolReturnPart | RetryPromptPart] = {}
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, ToolReturnPart) or (isinstance(part, RetryPromptPart) and part.tool_name):
                    results[part.tool_call_id] = part
    dumped: list[UIMessage] = []

    def add(message: ModelRequest | ModelResponse, role: Role, parts: list[UIMessagePart], metadata: Any) -> None:
        dumped.append(UIMessage(id=make_id(message, role, len(dumped)), role=role, metadata=metadata, parts=parts))

    for message in messages:
        if isinstance(message, ModelRequest):
            system: list[UIMessagePart] = []
            user: list[UIMessagePart] = []
            for part in message.parts:
                if isinstance(part, SystemPromptPart):
                    # A request-scoped prompt was for its request only: loaded back, it would count for good.
                    if part.scope != 'request':
                        system.append(TextUIPart(text=part.content, state='done'))
                elif isinstance(part, UserPromptPart):
                    user += _dump_prompt(part)
                elif isinstance(part, RetryPromptPart) and not part.tool_name:
                    user.append(TextUIPart(text=part.model_response(), state='done'))
            metadata = dump_message_metadata(message) or None
            if system:
                add(message, 'system', system, None if user else metadata)
            if user:
                add(message, 'user', user, metadata)
        else:
            parts = _dump_response(message, results, sdk_version)
            if parts:
                add(message, 'assistant', parts, dump_message_metadata(message))
    return dumped


def _dump_prompt(part: UserPromptPart) -> list[UIMessagePart]:
    if isinstance(part.content, str):
        return [TextUIPart(text=part.content, state='done')]
    parts: list[UIMessagePart] = []
    for item in part.content:
        if isinstance(item, str):
            parts.append(TextUIPart(text=item, state='done'))
        elif isinstance(item, TextContent):
            parts.append(TextUIPart(text=item.content, state='done'))
        elif isinstance(item, BinaryContent):
            metadata = part_metadata(vendor_metadata=item.vendor_metadata)
            parts.append(FileUIPart(url=item.data_uri, media_type=item.media_type, provider_metadata=metadata))
        elif isinstance(item, FileUrl):
            metadata = part_metadata(force_download=item.force_download or None, vendor_metadata=item.vendor_metadata)
            parts.append(FileUIPart(url=item.url, media_type=item.media_type, provider_metadata=metadata))
        elif isinstance(item, UploadedFile):
            metadata = part_metadata(
                file_id=item.file_id, provider_name=item.provider_name, vendor_metadata=item.vendor_metadata
            )
            parts.append(FileUIPart(url=item.file_id, media_type=item.media_type, provider_metadata=metadata))
        else:
            assert isinstance(item, CachePoint), item  # a hint to the provider, nothing to show
    return parts


def _dump_response(
    message: ModelResponse, results: dict[str, ToolReturnPart | RetryPromptPart], sdk_version: int
) -> list[UIMessagePart]:
    native_returns = {p.tool_call_id: p for p in message.parts if isinstance(p, NativeToolReturnPart)}
    parts: list[UIMessagePart] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            last = parts[-1] if parts else None
            if isinstance(last, TextUIPart):
                last.text += part.content
            else:
                metadata = part_metadata(
                    id=part.id, provider_name=part.provider_name, provider_details=part.provider_details
                )
                parts.append(TextUIPart(text=part.content, state='done', provider_metadata=metadata))
        elif isinstance(part, ThinkingPart):
            metadata = part_metadata(
                id=part.id,
                signature=part.signature,
                provider_name=part.provider_name,
                provider_details=part.provider_details,
            )
            parts.append(ReasoningUIPart(text=part.content, state='done', provider_metadata=metadata))
        elif isinstance(part, FilePart):
            metadata = part_metadata(
                id=part.id,
                provider_name=part.provider_name,
                provider_details=part.provider_details,
                vendor_metadata=part.content.vendor_metadata,
            )
            parts.append(
                FileUIPart(url=part.content.data_uri, media_type=part.content.media_type, provider_metadata=metadata)
            )
        elif isinstance(part, NativeToolCallPart):
            parts.append(_dump_call(part, native_returns.get(part.tool_call_id), sdk_version, provider_executed=True))
        elif isinstance(part, ToolCallPart):
            result = results.get(part.tool_call_id)
            parts.append(_dump_call(part, result, sdk_version, provider_executed=False))
            if isinstance(result, ToolReturnPart):
                parts += [_chunk_part(chunk) for chunk in metadata_chunks(result)]
    return parts


def _chunk_part(chunk: DataCarrier) -> UIMessagePart:
    """The part a data, source or file chunk leaves in the message (a transient one is kept too)."""
    if isinstance(chunk, DataChunk):
        return DataUIPart(type=chunk.type, id=chunk.id, data=chunk.data)
    if isinstance(chunk, SourceUrlChunk):
        return SourceUrlUIPart(
            source_id=chunk.source_id, url=chunk.url, title=chunk.title, provider_metadata=chunk.provider_metadata
        )
    if isinstance(chunk, SourceDocumentChunk):
        return SourceDocumentUIPart(
            source_id=chunk.source_id,
            media_type=chunk.media_type,
            title=chunk.title,
            filename=chunk.filename,
            provider_metadata=chunk.provider_metadata,
        )
    return FileUIPart(url=chunk.url, media_type=chunk.media_type)


def _dump_call(
    part: ToolCallPart | NativeToolCallPart,
    result: ToolReturnPart | NativeToolReturnPart | RetryPromptPart | None,
    sdk_version: int,
    *,
    provider_executed: bool,
) -> UIMessagePart:
    metadata = part_metadata(
        id=part.id, provider_name=part.provider_name, provider_details=part.provider_details, tool_kind=part.tool_kind
    )
    common: dict[str, Any] = {
        'type': f'tool-{part.tool_name}',
        'tool_call_id': part.tool_call_id,
        'input': part.args_as_dict(),
        'provider_executed': provider_executed,
        'call_provider_metadata': metadata,
    }
    if isinstance(result, RetryPromptPart):
        return ToolOutputErrorPart(**common, error_text=result.model_response())
    if result is None:
        if sdk_version >= 6:
            return ToolApprovalRequestedPart(**common, approval=ToolApprovalRequested(id=part.tool_call_id))
        return ToolInputAvailablePart(**common)
    if result.outcome == 'denied':
        denial = ToolApprovalResponded(id=str(uuid.uuid4()), approved=False, reason=result.model_response_str())
        return ToolOutputDeniedPart(**common, approval=denial)
    if result.outcome == 'failed':
        return ToolOutputErrorPart(**common, error_text=result.model_response_str())
    return ToolOutputAvailablePart(**common, output=tool_output(result))

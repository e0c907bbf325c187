"""AG-UI messages to Edgewise messages and back.

An AG-UI conversation has user, system and developer messages, assistant messages (text and tool calls),
tool messages (one result each, `error` set for a failure) and reasoning messages (a thinking part; its id,
signature and provider name as JSON in `encrypted_value`). A native tool's call travels under a prefixed id
(see `NATIVE_TOOL_CALL_PREFIX`) so that it comes back as a native tool call.
"""

from __future__ import annotations as _annotations

import base64
import json
import uuid
import warnings
from collections.abc import Sequence
from typing import Any, Literal, cast

import pydantic_core

from ..._tools.mcp_apps import MCP_APPS_UI_TYPE, mcp_app_payload, mcp_app_record
from ...messages import (
    AudioUrl,
    BinaryContent,
    DocumentUrl,
    FileUrl,
    ImageUrl,
    ModelMessage,
    ModelRequest,
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
from ._event_stream import NATIVE_TOOL_CALL_PREFIX, tool_return_text
from ._sdk import core

__all__ = ('dump_ag_ui_messages', 'load_ag_ui_messages')

_URL_TYPES: dict[str, type[ImageUrl | VideoUrl | AudioUrl | DocumentUrl]] = {
    'image': ImageUrl,
    'video': VideoUrl,
    'audio': AudioUrl,
}


def _native_id(wire_id: str) -> tuple[str, str] | None:
    """The provider and call id of a native tool call's wire id, or `None` for another call."""
    prefix, _, rest = wire_id.partition('|')
    if prefix != NATIVE_TOOL_CALL_PREFIX or '|' not in rest:
        return None
    provider, _, call_id = rest.partition('|')
    return provider, call_id


def _content_item(item: Any) -> UserContent:
    """A user content item from an AG-UI input part (text, or an image, audio, video or document)."""
    if isinstance(item, core.TextPart):
        text: str = item.text
        return text
    source = item.source
    mime: str = source.mime_type or ''
    if source.type == 'data':
        return BinaryContent.narrow_type(BinaryContent(base64.b64decode(source.value), media_type=mime))
    if source.type == 'url' and source.value.startswith('data:'):
        return BinaryContent.from_data_uri(source.value)
    if source.type == 'url':
        return _URL_TYPES.get(mime.split('/', 1)[0], DocumentUrl)(source.value, media_type=mime or None)
    if source.provider:
        return UploadedFile(source.value, source.provider, media_type=mime or None)
    raise ValueError(
        f'AG-UI file source {source.value!r} names no provider: an uploaded file is read by the provider that holds it.'
    )


def load_ag_ui_messages(messages: Sequence[Any]) -> list[ModelMessage]:
    """Edgewise messages from AG-UI messages (activity messages are skipped: an MCP App's silently, others with a
    warning)."""
    builder = MessagesBuilder()
    names: dict[str, str] = {}
    for message in messages:
        if isinstance(message, core.UserMessage):
            if isinstance(message.content, str):
                builder.add(UserPromptPart(message.content))
            else:
                items = [_content_item(item) for item in message.content]
                prompt = items[0] if len(items) == 1 and isinstance(items[0], str) else items
                builder.add(UserPromptPart(prompt))
        elif isinstance(message, core.SystemMessage | core.DeveloperMessage):
            builder.add(SystemPromptPart(message.content))
        elif isinstance(message, core.AssistantMessage):
            if message.content:
                builder.add(TextPart(message.content))
            for call in message.tool_calls or ():
                names[call.id] = call.function.name
                native = _native_id(call.id)
                if native is not None:
                    provider, call_id = native
                    part: Any = NativeToolCallPart(
                        call.function.name, call.function.arguments, call_id, provider_name=provider or None
                    )
                else:
                    part = ToolCallPart(call.function.name, call.function.arguments, call.id)
                builder.add(part)
        elif isinstance(message, core.ToolMessage):
            name = names.get(message.tool_call_id)
            if name is None:
                raise ValueError(
                    f'AG-UI tool message {message.id!r} answers tool call {message.tool_call_id!r}, which no assistant '
                    'message before it made.'
                )
            content = message.content if isinstance(message.content, str) else [
                _content_item(item) for item in message.content
            ]  # fmt: skip
            outcome: Literal['success', 'failed'] = 'failed' if message.error is not None else 'success'
            native = _native_id(message.tool_call_id)
            if native is not None:
                provider, call_id = native
                builder.add(
                    NativeToolReturnPart(name, content, call_id, outcome=outcome, provider_name=provider or None)
                )
            else:
                builder.add(ToolReturnPart(name, content, message.tool_call_id, outcome=outcome))
        elif isinstance(message, core.ReasoningMessage):
            kept = _json_object(message.encrypted_value)
            builder.add(
                ThinkingPart(
                    message.content,
                    id=kept.get('id'),
                    signature=kept.get('signature'),
                    provider_name=kept.get('provider_name'),
                )
            )
        elif isinstance(message, core.ActivityMessage) and message.activity_type == MCP_APPS_UI_TYPE:
            continue  # an MCP App's page, for the frontend (`dump_ag_ui_messages` writes it): nothing for the agent
        else:
            warnings.warn(
                f'AG-UI {type(message).__name__} {getattr(message, "id", "")!r} was skipped: it holds nothing the '
                'agent reads.',
                UserWarning,
                stacklevel=3,
            )
    return builder.messages


def _json_object(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return {}
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}


def _new_id() -> str:
    return str(uuid.uuid4())


_PART_TYPES = {'image': 'ImagePart', 'audio': 'AudioPart', 'video': 'VideoPart'}


def _media_part(media_type: str, source: Any) -> Any:
    part_type = getattr(core, _PART_TYPES.get(media_type.split('/', 1)[0], 'DocumentPart'))
    return part_type(source=source)


def _user_item(item: UserContent) -> Any | None:
    if isinstance(item, str):
        return core.TextPart(text=item)
    if isinstance(item, TextContent):
        return core.TextPart(text=item.content)
    if isinstance(item, BinaryContent):
        return _media_part(item.media_type, core.DataSource(value=item.base64, mime_type=item.media_type))
    if isinstance(item, FileUrl):
        return _media_part(item.media_type, core.UrlSource(value=item.url, mime_type=item.media_type))
    if isinstance(item, UploadedFile):
        source = core.FileSource(value=item.file_id, provider=item.provider_name, mime_type=item.media_type)
        return _media_part(item.media_type, source)
    return None  # a cache point: a hint to the provider, nothing to show


def dump_ag_ui_messages(
    messages: Sequence[ModelMessage], *, reasoning: bool = True, activities: bool = True
) -> list[Any]:
    """AG-UI messages from Edgewise messages (thinking parts as reasoning messages when `reasoning`; a tool return
    of an MCP App followed by its `mcp-apps` activity when `activities`, as pydantic-ai 2.68 writes it)."""
    dumped: list[Any] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, SystemPromptPart):
                    # A request-scoped prompt was for its request only: loaded back, it would count for good.
                    if part.scope != 'request':
                        dumped.append(core.SystemMessage(id=_new_id(), content=part.content))
                elif isinstance(part, UserPromptPart):
                    if isinstance(part.content, str):
                        dumped.append(core.UserMessage(id=_new_id(), content=part.content))
                    else:
                        items = [x for x in map(_user_item, part.content) if x is not None]
                        dumped.append(core.UserMessage(id=_new_id(), content=items))
                elif isinstance(part, ToolReturnPart):
                    error = part.model_response_str() if part.outcome != 'success' else None
                    dumped.append(
                        core.ToolMessage(
                            id=_new_id(), tool_call_id=part.tool_call_id, content=tool_return_text(part), error=error
                        )
                    )
                    if (
                        activities and (app := mcp_app_record(part.metadata)) is not None
                    ):  # the page, as the stream sent it
                        content = mcp_app_payload(app)
                        dumped.append(
                            core.ActivityMessage(id=_new_id(), activity_type=MCP_APPS_UI_TYPE, content=content)
                        )
                elif isinstance(part, RetryPromptPart) and part.tool_name:
                    dumped.append(
                        core.ToolMessage(
                            id=_new_id(),
                            tool_call_id=part.tool_call_id,
                            content=part.model_response(),
                            error=part.model_response(),
                        )
                    )
                elif isinstance(part, RetryPromptPart):
                    dumped.append(core.UserMessage(id=_new_id(), content=part.model_response()))
            continue
        text: list[str] = []
        calls: list[Any] = []
        after: list[Any] = []
        for response_part in message.parts:
            if isinstance(response_part, TextPart):
                text.append(response_part.content)
            elif isinstance(response_part, ThinkingPart) and reasoning:
                kept = {
                    k: v
                    for k, v in (
                        ('id', response_part.id),
                        ('signature', response_part.signature),
                        ('provider_name', response_part.provider_name),
                    )
                    if v is not None
                }
                dumped.append(
                    core.ReasoningMessage(
                        id=_new_id(), content=response_part.content, encrypted_value=json.dumps(kept) if kept else None
                    )
                )
            elif isinstance(response_part, NativeToolCallPart):
                wire_id = '|'.join(
                    (NATIVE_TOOL_CALL_PREFIX, response_part.provider_name or '', response_part.tool_call_id)
                )
                calls.append(_wire_call(wire_id, response_part))
            elif isinstance(response_part, ToolCallPart):
                calls.append(_wire_call(response_part.tool_call_id, response_part))
            elif isinstance(response_part, NativeToolReturnPart):
                wire_id = '|'.join(
                    (NATIVE_TOOL_CALL_PREFIX, response_part.provider_name or '', response_part.tool_call_id)
                )
                after.append(
                    core.ToolMessage(id=_new_id(), tool_call_id=wire_id, content=tool_return_text(response_part))
                )
        if text or calls:
            dumped.append(core.AssistantMessage(id=_new_id(), content=''.join(text) or None, tool_calls=calls or None))
        dumped += after
    return dumped


def _wire_call(wire_id: str, part: ToolCallPart | NativeToolCallPart) -> Any:
    arguments = part.args if isinstance(part.args, str) else pydantic_core.to_json(part.args or {}).decode()
    return core.ToolCall(id=wire_id, function=core.FunctionCall(name=part.tool_name, arguments=arguments))

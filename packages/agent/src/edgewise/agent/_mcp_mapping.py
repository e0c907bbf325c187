"""What MCP content becomes on the agent's side, and back: tool results, and the messages of sampling requests.

Tool results arrive as JSON (the `tools/call` result) and are mapped straight from it, without building the
SDK's models first: a tool call is the hot path. Sampling requests are rare and go through the SDK's models.
"""

from __future__ import annotations as _annotations

import base64
from collections.abc import Sequence
from typing import Any

import pydantic_core
from mcp import types as mcp_types

from .exceptions import ModelRetry, UnexpectedModelBehavior
from .messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    UserPromptPart,
)

__all__ = ('ToolResult', 'map_tool_result', 'map_content_part', 'sampling_messages', 'sampling_result')

ToolResult = str | dict[str, Any] | list[Any] | Sequence[str | dict[str, Any] | list[Any]]
"""What an MCP tool call returns to the agent: text, JSON data, or a list of those."""


def map_tool_result(result: dict[str, Any]) -> Any:
    """The tool return for a `tools/call` result.

    An error result (`isError`) raises `ModelRetry` with the text the server sent, so the model can try
    again. Structured content is preferred when every content part is text (the text then repeats the
    structure); a lone `{"result": value}` wrapper, which FastMCP adds around non-object returns, is
    removed. Otherwise each content part is mapped, and a single part is returned by itself.
    """
    content: list[dict[str, Any]] = result.get('content') or []
    if result.get('isError'):
        text = '\n'.join(part.get('text', '') for part in content if part.get('type') == 'text')
        raise ModelRetry(text or 'MCP tool call failed')
    structured = result.get('structuredContent')
    if structured is not None and all(part.get('type') == 'text' for part in content):
        if isinstance(structured, dict) and len(structured) == 1 and 'result' in structured:
            return structured['result']
        return structured
    mapped = [map_content_part(part) for part in content]
    return mapped[0] if len(mapped) == 1 else mapped


def map_content_part(part: dict[str, Any]) -> Any:
    """One content block of a tool result: text (parsed when it is a JSON object or array), or a description.

    Images and audio become a text that says what they were (type, media type, size): Edgewise's message
    model has no binary content yet, so their bytes cannot reach the model.
    """
    kind = part.get('type')
    if kind == 'text':
        text: str = part.get('text', '')
        if text.startswith(('[', '{')):
            try:
                return pydantic_core.from_json(text)
            except ValueError:
                pass
        return text
    if kind in ('image', 'audio'):
        return _describe_binary(kind, part.get('mimeType'), part.get('data', ''))
    if kind == 'resource':
        resource: dict[str, Any] = part.get('resource') or {}
        if 'text' in resource:
            return resource['text']
        return _describe_binary('resource', resource.get('mimeType'), resource.get('blob', ''), resource.get('uri'))
    if kind == 'resource_link':
        return str(part.get('uri', ''))
    return part


def _describe_binary(kind: str, media_type: Any, data: str, uri: Any = None) -> str:
    try:
        size = f', {len(base64.b64decode(data, validate=False))} bytes'
    except ValueError:  # not base64: the size is unknown
        size = ''
    where = f' at {uri}' if uri else ''
    return f'[{kind}{where}: {media_type or "application/octet-stream"}{size}, not shown to the model]'


def sampling_messages(params: mcp_types.CreateMessageRequestParams) -> list[ModelMessage]:
    """The message history for a sampling request: the system prompt, then the user and assistant turns.

    Raises:
        ValueError: a turn holds content that is not text (images and audio cannot be sent yet).
    """
    messages: list[ModelMessage] = []
    request_parts: list[Any] = []
    response_parts: list[Any] = []
    if params.systemPrompt:
        request_parts.append(SystemPromptPart(content=params.systemPrompt))
    for message in params.messages:
        content = message.content
        if not isinstance(content, mcp_types.TextContent):
            raise ValueError(f'sampling content of type {type(content).__name__} is not supported, only text')
        if message.role == 'user':
            if response_parts:
                messages.append(ModelResponse(parts=response_parts))
                response_parts = []
            request_parts.append(UserPromptPart(content=content.text))
        else:
            if request_parts:
                messages.append(ModelRequest(parts=request_parts))
                request_parts = []
            response_parts.append(TextPart(content=content.text))
    if response_parts:
        messages.append(ModelResponse(parts=response_parts))
    if request_parts:
        messages.append(ModelRequest(parts=request_parts))
    return messages


def sampling_result(response: ModelResponse, model_name: str) -> dict[str, Any]:
    """The `sampling/createMessage` result for a model's response: its text, as the assistant."""
    texts: list[str] = []
    for part in response.parts:
        if isinstance(part, TextPart):
            texts.append(part.content)
        elif not isinstance(part, ThinkingPart):
            raise UnexpectedModelBehavior(f'the sampling model answered with a {type(part).__name__}, expected text')
    result = mcp_types.CreateMessageResult(
        role='assistant',
        content=mcp_types.TextContent(type='text', text=''.join(texts)),
        model=model_name,
        stopReason='endTurn',
    )
    return result.model_dump(by_alias=True, mode='json', exclude_none=True)

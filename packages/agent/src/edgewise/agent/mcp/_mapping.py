"""What MCP content becomes on the agent's side, and back: tool results, and the messages of sampling requests.

Tool results arrive as JSON (the `tools/call` result) and are mapped straight from it, without building the
SDK's models first: a tool call is the hot path. Prompts, resources and sampling requests are rare and go
through the SDK's models.
"""

from __future__ import annotations as _annotations

import base64
from collections.abc import Sequence
from typing import Any

import pydantic_core
from mcp import types as mcp_types

from .._messages.content import BinaryContent, TextContent
from ..exceptions import ModelRetry, UnexpectedModelBehavior
from ..messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    UserPromptPart,
)
from ._types import ContentBlock, EmbeddedResource, ResourceAnnotations, ResourceLink

__all__ = (
    'UNSTRUCTURED',
    'ToolResult',
    'map_content_part',
    'map_prompt_part',
    'map_tool_result',
    'resource_content',
    'sampling_messages',
    'sampling_result',
    'structured_result',
)

ToolResult = (
    str | BinaryContent | dict[str, Any] | list[Any] | Sequence[str | BinaryContent | dict[str, Any] | list[Any]]
)
"""What an MCP tool call returns to the agent: text, a file, JSON data, or a list of those."""

UNSTRUCTURED: Any = object()
"""`structured_result`'s answer when the result is to be mapped part by part."""


def structured_result(result: dict[str, Any]) -> Any:
    """The tool return for a `tools/call` result when it is structured, else `UNSTRUCTURED`.

    An error result (`isError`) raises `ModelRetry` with the text the server sent, so the model can try
    again. Structured content is preferred when every content part is text (the text then repeats the
    structure); a lone `{"result": value}` wrapper, which FastMCP adds around non-object returns, is
    removed. Otherwise the caller maps each content part (`map_content_part`), and a single part is
    returned by itself.
    """
    content: list[dict[str, Any]] = result.get('content') or []
    if result.get('isError'):
        text = '\n'.join(part.get('text', '') for part in content if part.get('type') == 'text')
        raise ModelRetry(text or 'MCP tool call failed')
    structured = result.get('structuredContent')
    if structured and all(part.get('type') == 'text' for part in content):
        if isinstance(structured, dict) and len(structured) == 1 and 'result' in structured:
            return structured['result']
        return structured
    return UNSTRUCTURED


def map_tool_result(result: dict[str, Any]) -> Any:
    """The tool return for a `tools/call` result whose content holds no resource links (see `structured_result`)."""
    value = structured_result(result)
    if value is not UNSTRUCTURED:
        return value
    mapped = [map_content_part(part) for part in result.get('content') or []]
    return mapped[0] if len(mapped) == 1 else mapped


def map_content_part(part: dict[str, Any]) -> Any:
    """One content block of a tool result, as the model is given it.

    Text is parsed when it is a JSON object or array; images and audio become `BinaryContent` (a
    `BinaryImage` for images); an embedded resource becomes its text or its decoded bytes; a resource
    link becomes its URI (`MCPServer` reads linked resources instead).

    Raises:
        ValueError: binary data that is not valid base64.
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
        return _binary(part.get('data', ''), part.get('mimeType'))
    if kind == 'resource':
        resource: dict[str, Any] = part.get('resource') or {}
        if 'text' in resource:
            return resource['text']
        return _binary(resource.get('blob', ''), resource.get('mimeType'))
    if kind == 'resource_link':
        return str(part.get('uri', ''))
    return part


def _binary(data: str, media_type: str | None, vendor_metadata: dict[str, Any] | None = None) -> BinaryContent:
    content = BinaryContent(
        base64.b64decode(data),
        media_type=media_type or 'application/octet-stream',
        vendor_metadata=vendor_metadata,
    )
    return BinaryContent.narrow_type(content)


def resource_content(contents: mcp_types.TextResourceContents | mcp_types.BlobResourceContents) -> str | BinaryContent:
    """The content of a resource: its text, or its decoded bytes."""
    if isinstance(contents, mcp_types.TextResourceContents):
        return contents.text
    return _binary(contents.blob, contents.mimeType)


def map_prompt_part(part: mcp_types.ContentBlock) -> ContentBlock:
    """One content block of a prompt message; the MCP annotations and `_meta` data are kept."""
    if isinstance(part, mcp_types.EmbeddedResource):
        return EmbeddedResource.from_mcp_sdk(part, resource_content(part.resource))
    if isinstance(part, mcp_types.ResourceLink):
        return ResourceLink.from_mcp_sdk(part)
    metadata: dict[str, Any] = {}
    if part.annotations is not None:
        metadata['mcp_annotations'] = ResourceAnnotations.from_mcp_sdk(part.annotations)
    if part.meta:
        metadata['mcp_meta'] = part.meta
    if isinstance(part, mcp_types.TextContent):
        return TextContent(part.text, metadata=metadata or None)
    return _binary(part.data, part.mimeType, metadata or None)


def sampling_messages(params: mcp_types.CreateMessageRequestParams) -> list[ModelMessage]:
    """The message history for a sampling request: the system prompt, then the user and assistant turns.

    A user turn may hold text, an image or audio (the file goes to the model); an assistant turn only text.

    Raises:
        ValueError: a turn holds content the model cannot be given (an assistant's image, tool use, a list).
    """
    messages: list[ModelMessage] = []
    request_parts: list[Any] = []
    response_parts: list[Any] = []
    if params.systemPrompt:
        request_parts.append(SystemPromptPart(content=params.systemPrompt))
    for message in params.messages:
        content = message.content
        if message.role == 'user':
            if response_parts:
                messages.append(ModelResponse(parts=response_parts))
                response_parts = []
            if isinstance(content, mcp_types.TextContent):
                request_parts.append(UserPromptPart(content=content.text))
            elif isinstance(content, (mcp_types.ImageContent, mcp_types.AudioContent)):
                request_parts.append(UserPromptPart(content=[_binary(content.data, content.mimeType)]))
            else:
                raise ValueError(f'sampling content of type {type(content).__name__} is not supported from the user')
        else:
            if not isinstance(content, mcp_types.TextContent):
                raise ValueError(
                    f'sampling content of type {type(content).__name__} is not supported from the assistant, only text'
                )
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
    )
    return result.model_dump(by_alias=True, mode='json', exclude_none=True)

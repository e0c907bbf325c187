"""Messages as the OpenTelemetry GenAI semantic conventions write them on spans (`gen_ai.input.messages`,
`gen_ai.output.messages`): the shapes of their parts, and what the parts' `otel_message_parts` methods share.

What a part shows depends on the run's `InstrumentationSettings` (defined on a floor above, read here through
`TraceContentOptions`): without `include_content` only the kinds, ids and names of parts are written, without
`include_binary_content` no file data; from format version 4 on, files are `uri` and `blob` parts with a modality,
before it `image-url`-like and `binary` parts.
"""

from __future__ import annotations as _annotations

from collections.abc import Mapping
from typing import Any, Literal, NotRequired, Protocol, TypeAlias, TypedDict

import pydantic
from pydantic import JsonValue

from .content import BinaryContent, ToolReturn

__all__ = (
    'TraceContentOptions',
    'OtelTextPart',
    'OtelThinkingPart',
    'OtelToolCallPart',
    'OtelToolCallResponsePart',
    'OtelMediaUrlPart',
    'OtelUriPart',
    'OtelFilePart',
    'OtelBinaryDataPart',
    'OtelBlobPart',
    'OtelMessagePart',
    'OtelRole',
    'OtelChatMessage',
    'OtelOutputMessage',
    'binary_part',
    'media_modality',
    'traced_value',
)


class TraceContentOptions(Protocol):
    """What the parts read of `InstrumentationSettings`."""

    @property
    def include_content(self) -> bool: ...
    @property
    def include_binary_content(self) -> bool: ...
    @property
    def version(self) -> int: ...


class OtelTextPart(TypedDict):
    """Text (a prompt, a system prompt, a response's text)."""

    type: Literal['text']
    content: NotRequired[str]


class OtelThinkingPart(TypedDict):
    """A model's thinking."""

    type: Literal['thinking']
    content: NotRequired[str]


class OtelToolCallPart(TypedDict):
    """A tool call of a response (`builtin` for a provider's native tool)."""

    type: Literal['tool_call']
    id: str
    name: str
    arguments: NotRequired[JsonValue]
    builtin: NotRequired[bool]


class OtelToolCallResponsePart(TypedDict):
    """What a tool call returned (or why it is retried)."""

    type: Literal['tool_call_response']
    id: str
    name: str
    result: NotRequired[JsonValue]
    builtin: NotRequired[bool]


class OtelMediaUrlPart(TypedDict):
    """A file by URL, before format 4."""

    type: Literal['image-url', 'audio-url', 'video-url', 'document-url']
    url: NotRequired[str]


class OtelUriPart(TypedDict):
    """A file by URL, from format 4 on (no modality for documents: the conventions name image, audio and video)."""

    type: Literal['uri']
    modality: NotRequired[Literal['image', 'audio', 'video']]
    uri: NotRequired[str]
    mime_type: NotRequired[str]


class OtelFilePart(TypedDict):
    """A file stored by a provider, by its id."""

    type: Literal['file']
    modality: str
    file_id: NotRequired[str]
    mime_type: NotRequired[str]


class OtelBinaryDataPart(TypedDict):
    """File data, before format 4."""

    type: Literal['binary']
    media_type: str
    content: NotRequired[str]


class OtelBlobPart(TypedDict):
    """File data (base64), from format 4 on."""

    type: Literal['blob']
    modality: NotRequired[Literal['image', 'audio', 'video']]
    mime_type: NotRequired[str]
    content: NotRequired[str]


OtelMessagePart: TypeAlias = (
    OtelTextPart
    | OtelThinkingPart
    | OtelToolCallPart
    | OtelToolCallResponsePart
    | OtelMediaUrlPart
    | OtelUriPart
    | OtelFilePart
    | OtelBinaryDataPart
    | OtelBlobPart
)
"""A part of a message, as the conventions write it."""

OtelRole: TypeAlias = Literal['system', 'user', 'assistant', 'tool']
"""Who a message is from."""


class OtelChatMessage(TypedDict):
    """A message: its role and parts."""

    role: OtelRole
    parts: list[OtelMessagePart]


class OtelOutputMessage(OtelChatMessage):
    """A model's response, with why it stopped."""

    finish_reason: NotRequired[str]


def media_modality(media_type: str) -> Literal['image', 'audio', 'video'] | None:
    """The modality of a media type, when it is one the conventions name."""
    category = media_type.partition('/')[0]
    if category == 'image':
        return 'image'
    if category == 'audio':
        return 'audio'
    return 'video' if category == 'video' else None


def binary_part(file: BinaryContent, settings: TraceContentOptions) -> OtelBlobPart | OtelBinaryDataPart:
    """A file's data as a part of the settings' format."""
    with_data = settings.include_content and settings.include_binary_content
    if settings.version < 4:
        old = OtelBinaryDataPart(type='binary', media_type=file.media_type)
        if with_data:
            old['content'] = file.base64
        return old
    blob = OtelBlobPart(type='blob', mime_type=file.media_type)
    if (modality := media_modality(file.media_type)) is not None:
        blob['modality'] = modality
    if with_data:
        blob['content'] = file.base64
    return blob


# Built on first use: importing the agent builds no schema.
_JSON_VALUE: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(
    Any, config=pydantic.ConfigDict(ser_json_bytes='base64', val_json_bytes='base64', defer_build=True)
)


def traced_value(value: Any, settings: TraceContentOptions) -> JsonValue:
    """A tool's result (or arguments) as JSON data for a span; binary content keeps its metadata but loses its data
    when the settings leave binary content out, and what does not serialize is written as its `str`."""
    if not settings.include_binary_content:
        value = _without_binary_data(value, set())
    try:
        return _JSON_VALUE.dump_python(value, mode='json')  # type: ignore[no-any-return]
    except Exception:  # a span never fails a run: what pydantic cannot write is shown as text
        return str(value)


def _without_binary_data(value: Any, walking: set[int]) -> Any:
    if not isinstance(value, BinaryContent | ToolReturn | Mapping | list | tuple):
        return value
    if id(value) in walking:  # a container holding itself
        return '<circular reference>'
    walking.add(id(value))
    try:
        if isinstance(value, BinaryContent):
            return {
                'media_type': value.media_type,
                'vendor_metadata': _without_binary_data(value.vendor_metadata, walking),
                'kind': value.kind,
                'identifier': value.identifier,
            }
        if isinstance(value, ToolReturn):
            return {
                'return_value': _without_binary_data(value.return_value, walking),
                'content': _without_binary_data(value.content, walking),
                'metadata': _without_binary_data(value.metadata, walking),
                'tools': value.tools,
                'kind': value.kind,
            }
        if isinstance(value, Mapping):
            return {key: _without_binary_data(item, walking) for key, item in value.items()}
        return [_without_binary_data(item, walking) for item in value]
    finally:
        walking.discard(id(value))

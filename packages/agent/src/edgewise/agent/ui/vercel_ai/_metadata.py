"""What Edgewise keeps of its own in the Vercel AI wire format: provider metadata of parts and message metadata.

Both sit under the key `pydantic_ai`, as pydantic-ai writes them, so that chats stored by either load in the
other. Of a message only its timestamp is kept: message metadata comes back from the client, and nothing a
client could forge to change the run is read from it.
"""

from __future__ import annotations as _annotations

import contextlib
from datetime import datetime
from typing import Any

import pydantic
import pydantic_core

from ..._tools.mcp_apps import MCP_APPS_UI_TYPE, mcp_app_payload, mcp_app_record
from ...messages import BaseToolReturnPart, ModelMessage, ToolReturnPart
from .request_types import ProviderMetadata
from .response_types import DataChunk, FileChunk, SourceDocumentChunk, SourceUrlChunk

DataCarrier = DataChunk | SourceUrlChunk | SourceDocumentChunk | FileChunk
"""The chunks a tool may add to the stream (in its return's metadata): data, sources, files; no control chunk."""
_CARRIERS = (DataChunk, SourceUrlChunk, SourceDocumentChunk, FileChunk)

__all__ = (
    'METADATA_KEY',
    'apply_message_metadata',
    'dump_message_metadata',
    'part_metadata',
    'read_metadata',
    'metadata_chunks',
    'tool_output',
)

METADATA_KEY = 'pydantic_ai'
MCP_APPS_DATA_TYPE = f'data-{MCP_APPS_UI_TYPE}'
"""The data chunk of an MCP App's tool call (its id is the tool call's), as pydantic-ai 2.68 sends it."""
_TIMESTAMP: pydantic.TypeAdapter[datetime] = pydantic.TypeAdapter(datetime)


def part_metadata(**fields: Any) -> ProviderMetadata | None:
    """The provider metadata of a part: the fields that are set, under `pydantic_ai` (`None` if none is)."""
    kept = {key: value for key, value in fields.items() if value is not None}
    return {METADATA_KEY: kept} if kept else None


def read_metadata(metadata: ProviderMetadata | None) -> dict[str, Any]:
    """Edgewise's fields of a part's provider metadata."""
    return (metadata or {}).get(METADATA_KEY) or {}


def dump_message_metadata(message: ModelMessage) -> dict[str, Any]:
    """A message's metadata as sent: its application metadata and, under `pydantic_ai`, its timestamp."""
    metadata = dict(message.metadata or {})
    if message.timestamp is not None:
        metadata[METADATA_KEY] = {'timestamp': message.timestamp.isoformat()}
    return metadata


def apply_message_metadata(message: ModelMessage, metadata: Any) -> None:
    """Put what a client sent as a message's metadata back on it: the application's and the timestamp."""
    if not isinstance(metadata, dict):
        return
    application = {key: value for key, value in metadata.items() if key != METADATA_KEY}
    if application:
        message.metadata = application
    own = metadata.get(METADATA_KEY)
    if isinstance(own, dict) and own.get('timestamp') is not None:
        # A timestamp the client garbled is not worth failing the request for.
        with contextlib.suppress(pydantic.ValidationError):
            message.timestamp = _TIMESTAMP.validate_python(own['timestamp'])


def tool_output(part: BaseToolReturnPart) -> Any:
    """A tool return's content as JSON values (files as their JSON form)."""
    return pydantic_core.to_jsonable_python(part.content, bytes_mode='base64')


def metadata_chunks(part: ToolReturnPart) -> list[DataCarrier]:
    """The data, source and file chunks a tool returned in its metadata (or as its content), to stream after its
    result; other values, control chunks among them, are left out."""
    if (app := mcp_app_record(part.metadata)) is not None:  # what the front end renders an MCP App from
        return [DataChunk(type=MCP_APPS_DATA_TYPE, id=part.tool_call_id, data=mcp_app_payload(app))]
    value = part.metadata or part.content
    if isinstance(value, _CARRIERS):
        return [value]
    if isinstance(value, list | tuple):
        return [item for item in value if isinstance(item, _CARRIERS)]
    return []

"""The record an MCP App's tool call keeps for the application (SEP-1865, as pydantic-ai 2.68's `MCPToolset` attaches
it): what a front end needs to render the app of the call. Kept here, below the `mcp` package (which needs the MCP
SDK), so that the UI event streams read it without the `mcp` extra."""

from __future__ import annotations as _annotations

from typing import Any, Final

import pydantic
from typing_extensions import TypedDict

__all__ = ('MCP_APPS_UI_TYPE', 'MCP_APP_METADATA_KEY', 'MCPAppToolResult', 'mcp_app_payload', 'mcp_app_record')

MCP_APP_METADATA_KEY: Final = 'mcp_app'
"""The key of `ToolReturnPart.metadata` under which an `MCPAppToolResult` is kept."""
MCP_APPS_UI_TYPE: Final = 'mcp-apps'
"""What the UI protocols call the record: AG-UI's activity type, Vercel AI's data name (`data-mcp-apps`)."""


class MCPAppToolResult(TypedDict):
    """What a front end needs to render the MCP App of one tool call (kept in `ToolReturnPart.metadata['mcp_app']`,
    never sent to the model)."""

    resource_uri: str
    """The `ui://` URI of the app's page, read with `MCPServer.read_resource_for_app`."""
    tool_input: dict[str, Any]
    """The arguments the model called the tool with."""
    result: dict[str, Any]
    """The server's whole `CallToolResult` as sent (camelCase keys: `content`, `structuredContent`, `_meta`,
    `isError`)."""
    toolset_id: str | None
    """The `id` given to the toolset that ran the tool, to send the page's requests to the right server."""


_RECORD: pydantic.TypeAdapter[MCPAppToolResult] | None = None


def mcp_app_record(metadata: Any) -> MCPAppToolResult | None:
    """The MCP App record in a tool return's `metadata`, or `None` when there is none (or it is not one)."""
    if not isinstance(metadata, dict) or (value := metadata.get(MCP_APP_METADATA_KEY)) is None:
        return None
    global _RECORD
    if _RECORD is None:  # built by the first tool return that holds a record
        _RECORD = pydantic.TypeAdapter(MCPAppToolResult)
    try:
        return _RECORD.validate_python(value)
    except pydantic.ValidationError:
        return None


def mcp_app_payload(app: MCPAppToolResult) -> dict[str, Any]:
    """The data the UI protocols send for an MCP App's tool call, with the keys of AG-UI's MCP Apps activity in both
    (as 2.68 does), so one renderer serves both: the toolset's id, when it has one, names the server twice."""
    payload: dict[str, Any] = {
        'resourceUri': app['resource_uri'],
        'toolInput': app['tool_input'],
        'result': app['result'],
    }
    if app['toolset_id'] is not None:
        payload['serverId'] = payload['serverHash'] = app['toolset_id']
    return payload

"""MCP Apps (SEP-1865): tools that render with a UI page of their server, as pydantic-ai 2.68's `MCPToolset` serves
them.

A tool names its page in `_meta.ui.resourceUri` (a `ui://` resource of the server). A call to such a tool returns
its result to the model as usual, and keeps for the application, in the tool return's `metadata['mcp_app']`, an
`MCPAppToolResult`: what a chat front end needs to show the page (never sent to the model). The page runs in the
browser and cannot reach the server, so the host relays its calls: `MCPServer.call_tool_for_app` and
`read_resource_for_app`. A tool whose `_meta.ui.visibility` leaves out `'model'` is one only its page calls: the
model is not shown it.
"""

from __future__ import annotations as _annotations

import copy
from collections.abc import Awaitable, Callable
from typing import Any, Literal, Protocol

from .._tools.mcp_apps import MCP_APP_METADATA_KEY, MCPAppToolResult
from ..messages import ToolReturn
from ..tools import RunContext, ToolDefinition

__all__ = ('MCPAppToolResult', 'app_resource_uri', 'call_app_tool', 'visible_to', 'wire_result')


class AppToolServer(Protocol):
    """What `call_app_tool` needs of the server (an `MCPServer`)."""

    @property
    def id(self) -> str | None: ...

    @property
    def process_tool_call(self) -> Callable[..., Awaitable[Any]] | None: ...

    async def _call_raw(self, name: str, args: dict[str, Any], metadata: dict[str, Any] | None) -> Any: ...

    async def _mapped_result(self, name: str, raw: Any) -> Any: ...


def app_resource_uri(tool_def: ToolDefinition) -> str | None:
    """The page a tool renders with: `_meta.ui.resourceUri`, or the older flat key `ui/resourceUri`."""
    match (tool_def.metadata or {}).get('meta'):
        case {'ui': {'resourceUri': str(uri)}} | {'ui/resourceUri': str(uri)}:
            return uri
        case _:
            return None


def visible_to(meta: dict[str, Any] | None, audience: Literal['model', 'app']) -> bool:
    """Whether a tool with this `_meta` is shown to `audience`: by its `ui.visibility` list, else to both."""
    match meta:
        case {'ui': {'visibility': list(visibility)}}:
            return audience in visibility
        case _:
            return True


def wire_result(raw: dict[str, Any]) -> dict[str, Any]:
    """A `CallToolResult` as the page takes it: its content, structured content and `_meta` when sent, `isError`."""
    wire: dict[str, Any] = {'content': raw.get('content') or []}
    for key in ('structuredContent', '_meta'):
        if raw.get(key) is not None:
            wire[key] = raw[key]
    wire['isError'] = bool(raw.get('isError'))
    return wire


async def call_app_tool(
    server: AppToolServer, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], resource_uri: str
) -> Any:
    """Call the app tool `name` as `MCPServer.call_tool` does, and keep its raw result for the app.

    The record is added only when the value the model gets is the server's result as mapped: a `process_tool_call`
    hook that changed it keeps the raw result (which may hold what the hook meant to hide) from the app.
    """
    sent: dict[str, Any] | None = None
    mapped: Any = None

    async def call_tool_func(called: str, args: dict[str, Any], metadata: dict[str, Any] | None = None) -> Any:
        nonlocal sent, mapped
        raw = await server._call_raw(called, args, metadata)
        value = await server._mapped_result(called, raw)
        if called == name:
            sent, mapped = copy.deepcopy(raw), copy.deepcopy(value)  # a hook may change either in place
        return value

    model_args = copy.deepcopy(tool_args)  # the app gets the model's arguments, not what a hook adds to them
    if server.process_tool_call is not None:
        value = await server.process_tool_call(ctx, call_tool_func, name, tool_args)
    else:
        value = await call_tool_func(name, tool_args)
    if sent is None or value != mapped:
        return value
    app = MCPAppToolResult(
        resource_uri=resource_uri, tool_input=model_args, result=wire_result(sent), toolset_id=server.id
    )
    return ToolReturn(return_value=value, metadata={MCP_APP_METADATA_KEY: app})

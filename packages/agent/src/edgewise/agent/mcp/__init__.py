"""MCP servers as toolsets (extra `edgewise-agent[mcp]`): an agent calls the tools of Model Context Protocol servers.

```python
from edgewise.agent import Agent
from edgewise.agent.mcp import MCPToolset

server = MCPToolset('my_server.py', tool_prefix='files')
agent = Agent('openai:gpt-5', toolsets=[server])

async with agent:  # starts the server process once, for every run inside
    result = await agent.run('List the files in /tmp')
```

Over stdio the server runs as a subprocess spoken to over stdin/stdout (`StdioTransport`); over streamable
HTTP or SSE it runs already (`StreamableHttpTransport`, `SSETransport`). The transports take the arguments of
pydantic-ai 1.x's `MCPServerStdio`, `MCPServerStreamableHTTP` and `MCPServerSSE`, which still work and warn.
The tools are listed once per connection and cached until the server says that they changed
(`notifications/tools/list_changed`). A tool error reported by the server becomes a
retry prompt to the model; a server that cannot be started, stops answering within `timeout` while
connecting, or closes the connection raises `MCPError` naming the server (and the tool, during a call).

`MCPToolset` (pydantic-ai 2.x) is the one class for all of them: `MCPToolset('http://localhost:8000/mcp')`,
`MCPToolset('server.py')`, or `MCPToolset(StdioTransport(...))` for a transport of your own configuration
(`StdioTransport`, `StreamableHttpTransport` and `SSETransport` take the arguments of the 1.x classes, which
still work and warn); `load_mcp_toolsets` reads a configuration file into them.

The package: `_server` (`MCPServer`), `_toolset` (`MCPToolset`), `_apps` (MCP Apps: tools with a UI page),
`_transports` (stdio, streamable HTTP, SSE), `_connection` (JSON-RPC channels and session), `_server_requests`
(sampling, logs), `_mapping` (MCP content to and from messages), `_types` (resources, prompts), `_config`
(`load_mcp_servers`, `load_mcp_toolsets`).
"""

from __future__ import annotations as _annotations

try:
    import mcp as _mcp_sdk  # noqa: F401
except ImportError as _error:  # pragma: no cover - exercised in a subprocess by tests/agent/mcp/test_extra.py
    # A ModuleNotFoundError naming `mcp`, so that tools (and the wheel check) see which distribution is missing.
    raise ModuleNotFoundError(
        'edgewise.agent.mcp needs the MCP Python SDK: install the `mcp` extra, `pip install "edgewise-agent[mcp]"`.',
        name='mcp',
    ) from _error

from ..exceptions import MCPError
from ._apps import MCPAppToolResult
from ._config import load_mcp_servers, load_mcp_toolsets
from ._server import CallToolFunc, ElicitationCallback, LogHandler, MCPServer, ProcessToolCallback, ToolResult
from ._toolset import MCPAuthFunc, MCPHeadersFunc, MCPToolset, MCPToolsetClient, MCPTransport
from ._transports import (
    MCPServerHTTP,
    MCPServerSSE,
    MCPServerStdio,
    MCPServerStreamableHTTP,
    SSETransport,
    StdioTransport,
    StreamableHttpTransport,
)
from ._types import (
    BaseResource,
    ContentBlock,
    EmbeddedResource,
    Icon,
    Prompt,
    PromptArgument,
    PromptMessage,
    PromptResult,
    PromptRole,
    Resource,
    ResourceAnnotations,
    ResourceLink,
    ResourceTemplate,
    ServerCapabilities,
)

__all__ = (
    'BaseResource',
    'CallToolFunc',
    'ContentBlock',
    'ElicitationCallback',
    'EmbeddedResource',
    'Icon',
    'LogHandler',
    'MCPAppToolResult',
    'MCPAuthFunc',
    'MCPError',
    'MCPHeadersFunc',
    'MCPServer',
    'MCPServerHTTP',
    'MCPServerSSE',
    'MCPServerStdio',
    'MCPServerStreamableHTTP',
    'MCPToolset',
    'MCPToolsetClient',
    'MCPTransport',
    'ProcessToolCallback',
    'Prompt',
    'PromptArgument',
    'PromptMessage',
    'PromptResult',
    'PromptRole',
    'Resource',
    'ResourceAnnotations',
    'ResourceLink',
    'ResourceTemplate',
    'SSETransport',
    'ServerCapabilities',
    'StdioTransport',
    'StreamableHttpTransport',
    'ToolResult',
    'load_mcp_servers',
    'load_mcp_toolsets',
)

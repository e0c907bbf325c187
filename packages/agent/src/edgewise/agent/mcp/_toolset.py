"""`MCPToolset`: one class for every MCP server, its transport inferred from what it is given (pydantic-ai 2.x).

A URL is reached over streamable HTTP (over SSE when its path ends in `/sse`), a `.py` or `.js` file is run as a
stdio server with this Python or with node, and a transport object (`StdioTransport`, `StreamableHttpTransport`,
`SSETransport`, or one of the 1.x classes they extend) is used as it is: the toolset keeps its own settings and
opens the connection through it.
"""

from __future__ import annotations as _annotations

import sys
from contextlib import AbstractAsyncContextManager, _AsyncGeneratorContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..exceptions import UserError
from ._server import ElicitationCallback, LogHandler, MCPServer, ProcessToolCallback
from ._transports import (
    MCPServerSSE,
    MCPServerStdio,
    MCPServerStreamableHTTP,
    SSETransport,
    StdioTransport,
    StreamableHttpTransport,
)

if TYPE_CHECKING:
    import httpx
    from mcp import types as mcp_types

    from ..models import Model
    from ._connection import Channel

__all__ = ('MCPToolset', 'MCPTransport')

MCPTransport = MCPServerStdio | MCPServerStreamableHTTP | MCPServerSSE
"""How an `MCPToolset` reaches its server."""


class MCPToolset(MCPServer):
    """The tools (and resources and prompts) of one MCP server, reached over the transport `client` implies.

    `client` is a URL (`'http://localhost:8000/mcp'`: streamable HTTP; a path ending in `/sse`: SSE), a server
    script (`'server.py'` runs with this Python, `'server.js'` with node) or a transport object. Its defaults are
    pydantic-ai 2.x's: a tool may be retried as often as the agent's other tools (`max_retries=None`), the
    connection and handshake take at most `init_timeout` seconds and one request at most `read_timeout`.
    """

    transport: MCPTransport
    """The transport the toolset connects through."""

    def __init__(
        self,
        client: str | Path | MCPTransport,
        *,
        id: str | None = None,
        max_retries: int | None = None,
        tool_prefix: str | None = None,
        process_tool_call: ProcessToolCallback | None = None,
        cache_tools: bool = True,
        cache_resources: bool = True,
        cache_prompts: bool = True,
        include_instructions: bool = False,
        include_return_schema: bool | None = None,
        sampling_model: Model | None = None,
        allow_sampling: bool = True,
        elicitation_handler: ElicitationCallback | None = None,
        log_handler: LogHandler | None = None,
        log_level: mcp_types.LoggingLevel | None = None,
        client_info: mcp_types.Implementation | None = None,
        init_timeout: float = 5,
        read_timeout: float = 5 * 60,
        headers: dict[str, str] | None = None,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        """Describe the server; nothing connects until the toolset is entered (`async with agent:`).

        Args:
            client: A URL, a server script or a transport object (see the class).
            id: A unique id of the toolset (defaults to `tool_prefix`).
            max_retries: How many times in a row each tool may be retried; `None`: the agent's tool retries.
            tool_prefix: Prepended, with an underscore, to the name of each of the server's tools.
            process_tool_call: A hook around each tool call.
            cache_tools: Whether to keep the tool list until the server says it changed.
            cache_resources: Whether to keep the resource list until the server says it changed.
            cache_prompts: Whether to keep the prompt list until the server says it changed.
            include_instructions: Whether to add the server's instructions to the agent's.
            include_return_schema: Whether to tell the model each tool's output schema.
            sampling_model: The model that answers sampling requests (else the running agent's model).
            allow_sampling: Whether the server may ask the agent's model for completions.
            elicitation_handler: Answers the server's requests for input from the user.
            log_handler: Receives the server's log messages.
            log_level: The level of the log messages the server is asked to send.
            client_info: How the client introduces itself in the handshake.
            init_timeout: Seconds to start or reach the server and complete the handshake.
            read_timeout: Seconds to wait for the answer to one request.
            headers: HTTP headers for a server given by its URL; exclusive with `http_client`.
            http_client: The HTTP client for a server given by its URL; exclusive with `headers`.

        Raises:
            UserError: `client` is none of the above, or `headers`/`http_client` are given for a server that is
                not given by its URL.
        """
        self.transport = _transport(client, headers, http_client, init_timeout, read_timeout)
        super().__init__(
            tool_prefix,
            log_level,
            log_handler,
            init_timeout,
            read_timeout,
            process_tool_call,
            allow_sampling,
            sampling_model,
            max_retries,  # type: ignore[arg-type]  # None: the agent's, resolved per run in get_tools
            elicitation_handler,
            cache_prompts=cache_prompts,
            cache_tools=cache_tools,
            cache_resources=cache_resources,
            include_instructions=include_instructions,
            include_return_schema=include_return_schema,
            id=id,
            client_info=client_info,
        )

    @property
    def init_timeout(self) -> float:
        """Seconds to start or reach the server and complete the handshake (`timeout` in 1.x)."""
        return self.timeout

    def client_streams(self) -> AbstractAsyncContextManager[tuple[Any, Any]]:
        """The MCP SDK's client streams of the transport."""
        return self.transport.client_streams()

    def _open_channel(self) -> _AsyncGeneratorContextManager[Channel]:
        return self.transport._open_channel()

    def _endpoint(self) -> tuple[Any, ...]:
        return (type(self.transport), self.transport._endpoint())

    def __repr__(self) -> str:
        shown = [repr(self.transport)]
        if self.id:
            shown.append(f'id={self.id!r}')
        return f'MCPToolset({", ".join(shown)})'


def _transport(
    client: str | Path | MCPTransport,
    headers: dict[str, str] | None,
    http_client: httpx.AsyncClient | None,
    init_timeout: float,
    read_timeout: float,
) -> MCPTransport:
    timeouts: dict[str, Any] = {'timeout': init_timeout, 'read_timeout': read_timeout}
    if isinstance(client, MCPServerStdio | MCPServerStreamableHTTP | MCPServerSSE):
        transport = client
    elif isinstance(client, str) and client.startswith(('http://', 'https://')):
        kind = SSETransport if urlsplit(client).path.rstrip('/').endswith('/sse') else StreamableHttpTransport
        return kind(client, headers=headers, http_client=http_client, **timeouts)
    elif isinstance(client, str | Path) and Path(client).suffix in ('.py', '.js'):
        command = sys.executable if Path(client).suffix == '.py' else 'node'
        transport = StdioTransport(command, [str(client)], **timeouts)
    else:
        raise UserError(
            f'`MCPToolset` cannot tell how to reach the MCP server {client!r}: give an http(s) URL, a server script '
            '(`.py` or `.js`), or a transport (`StdioTransport(...)`, `StreamableHttpTransport(...)`, '
            '`SSETransport(...)`).'
        )
    if headers is not None or http_client is not None:
        raise UserError(
            '`headers` and `http_client` apply to an MCP server given by its URL; give them to the transport '
            f'{transport!r} instead.'
        )
    return transport

"""`MCPToolset`: one class for every MCP server, its transport inferred from what it is given (pydantic-ai 2.x).

A URL is reached over streamable HTTP (over SSE when its path ends in `/sse`), a `.py` or `.js` file is run as a
stdio server with this Python or with node, and a transport object (`StdioTransport`, `StreamableHttpTransport`,
`SSETransport`, or one of the 1.x classes they extend) is used as it is: the toolset keeps its own settings and
opens the connection through it.
"""

from __future__ import annotations as _annotations

import copy
import sys
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, _AsyncGeneratorContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self
from urllib.parse import urlsplit

import httpx
from pydantic import AnyUrl
from typing_extensions import TypeAliasType

from .._functions.runners import call_user_function
from ..exceptions import UserError
from ..tools import AgentDepsT, RunContext
from ._connection import MCPSession
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
    from mcp import types as mcp_types

    from ..models import Model
    from ._connection import Channel

__all__ = ('MCPAuthFunc', 'MCPHeadersFunc', 'MCPToolset', 'MCPToolsetClient', 'MCPTransport')

MCPTransport = MCPServerStdio | MCPServerStreamableHTTP | MCPServerSSE
"""How an `MCPToolset` reaches its server."""

MCPToolsetClient = TypeAliasType('MCPToolsetClient', MCPTransport | AnyUrl | Path | str)
"""What `MCPToolset` takes as its `client`: a transport object, a URL (a string or pydantic's `AnyUrl`), or the
path of a server script (pydantic-ai 2.68 also takes FastMCP clients and servers, which Edgewise does not use)."""

MCPAuthFunc = TypeAliasType(
    'MCPAuthFunc',
    Callable[[RunContext[AgentDepsT]], httpx.Auth | str | Awaitable[httpx.Auth | str | None] | None],
    type_params=(AgentDepsT,),
)
"""A function (sync or async) of the run context giving the `auth` of that run's connection: an `httpx.Auth`, a
bearer token, or `None` for none. Given as `MCPToolset(url, auth=...)`, each run connects as its own user."""

MCPHeadersFunc = TypeAliasType(
    'MCPHeadersFunc',
    Callable[[RunContext[AgentDepsT]], dict[str, str] | Awaitable[dict[str, str] | None] | None],
    type_params=(AgentDepsT,),
)
"""A function (sync or async) of the run context giving the HTTP `headers` of that run's connection."""


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
        client: MCPToolsetClient,
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
        headers: dict[str, str] | MCPHeadersFunc[Any] | None = None,
        http_client: httpx.AsyncClient | None = None,
        auth: httpx.Auth | str | MCPAuthFunc[Any] | None = None,
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
            headers: HTTP headers for a server given by its URL, or a function of the run context giving them
                (`MCPHeadersFunc`); exclusive with `http_client`.
            http_client: The HTTP client for a server given by its URL, borrowed (the toolset never closes it, and
                may connect through it again); exclusive with `headers`. With `auth` (a function of the run context
                too), each request through it authenticates with that auth; every run's connection uses it, and so
                shares its cookies.
            auth: How a server given by its URL is authenticated to: an `httpx.Auth`, a bearer token, or a function
                of the run context giving either (`MCPAuthFunc`).

        With a function as `auth` or `headers`, each agent run connects with a copy of the toolset of its own
        (`for_run`), made with what the function gives for the run: each run talks to the server as its own user.
        Such a toolset connects only as part of a run (entering it, as `async with agent:` does, is a no-op), or
        through the copy `await toolset.for_run(ctx)` gives.

        Raises:
            UserError: `client` is none of the above, `headers`/`http_client`/`auth` are given for a server that
                is not given by its URL, or `auth` is `'oauth'` (FastMCP's browser sign-in, not supported).
        """
        static_auth: httpx.Auth | str | None = None
        static_headers: dict[str, str] | None = None
        self._auth_func: MCPAuthFunc[Any] | None = None
        self._headers_func: MCPHeadersFunc[Any] | None = None
        if auth is None or isinstance(auth, httpx.Auth | str):
            static_auth = auth
        else:
            self._auth_func = auth
        if headers is None or isinstance(headers, dict):
            static_headers = headers
        else:
            self._headers_func = headers
        per_run = self._auth_func is not None or self._headers_func is not None
        if per_run and not _is_url(client):
            raise UserError(
                f'`MCPToolset` takes `auth` or `headers` as a function of the run context only for a server given by '
                f'its URL, not {client!r}.'
            )
        self.transport = _transport(
            client,
            static_headers,
            http_client,
            static_auth,
            init_timeout,
            read_timeout,
            headers_per_run=self._headers_func is not None,
        )
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

    @property
    def _resolves_per_run(self) -> bool:
        return self._auth_func is not None or self._headers_func is not None

    async def for_run(self, ctx: RunContext[Any]) -> Self:
        """This toolset; or, when `auth` or `headers` is a function, a copy of it for the run (its own connection,
        with what the functions give for `ctx`)."""
        if not self._resolves_per_run:
            return self
        transport = self.transport
        assert isinstance(transport, MCPServerStreamableHTTP | MCPServerSSE), 'a per-run toolset has a URL'
        auth: httpx.Auth | str | None = transport.auth
        if self._auth_func is not None:
            auth = await call_user_function(self._auth_func, ctx)
            if not (isinstance(auth, httpx.Auth) or (isinstance(auth, str) and auth) or auth is None):
                raise UserError(
                    f'The `auth` function of {self!r} returned {type(auth).__name__}: it must return an `httpx.Auth`, '
                    'a non-empty bearer token or `None` (no auth).'
                )
        headers = transport.headers
        if self._headers_func is not None:
            headers = await call_user_function(self._headers_func, ctx)
            if headers is not None and not _string_mapping(headers):
                raise UserError(
                    f'The `headers` function of {self!r} returned {type(headers).__name__}: it must return a mapping '
                    'of header names to string values, or `None`.'
                )
        for_run = copy.copy(self)
        for_run._fresh_connection_state()
        for_run._auth_func = for_run._headers_func = None
        # A client given to the toolset serves every run's connection (as in pydantic-ai 2.68: they share its cookies;
        # with runs acting for different users, leave it out).
        for_run.transport = _transport(
            transport.url,
            headers,
            transport.http_client,
            auth,
            transport.timeout,
            transport.read_timeout,
            headers_per_run=False,
        )
        return for_run

    async def __aenter__(self) -> Self:
        """Connect (see `MCPServer`); a toolset whose `auth` or `headers` is a function connects only through
        the copy of each run, so entering it does nothing."""
        if self._resolves_per_run:
            return self
        return await super().__aenter__()

    async def __aexit__(self, *args: Any) -> bool | None:
        if self._resolves_per_run:
            return None
        return await super().__aexit__(*args)

    def _connected(self) -> AbstractAsyncContextManager[MCPSession]:
        if self._resolves_per_run:
            raise UserError(
                f'{self!r} takes its `auth` or `headers` from the run context, so it connects only during an agent '
                'run, or through the copy `await toolset.for_run(ctx)` gives.'
            )
        return super()._connected()

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
    client: MCPToolsetClient,
    headers: dict[str, str] | None,
    http_client: httpx.AsyncClient | None,
    auth: httpx.Auth | str | None,
    init_timeout: float,
    read_timeout: float,
    *,
    headers_per_run: bool,
) -> MCPTransport:
    timeouts: dict[str, Any] = {'timeout': init_timeout, 'read_timeout': read_timeout}
    if isinstance(client, AnyUrl):
        client = str(client)
    if isinstance(client, MCPServerStdio | MCPServerStreamableHTTP | MCPServerSSE):
        transport = client
    elif isinstance(client, str) and client.startswith(('http://', 'https://')):
        if headers_per_run and http_client is not None:
            raise UserError(
                '`http_client` and `headers` exclude each other, a `headers` function too: set the headers on the '
                'client, or leave it out (each run then opens its own client with the headers the function gives).'
            )
        kind = SSETransport if urlsplit(client).path.rstrip('/').endswith('/sse') else StreamableHttpTransport
        return kind(client, headers=headers, http_client=http_client, auth=auth, **timeouts)
    elif isinstance(client, str | Path) and Path(client).suffix in ('.py', '.js'):
        command = sys.executable if Path(client).suffix == '.py' else 'node'
        transport = StdioTransport(command, [str(client)], **timeouts)
    else:
        raise UserError(
            f'`MCPToolset` cannot tell how to reach the MCP server {client!r}: give an http(s) URL, a server script '
            '(`.py` or `.js`), or a transport (`StdioTransport(...)`, `StreamableHttpTransport(...)`, '
            '`SSETransport(...)`).'
        )
    if headers is not None or http_client is not None or auth is not None:
        raise UserError(
            '`headers`, `http_client` and `auth` apply to an MCP server given by its URL; give them to the transport '
            f'{transport!r} instead.'
        )
    return transport


def _is_url(client: MCPToolsetClient) -> bool:
    return isinstance(client, AnyUrl) or (isinstance(client, str) and client.startswith(('http://', 'https://')))


def _string_mapping(value: object) -> bool:
    """Whether `value` maps header names to string values."""
    return isinstance(value, Mapping) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())

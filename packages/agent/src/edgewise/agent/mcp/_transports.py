"""The MCP transports: a server run as a subprocess (stdio), and servers reached over HTTP (streamable HTTP, SSE)."""

from __future__ import annotations as _annotations

import functools
import inspect
import warnings
from collections.abc import AsyncIterator, Generator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, Self

import httpx
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, get_default_environment, stdio_client
from mcp.client.streamable_http import streamable_http_client
from pydantic_core import CoreSchema, core_schema
from typing_extensions import Unpack, deprecated

from .._functions.keyword_options import KeywordOptions
from .._warnings import PydanticAIDeprecationWarning
from ..exceptions import UserError
from ._connection import Channel, open_stdio_channel
from ._server import MCPServer, MCPServerOptions
from ._streamable_http import open_streamable_http_channel

__all__ = (
    'MCPServerHTTP',
    'MCPServerSSE',
    'MCPServerStdio',
    'MCPServerStreamableHTTP',
    'SSETransport',
    'StdioTransport',
    'StreamableHttpTransport',
)


_STRINGS = core_schema.dict_schema(core_schema.str_schema(), core_schema.str_schema())
_STDIO_FIELDS = {
    'command': core_schema.typed_dict_field(core_schema.str_schema()),
    'args': core_schema.typed_dict_field(core_schema.list_schema(core_schema.str_schema())),
    'env': core_schema.typed_dict_field(_STRINGS, required=False),
    'cwd': core_schema.typed_dict_field(core_schema.str_schema(), required=False),
}
_HTTP_FIELDS = {
    'url': core_schema.typed_dict_field(core_schema.str_schema()),
    'headers': core_schema.typed_dict_field(_STRINGS, required=False),
}


def _config_schema(cls: Any, fields: dict[str, core_schema.TypedDictField]) -> CoreSchema:
    """Validate the fields of a configuration entry (see `load_mcp_servers`), then build the server from them."""
    return core_schema.no_info_after_validator_function(
        # A field typed with a 1.x class holds its transport subclass: validating data is no use of the 1.x name.
        lambda values: _TRANSPORTS.get(cls, cls)(**values),
        core_schema.typed_dict_schema(fields),
    )


class MCPServerStdio(MCPServer):
    """An MCP server run as a subprocess, spoken to over its stdin and stdout.

    The process starts when the server is entered (`async with server:`, or `async with agent:`) and is
    stopped when it is left: its stdin is closed, then, if it has not exited after two seconds, its process
    group is sent SIGTERM and then SIGKILL.
    """

    command: str
    """The program to run."""
    args: Sequence[str]
    """Its arguments."""
    env: dict[str, str] | None
    """Variables added to the subprocess's environment. The subprocess does not inherit the parent's
    environment, only a few safe variables (`HOME`, `PATH`, ...); pass `env=dict(os.environ)` to give it all."""
    cwd: str | Path | None
    """The working directory of the subprocess."""

    def __init__(
        self,
        command: str,
        args: Sequence[str],
        *,
        env: dict[str, str] | None = None,
        cwd: str | Path | None = None,
        **options: Unpack[MCPServerOptions],
    ) -> None:
        """Describe the server process; nothing starts until the server is entered.

        Args:
            command: The program to run.
            args: Its arguments.
            env: Variables added to the subprocess's environment.
            cwd: The working directory of the subprocess.
            **options: The server's options (`MCPServerOptions`: `tool_prefix`, `timeout`, `read_timeout`,
                `max_retries`, `process_tool_call`, `id`, ...), each as the attribute of `MCPServer` says.
        """
        _warn_if_1x_class(self)
        self.command = command
        self.args = args
        self.env = env
        self.cwd = cwd
        super().__init__(**options)

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> CoreSchema:
        """Validates `{"command": ..., "args": [...], "env": {...}, "cwd": ...}` into a server."""
        return _config_schema(cls, _STDIO_FIELDS)

    def _endpoint(self) -> tuple[Any, ...]:
        return (self.command, list(self.args), self.env, self.cwd)

    @asynccontextmanager
    async def client_streams(self) -> AsyncIterator[tuple[Any, Any]]:
        """The MCP SDK's stdio transport to the server (the client itself uses a faster one of its own)."""
        parameters = StdioServerParameters(command=self.command, args=list(self.args), env=self.env, cwd=self.cwd)
        async with stdio_client(parameters) as (read_stream, write_stream):
            yield read_stream, write_stream

    def _open_channel(self) -> Any:
        env = {**get_default_environment(), **(self.env or {})}
        return open_stdio_channel(self.command, list(self.args), env, self.cwd)

    def __repr__(self) -> str:
        shown = [f'command={self.command!r}', f'args={list(self.args)!r}']
        if self.id:
            shown.append(f'id={self.id!r}')
        # `env` is left out: it often holds secrets (API keys).
        return f'{type(self).__name__}({", ".join(shown)})'


class _MCPServerHTTP(MCPServer):
    """What the HTTP transports share: the URL, headers or an `httpx.AsyncClient`."""

    url: str
    """The server's endpoint."""
    headers: dict[str, str] | None
    """HTTP headers sent with every request (authentication, say); exclusive with `http_client`."""
    http_client: httpx.AsyncClient | None
    """The HTTP client to use (custom TLS, proxies, pooling); exclusive with `headers`. It is borrowed: the transport
    never closes it (its owner does), and can connect through it again."""
    auth: httpx.Auth | None
    """How every request authenticates (a bearer token given as a string is an `httpx.Auth` sending it)."""

    def __init__(
        self,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        http_client: httpx.AsyncClient | None = None,
        auth: httpx.Auth | str | None = None,
        **options: Unpack[MCPServerOptions],
    ) -> None:
        """Describe the server's endpoint; nothing connects until the server is entered.

        Args:
            url: The server's endpoint.
            headers: HTTP headers sent with every request; exclusive with `http_client` (set them on the client).
            http_client: The HTTP client to use, borrowed (never closed here); exclusive with `headers`.
            auth: An `httpx.Auth`, or a bearer token (sent as `Authorization: Bearer <token>`); with `http_client`,
                each request through the client authenticates with it.
            **options: The server's options (`MCPServerOptions`: `tool_prefix`, `timeout`, `read_timeout`,
                `max_retries`, `process_tool_call`, `id`, ...), each as the attribute of `MCPServer` says.
        """
        _warn_if_1x_class(self)
        if headers is not None and http_client is not None:
            raise UserError('`http_client` and `headers` exclude each other: set the headers on the client.')
        if auth == 'oauth':
            raise UserError(
                "`auth='oauth'` (FastMCP's browser sign-in) is not supported: give an `httpx.Auth` that runs your "
                'OAuth flow, or a bearer token.'
            )
        self.url = url
        self.headers = headers
        self.http_client = http_client
        self.auth = BearerToken(auth) if isinstance(auth, str) else auth
        super().__init__(**options)

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> CoreSchema:
        """Validates `{"url": ..., "headers": {...}}` into a server."""
        return _config_schema(cls, _HTTP_FIELDS)

    def _endpoint(self) -> tuple[Any, ...]:
        return (self.url,)

    def _borrowed(self) -> BorrowedClient | None:
        """`http_client`, lent to the MCP SDK's transport: not closed by it, and authenticating with `auth`."""
        return None if self.http_client is None else BorrowedClient(self.http_client, self.auth)

    def __repr__(self) -> str:
        shown = [f'url={self.url!r}']
        if self.id:
            shown.append(f'id={self.id!r}')
        # `headers` are left out: they often hold credentials.
        return f'{type(self).__name__}({", ".join(shown)})'


class BorrowedClient:
    """A caller's `httpx.AsyncClient` lent to a transport: entering, leaving or closing it leaves the client open (its
    owner closes it), and with an `auth`, each request made through it authenticates with that auth (the client's
    own headers, timeouts, TLS and pool stay as they are)."""

    _SENDING = frozenset({'request', 'stream', 'send', 'get', 'post', 'put', 'patch', 'delete', 'head', 'options'})

    def __init__(self, client: httpx.AsyncClient, auth: httpx.Auth | None) -> None:
        self._client = client
        self._auth = auth

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        return None

    async def aclose(self) -> None:
        """Nothing: the client's owner closes it."""

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._client, name)
        if self._auth is not None and name in self._SENDING:
            return functools.partial(found, auth=self._auth)
        return found


class BearerToken(httpx.Auth):
    """Sends a bearer token with each request (`auth='<token>'`); its repr hides the token."""

    def __init__(self, token: str) -> None:
        self._token = token

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers['Authorization'] = f'Bearer {self._token}'
        yield request

    def __repr__(self) -> str:
        return 'BearerToken(***)'


class MCPServerStreamableHTTP(_MCPServerHTTP):
    """An MCP server reached over the streamable HTTP transport (`http://host:port/mcp`)."""

    @asynccontextmanager
    async def client_streams(self) -> AsyncIterator[tuple[Any, Any]]:
        """The MCP SDK's streamable HTTP transport to the server."""
        async with AsyncExitStack() as stack:
            client: Any = self._borrowed()
            if client is None:
                timeout = httpx.Timeout(self.timeout, read=self.read_timeout)
                client = httpx.AsyncClient(timeout=timeout, headers=self.headers, auth=self.auth)
                await stack.enter_async_context(client)
            read_stream, write_stream, _ = await stack.enter_async_context(
                streamable_http_client(self.url, http_client=client)
            )
            yield read_stream, write_stream

    @asynccontextmanager
    async def _open_channel(self) -> AsyncIterator[Channel]:
        """Edgewise's own streamable HTTP channel (the SDK's transport loses answers under trio when calls run
        concurrently); `client_streams` stays for code that uses the SDK's streams."""
        async with AsyncExitStack() as stack:
            client: Any = self._borrowed()  # (stands for an `httpx.AsyncClient`: the channel streams and deletes)
            if client is None:
                timeout = httpx.Timeout(self.timeout, read=self.read_timeout)
                client = httpx.AsyncClient(timeout=timeout, headers=self.headers, auth=self.auth)
                await stack.enter_async_context(client)
            yield await stack.enter_async_context(open_streamable_http_channel(client, self.url))


class MCPServerSSE(_MCPServerHTTP):
    """An MCP server reached over the older HTTP + server-sent events transport (`http://host:port/sse`)."""

    @asynccontextmanager
    async def client_streams(self) -> AsyncIterator[tuple[Any, Any]]:
        """The MCP SDK's SSE transport to the server."""
        borrowed = self._borrowed()

        def client_factory(
            headers: dict[str, str] | None = None, timeout: httpx.Timeout | None = None, auth: httpx.Auth | None = None
        ) -> httpx.AsyncClient:
            if borrowed is not None:
                return borrowed  # type: ignore[return-value]  # it stands for the client the SDK asks for
            return httpx.AsyncClient(headers=headers, timeout=timeout, auth=auth, follow_redirects=True)

        async with sse_client(
            self.url,
            headers=self.headers,
            timeout=self.timeout,
            sse_read_timeout=self.read_timeout,
            httpx_client_factory=client_factory,
            auth=self.auth,
        ) as (read_stream, write_stream):
            yield read_stream, write_stream


@deprecated('`MCPServerHTTP` is deprecated, use `MCPServerSSE` instead.')
class MCPServerHTTP(MCPServerSSE):
    """The old name of `MCPServerSSE` (deprecated, as in pydantic-ai)."""


class StdioTransport(MCPServerStdio):
    """The stdio transport of an `MCPToolset` (`MCPToolset(StdioTransport('python', ['server.py']))`): an MCP server
    run as a subprocess. It takes `MCPServerStdio`'s arguments, and is one without its deprecation warning."""


class StreamableHttpTransport(MCPServerStreamableHTTP):
    """The streamable HTTP transport of an `MCPToolset`; it takes `MCPServerStreamableHTTP`'s arguments."""


class SSETransport(MCPServerSSE):
    """The HTTP + server-sent events transport of an `MCPToolset`; it takes `MCPServerSSE`'s arguments."""


_TRANSPORTS: dict[type[MCPServer], type[MCPServer]] = {
    MCPServerStdio: StdioTransport,
    MCPServerStreamableHTTP: StreamableHttpTransport,
    MCPServerSSE: SSETransport,
}
_1X_CLASSES: dict[type[MCPServer], str] = {
    MCPServerStdio: 'StdioTransport',
    MCPServerStreamableHTTP: 'StreamableHttpTransport',
    MCPServerSSE: 'SSETransport',
}


def _warn_if_1x_class(server: MCPServer) -> None:
    """Warn when `server` is made as one of pydantic-ai 1.x's per-transport classes itself (not a subclass)."""
    transport = _1X_CLASSES.get(type(server))
    if transport is not None:
        warnings.warn(
            f'`{type(server).__name__}` is deprecated: use `MCPToolset` (pydantic-ai 2.x), with a URL or script, or '
            f'with `{transport}(...)` (the same arguments) as its transport.',
            PydanticAIDeprecationWarning,
            stacklevel=3,
        )


def _server_options() -> KeywordOptions:
    """`MCPServerOptions` with the defaults `MCPServer.__init__` gives them (so each is written there only)."""
    parameters = list(inspect.signature(MCPServer.__init__).parameters.values())[1:]
    return KeywordOptions(MCPServerOptions, {p.name: p.default for p in parameters})


_SERVER_OPTIONS = _server_options()
_SERVER_OPTIONS.signed(MCPServerStdio.__init__)
_SERVER_OPTIONS.signed(_MCPServerHTTP.__init__)

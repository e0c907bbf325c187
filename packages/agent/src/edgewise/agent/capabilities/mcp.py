"""`MCP`: a remote MCP server as a capability, run by the model's provider where it can (`MCPServerTool`) and
connected to from here (an `MCPToolset`) where it cannot; from here by default, as in pydantic-ai 2.x."""

from __future__ import annotations as _annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from typing_extensions import TypeAliasType

from ..exceptions import UserError
from ..native_tools import MCPServerTool
from ..tools import AgentDepsT, RunContext, Tool
from ..toolsets import AbstractToolset
from .native_or_local import NativeOrLocalTool

__all__ = ('MCP', 'MCPAuthorizationTokenFunc', 'MCPHeadersFunc')

NativeMCP = MCPServerTool | Callable[[RunContext[Any]], Awaitable[MCPServerTool | None] | MCPServerTool | None]
"""What `MCP(native=...)` takes besides `True`/`False`: the native tool, or a function of the run context making
one (or `None`) per request."""

# Alias objects of their own (not plain `Callable[...]`), so that they name this module as theirs.
MCPAuthorizationTokenFunc = TypeAliasType(
    'MCPAuthorizationTokenFunc',
    Callable[[RunContext[AgentDepsT]], str | Awaitable[str | None] | None],
    type_params=(AgentDepsT,),
)
"""A function (sync or async) of the run context giving the `authorization_token` of that run (`None`: no
`Authorization` header)."""

MCPHeadersFunc = TypeAliasType(
    'MCPHeadersFunc',
    Callable[[RunContext[AgentDepsT]], dict[str, str] | Awaitable[dict[str, str] | None] | None],
    type_params=(AgentDepsT,),
)
"""A function (sync or async) of the run context giving the HTTP `headers` of that run."""


@dataclass(init=False, repr=False)
class MCP(NativeOrLocalTool[AgentDepsT]):
    """The tools of the MCP server at `url`, listed and called from here through a Streamable HTTP connection (an
    SSE one for a URL ending in `/sse`, with the `mcp` extra), or, with `native=True`, sent to the model as an
    `MCPServerTool` when its provider can call MCP servers itself (OpenAI Responses, Anthropic, xAI).

    As in pydantic-ai 2.x, the server is connected to from here by default (`native=False`); `native=True` prefers
    the provider's MCP support with the local connection as a fallback (pydantic-ai 1.x's default), and
    `native=True, local=False` never connects from here. `local` also takes another `http(s)` URL to connect to,
    or a toolset of your own (an `MCPToolset`, say).
    """

    url: str | None = field(default=None, kw_only=True)
    """The server's URL (for OpenAI's connectors, `x-openai-connector:<id>`: native only); `None` when the native
    tool given (`native=MCPServerTool(...)`) or the toolset given as `local` says where the server is."""

    authorization_token: str | MCPAuthorizationTokenFunc[AgentDepsT] | None = None
    """The `Authorization` header value, given to the provider and to the local connection; or a function of the
    run context giving it, called as each run starts, so that each run connects as its own user (a token from the
    run's `deps`, say)."""

    headers: dict[str, str] | MCPHeadersFunc[AgentDepsT] | None = None
    """HTTP headers for the server, given to the provider and to the local connection; or, like
    `authorization_token`, a function of the run context called as each run starts."""

    allowed_tools: list[str] | None = None
    """The only tools of the server the model may call, native or local; `None` for all."""

    def __init__(
        self,
        url: str | None = None,
        *,
        native: NativeMCP | bool = False,
        local: str | AbstractToolset[AgentDepsT] | Tool[AgentDepsT] | Callable[..., Any] | bool | None = None,
        id: str | None = None,
        authorization_token: str | MCPAuthorizationTokenFunc[AgentDepsT] | None = None,
        headers: dict[str, str] | MCPHeadersFunc[AgentDepsT] | None = None,
        allowed_tools: list[str] | None = None,
        description: str | None = None,
        defer_loading: bool = False,
    ) -> None:
        """Connect to the MCP server at `url` (see the class docstring for `native` and `local`); `id` names the
        server (by default, from the URL's host and last path segment); `description` is for the provider.

        Raises:
            UserError: `native=True` or `local=True` without a `url` to build the tool from, or a `local` of a
                kind it cannot use.
        """
        if url is None and native is True:
            raise UserError(
                "MCP(native=True) requires `url=`: the provider needs the server's URL. Pass `url=`, or the native "
                'tool itself (`native=MCPServerTool(id=..., url=...)`), or leave `native=False` and pass the '
                'toolset as `local=` (an `MCPToolset`, say).'
            )
        if not (local is None or isinstance(local, bool | str | AbstractToolset | Tool) or callable(local)):
            raise UserError(
                f'MCP(local={local!r}): give a URL, True/False, a toolset (such as an `MCPToolset`), a `Tool` or '
                'a function.'
            )
        self.url = url
        if id is None:
            id = native.id if isinstance(native, MCPServerTool) else None if url is None else _id_from_url(url)
        self.authorization_token = authorization_token
        self.headers = headers
        self.allowed_tools = allowed_tools
        self._given = (native, local)
        self._init_common(native=native, local=local, id=id, defer_loading=defer_loading, description=description)
        self.__post_init__()

    @classmethod
    def from_spec(
        cls,
        url: str,
        *,
        native: bool = False,
        local: str | bool | None = None,
        id: str | None = None,
        authorization_token: str | None = None,
        headers: dict[str, str] | None = None,
        allowed_tools: list[str] | None = None,
        description: str | None = None,
        defer_loading: bool = False,
    ) -> MCP[Any]:
        """The capability from an agent spec's arguments: those a spec can hold (`native` a bool, `local` a URL or
        a bool)."""
        return cls(
            url, native=native, local=local, id=id, authorization_token=authorization_token, headers=headers,
            allowed_tools=allowed_tools, description=description, defer_loading=defer_loading,
        )  # fmt: skip

    async def for_run(self, ctx: RunContext[AgentDepsT]) -> MCP[AgentDepsT]:
        """This capability, or, when `authorization_token` or `headers` is a function, a copy for the run with what
        they give for `ctx` (its native tool and local connection made with them)."""
        token, headers = self.authorization_token, self.headers
        if not callable(token) and not callable(headers):
            return self
        if callable(token):
            token = await _maybe_awaited(token(ctx))
        if callable(headers):
            headers = await _maybe_awaited(headers(ctx))
        native, local = self._given
        return MCP(
            self.url, native=native, local=local, id=self.id, authorization_token=token, headers=headers,
            allowed_tools=self.allowed_tools, description=self.description, defer_loading=self.defer_loading,
        )  # fmt: skip

    def _credentials(self) -> tuple[str | None, dict[str, str] | None]:
        """The token and headers given as values (a function is only called as a run starts, by `for_run`)."""
        token, headers = self.authorization_token, self.headers
        return (None if callable(token) else token), (None if callable(headers) else headers)

    def __repr__(self) -> str:
        # The token and the headers may hold secrets.
        token = '***' if self.authorization_token else None
        headers = '***' if self.headers else None
        return (
            f'MCP(url={self.url!r}, id={self.id!r}, native={self.native!r}, local={self.local!r}, '
            f'authorization_token={token}, headers={headers}, allowed_tools={self.allowed_tools!r})'
        )

    def _default_native(self) -> MCPServerTool:
        assert self.url is not None, '`native=True` without a URL is refused by `__init__`'
        token, headers = self._credentials()
        return MCPServerTool(
            id=self.id or _id_from_url(self.url), url=self.url, authorization_token=token,
            headers=headers, allowed_tools=self.allowed_tools, description=self.description,
        )  # fmt: skip

    def _native_unique_id(self) -> str:
        if isinstance(self.native, MCPServerTool):
            return self.native.unique_id
        return f'{MCPServerTool.kind}:{self.id}'

    def _default_local(self) -> AbstractToolset[AgentDepsT] | None:
        # For a URL only the provider can reach there is no local fallback: the model then has to support MCP
        # servers natively. Without the `mcp` extra, the connection cannot be made: `UserError` (as pydantic-ai
        # 2.33), `local=False` leaves it out.
        if self.url is None or not _is_http_url(self.url):
            return None
        return self._connect_or_explain(self.url)

    def _resolve_local_strategy(self, name: str | bool) -> AbstractToolset[AgentDepsT]:
        url = self.url if name is True or name is False else name
        if url is None:
            raise UserError(
                'MCP(local=True) requires `url=` to connect to. Pass `url=`, or the toolset itself as `local=` (an '
                '`MCPToolset`, say).'
            )
        if not _is_http_url(url):
            raise UserError(
                f'MCP(local={url!r}) must be an `http(s)://` URL. To reach a server another way (a local script, '
                'say), pass the toolset itself: `local=MCPToolset("server.py")`.'
            )
        return self._connect_or_explain(url)

    def _connect_or_explain(self, url: str) -> AbstractToolset[AgentDepsT]:
        try:
            return self._connect(url)
        except ImportError as e:
            raise UserError(
                'MCP(...) connects to the server from here with the MCP SDK, an extra: `pip install '
                '"edgewise-agent[mcp]"`; or pass `native=True, local=False` to leave the connection to the '
                "model's provider."
            ) from e

    def _connect(self, url: str) -> AbstractToolset[AgentDepsT]:
        from edgewise.agent.mcp import MCPToolset

        token, given_headers = self._credentials()
        headers = dict(given_headers or {})
        if token:
            headers['Authorization'] = token
        return MCPToolset(url, headers=headers or None, include_instructions=True)

    def get_toolset(self) -> AbstractToolset[AgentDepsT] | None:
        """The local connection's tools (only the allowed ones), marked as standing in for the native tool."""
        toolset = super().get_toolset()
        if toolset is None or self.allowed_tools is None:
            return toolset
        allowed = set(self.allowed_tools)
        return toolset.filtered(lambda ctx, tool_def: tool_def.name in allowed)


async def _maybe_awaited(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def _is_http_url(url: str) -> bool:
    parsed = urlparse(url)
    return parsed.scheme in ('http', 'https') and bool(parsed.netloc)


def _id_from_url(url: str) -> str:
    """`host-lastsegment` (or `host` alone, or `scheme-lastsegment` for a URL without host), else the URL itself."""
    parsed = urlparse(url)
    segment = parsed.path.rstrip('/').rpartition('/')[2]
    if parsed.hostname:
        return f'{parsed.hostname}-{segment}' if segment else parsed.hostname
    if parsed.scheme and segment:
        return f'{parsed.scheme}-{segment}'
    return url

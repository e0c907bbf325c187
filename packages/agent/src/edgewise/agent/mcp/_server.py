"""`MCPServer`: the toolset behind every MCP transport (connection lifetime, tools, calls, server requests).

The connection is opened by the first `async with server:` and closed when the last one is left (they nest,
counted, across tasks). It lives in a task of a task group that the task opening it enters, and which that same
task must leave (anyio's task groups require it): so when sibling tasks use the server (`asyncio.gather` of runs
that each enter it), the task that opened the connection waits at the end of its `async with` until the others
have left theirs, and then closes it. Calls made while the server is entered go straight to the session; calls
made outside open and close a connection around them.
"""

from __future__ import annotations as _annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Protocol, Self

import anyio
import anyio.abc
import anyio.lowlevel
import pydantic
from mcp import types as mcp_types
from mcp.shared.context import RequestContext
from mcp.shared.version import SUPPORTED_PROTOCOL_VERSIONS
from pydantic_core import SchemaValidator, core_schema
from typing_extensions import TypedDict

from .._messages.content import BinaryContent
from ..exceptions import MCPError, ModelRetry
from ..models import Model
from ..models._model import RunContext
from ..tools import ToolDefinition
from ..toolsets.abstract import AbstractToolset, ToolsetTool
from ._apps import app_resource_uri, call_app_tool, visible_to, wire_result
from ._connection import Channel, MCPConnectionClosed, MCPRequestError, MCPSession, open_sdk_channel
from ._mapping import (
    UNSTRUCTURED,
    ToolResult,
    map_content_part,
    map_prompt_part,
    resource_content,
    structured_result,
)
from ._server_requests import LogHandler, forward_log, sample
from ._types import Prompt, PromptMessage, PromptResult, Resource, ResourceTemplate, ServerCapabilities

__all__ = (
    'CallToolFunc',
    'ElicitationCallback',
    'LogHandler',
    'MCPServer',
    'MCPServerOptions',
    'ProcessToolCallback',
    'ToolResult',
)

_METHOD_NOT_FOUND = -32601
_INVALID_REQUEST = -32600
_INVALID_PARAMS = -32602
# MCP tool arguments are whatever JSON object the server's schema allows: the server validates them.
_ARGS_VALIDATOR: Any = SchemaValidator(core_schema.dict_schema(core_schema.str_schema(), core_schema.any_schema()))
_ELICIT_PARAMS: pydantic.TypeAdapter[mcp_types.ElicitRequestParams] = pydantic.TypeAdapter(
    mcp_types.ElicitRequestParams
)


class CallToolFunc(Protocol):
    """Calls a tool of the server: `MCPServer.direct_call_tool`, as given to a `ProcessToolCallback`."""

    def __call__(
        self, name: str, args: dict[str, Any], metadata: dict[str, Any] | None = None
    ) -> Awaitable[ToolResult]: ...


ProcessToolCallback = Callable[[RunContext[Any], CallToolFunc, str, dict[str, Any]], Awaitable[Any]]
"""A hook around each tool call: `(ctx, call_tool, name, args)`; it calls `call_tool` (with changed arguments,
or request metadata) or answers by itself."""
ElicitationCallback = Callable[[Any, mcp_types.ElicitRequestParams], Awaitable[Any]]
"""Answers the server's `elicitation/create` requests: `(context, params)` -> `ElicitResult` or `ErrorData`."""


class MCPServerOptions(TypedDict, total=False):
    """The options of an MCP server that every transport takes as keyword arguments and hands to `MCPServer`
    (`MCPServerStdio(command, args, **options)`, ...); see the attributes of `MCPServer` for each."""

    tool_prefix: str | None
    log_level: mcp_types.LoggingLevel | None
    log_handler: LogHandler | None
    timeout: float
    read_timeout: float | None
    process_tool_call: ProcessToolCallback | None
    allow_sampling: bool
    sampling_model: Model | None
    max_retries: int
    elicitation_callback: ElicitationCallback | None
    cache_prompts: bool
    cache_tools: bool
    cache_resources: bool
    include_instructions: bool
    include_return_schema: bool | None
    id: str | None
    client_info: mcp_types.Implementation | None


_CLOSE_SECONDS = 10.0
"""How long closing a connection may take before its tasks are cancelled."""


class MCPServer(AbstractToolset[Any], ABC):
    """An MCP server as a toolset; the transports (`MCPServerStdio`, ...) say how to reach it."""

    tool_prefix: str | None
    """Prepended, with an underscore, to the name of each of the server's tools (`foo` -> `files_foo`)."""
    log_level: mcp_types.LoggingLevel | None
    """The lowest level of the server's log messages to forward: the server is asked for it (`logging/setLevel`,
    when it has the logging capability) and messages below it are dropped; `None` to forward all."""
    log_handler: LogHandler | None
    """Receives the server's log messages; without one they go to the `edgewise.agent.mcp` logger."""
    timeout: float
    """Seconds to start or reach the server and complete the MCP handshake."""
    read_timeout: float
    """Seconds to wait for the answer to one request (a tool call); then the model is asked to retry."""
    process_tool_call: ProcessToolCallback | None
    """A hook around each tool call (see `ProcessToolCallback`)."""
    allow_sampling: bool
    """Whether the server may ask the agent's model for completions (`sampling/createMessage`)."""
    sampling_model: Model | None
    """The model that answers sampling requests; the running agent's model when `None`."""
    max_retries: int | None
    """How many times in a row each of the server's tools may be retried; `None`: as the agent's other tools."""
    elicitation_callback: ElicitationCallback | None
    """Answers the server's requests for input from the user; without one the server is told it can't ask."""
    cache_tools: bool
    """Whether the tool list is kept until the server says it changed (else it is asked for every step)."""
    cache_resources: bool
    """Whether the resource list is kept until the server says it changed or the connection closes."""
    cache_prompts: bool
    """Whether the prompt list is kept until the server says it changed or the connection closes."""
    include_return_schema: bool | None
    """Whether the model is told each tool's output schema (in its description); not when `None` or `False`."""
    include_instructions: bool
    """Whether the server's instructions (from the handshake) are added to the agent's instructions."""
    client_info: mcp_types.Implementation | None
    """How the client introduces itself in the handshake."""

    def __init__(
        self,
        tool_prefix: str | None = None,
        log_level: mcp_types.LoggingLevel | None = None,
        log_handler: LogHandler | None = None,
        timeout: float = 5,
        read_timeout: float | None = None,
        process_tool_call: ProcessToolCallback | None = None,
        allow_sampling: bool = True,
        sampling_model: Model | None = None,
        max_retries: int = 1,
        elicitation_callback: ElicitationCallback | None = None,
        *,
        cache_prompts: bool = True,
        cache_tools: bool = True,
        cache_resources: bool = True,
        include_instructions: bool = False,
        include_return_schema: bool | None = None,
        id: str | None = None,
        client_info: mcp_types.Implementation | None = None,
    ) -> None:
        self.tool_prefix = tool_prefix
        self.log_level = log_level
        self.log_handler = log_handler
        self.timeout = timeout
        self.read_timeout = 5 * 60 if read_timeout is None else read_timeout
        self.process_tool_call = process_tool_call
        self.allow_sampling = allow_sampling
        self.sampling_model = sampling_model
        self.max_retries = max_retries
        self.elicitation_callback = elicitation_callback
        self.cache_tools = cache_tools
        self.cache_resources = cache_resources
        self.cache_prompts = cache_prompts
        self.include_instructions = include_instructions
        self.include_return_schema = include_return_schema
        self.client_info = client_info
        self._id = id or tool_prefix
        self._fresh_connection_state()

    def _fresh_connection_state(self) -> None:
        """No connection open, nothing cached: the state of a new server (and of a per-run copy of one)."""
        self._enter_lock = anyio.Lock()
        self._entered = 0
        self._task_group: anyio.abc.TaskGroup | None = None
        self._owner: int | None = None
        """The id of the task that opened the connection (and holds its task group)."""
        self._owner_depth = 0
        """How many `async with` blocks that task is in."""
        self._all_left = anyio.Event()
        self._stop: anyio.Event | None = None
        self._session: MCPSession | None = None
        self._cached_tools: list[mcp_types.Tool] | None = None
        self._cached_resources: list[Resource] | None = None
        self._cached_prompts: list[Prompt] | None = None
        self._run_model: Model | None = None
        self._server_info: mcp_types.Implementation | None = None
        self._capabilities: ServerCapabilities | None = None
        self._instructions: str | None = None

    @abstractmethod
    def client_streams(self) -> AbstractAsyncContextManager[tuple[Any, Any]]:
        """Open the transport as the MCP SDK's client transports do: a context manager giving a pair of
        memory streams, `(read_stream, write_stream)`, of `SessionMessage`s.

        A custom transport subclasses `MCPServer` and implements this (as in pydantic-ai).
        """

    @asynccontextmanager
    async def _open_channel(self) -> AsyncIterator[Channel]:
        """Open the transport to the server; over `client_streams` unless a transport has a faster way."""
        async with self.client_streams() as (read_stream, write_stream), read_stream, write_stream:
            yield open_sdk_channel(read_stream, write_stream)

    def _endpoint(self) -> tuple[Any, ...]:
        """What says which server this is (the command, the URL), for `==`."""
        return ()

    def __eq__(self, other: object) -> bool:
        """Servers are equal when they are of one class, with the same id, prefix and endpoint."""
        if not isinstance(other, MCPServer):
            return NotImplemented
        return (type(self), self.id, self.tool_prefix, self._endpoint()) == (
            type(other),
            other.id,
            other.tool_prefix,
            other._endpoint(),
        )

    def __hash__(self) -> int:
        return hash((type(self), self.id, self.tool_prefix))

    # --- identity -------------------------------------------------------------------------------------

    @property
    def id(self) -> str | None:
        return self._id

    @id.setter
    def id(self, value: str | None) -> None:
        self._id = value

    @property
    def label(self) -> str:
        return repr(self)

    @property
    def tool_name_conflict_hint(self) -> str:
        return 'Set the `tool_prefix` attribute to avoid name conflicts.'

    @property
    def is_running(self) -> bool:
        """Whether a connection is open (the server is entered)."""
        return self._entered > 0

    @property
    def server_info(self) -> mcp_types.Implementation:
        """The server's name and version, from the handshake."""
        if self._server_info is None:
            raise AttributeError(
                f'The `{type(self).__name__}.server_info` is only instantiated after initialization '
                '(enter the server first: `async with server:`).'
            )
        return self._server_info

    @property
    def capabilities(self) -> ServerCapabilities:
        """What the server offers (tools, resources, prompts, logging, ...), from the handshake."""
        if self._capabilities is None:
            raise AttributeError(
                f'The `{type(self).__name__}.capabilities` is only instantiated after initialization '
                '(enter the server first: `async with server:`).'
            )
        return self._capabilities

    @property
    def instructions(self) -> str | None:
        """The server's instructions on the use of its tools, from the handshake."""
        if self._server_info is None:
            raise AttributeError(
                f'The `{type(self).__name__}.instructions` is only available after initialization '
                '(enter the server first: `async with server:`).'
            )
        return self._instructions

    # --- connection lifetime ------------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        async with self._enter_lock:
            task = anyio.get_current_task().id
            if self._task_group is None:  # (still open when its task is about to close it: it then waits again)
                await self._connect()
                self._owner = task
            self._entered += 1
            if task == self._owner:
                self._owner_depth += 1
        return self

    async def __aexit__(self, *args: Any) -> bool | None:
        # Counted out without a checkpoint, so that a cancelled task is counted out too. The task that opened the
        # connection closes the task group it holds here, in its own task, with no other cancel scope open inside
        # the group's: a cancelled task too (its waits are shielded), or the group would be left open on its stack
        # (trio: a corrupted cancel scope stack; asyncio: a cancel scope exited out of order).
        if self._entered == 0:
            raise ValueError(f'{self.label}: __aexit__ called more times than __aenter__.')
        self._entered -= 1
        if anyio.get_current_task().id != self._owner:
            if self._entered == 0:
                self._all_left.set()  # the task that opened the connection closes it
            return None
        self._owner_depth -= 1
        if self._owner_depth:
            return None  # an inner block of the task that opened the connection
        # The task that opened the connection, leaving its outermost block: it closes the connection once no task
        # is in an `async with` block any more.
        while True:
            with anyio.CancelScope(shield=True):
                await self._enter_lock.acquire()  # no task enters while the connection closes
            if self._entered == 0:
                try:
                    await self._disconnect()
                finally:
                    self._enter_lock.release()
                return None
            self._all_left = all_left = anyio.Event()
            self._enter_lock.release()
            with anyio.CancelScope(shield=True):  # the others still use the connection this task holds
                await all_left.wait()

    async def _connect(self) -> None:
        task_group = anyio.create_task_group()
        await task_group.__aenter__()
        ready = anyio.Event()
        self._stop = stop = anyio.Event()
        failure: list[BaseException] = []
        task_group.start_soon(self._hold_connection, ready, stop, failure)
        try:
            with anyio.fail_after(self.timeout):
                await ready.wait()
        except BaseException as e:
            stop.set()
            task_group.cancel_scope.cancel()
            await task_group.__aexit__(None, None, None)
            if isinstance(e, TimeoutError):
                raise MCPError(
                    f'MCP server {self.label} did not complete the MCP handshake within {self.timeout} s '
                    '(raise `timeout` if it is slow to start).'
                ) from None
            raise
        if failure:
            await task_group.__aexit__(None, None, None)
            raise self._connect_error(failure[0]) from failure[0]
        self._task_group = task_group

    def _connect_error(self, error: BaseException) -> MCPError:
        if isinstance(error, MCPError):
            return error
        if isinstance(error, MCPRequestError):
            return MCPError(
                f'MCP server {self.label} refused the MCP handshake: {error.message}', error.code, error.data
            )
        if isinstance(error, MCPConnectionClosed):
            return MCPError(f'MCP server {self.label} closed the connection during the MCP handshake: {error}.')
        return MCPError(f'MCP server {self.label} could not be started or reached: {error!r}.')

    async def _hold_connection(self, ready: anyio.Event, stop: anyio.Event, failure: list[BaseException]) -> None:
        """Open the channel and the session, shake hands, then keep them open until `stop` is set."""
        try:
            async with self._open_channel() as channel, anyio.create_task_group() as readers:
                session = MCPSession(channel, on_request=self._on_server_request, on_notification=self._on_notification)
                session.start(readers)
                try:
                    await self._handshake(session)
                except Exception as e:
                    # Caught inside the task group, so that it is not wrapped in an exception group.
                    failure.append(e)
                else:
                    self._session = session
                    ready.set()
                    await stop.wait()
                readers.cancel_scope.cancel()
        except Exception as e:
            failure.append(e)
        finally:
            self._session = None
            ready.set()

    async def _handshake(self, session: MCPSession) -> None:
        capabilities: dict[str, Any] = {}
        if self.allow_sampling:
            capabilities['sampling'] = {}
        if self.elicitation_callback is not None:
            capabilities['elicitation'] = {}
        client_info = self.client_info or mcp_types.Implementation(name='mcp', version='0.1.0')
        raw = await session.request(
            'initialize',
            {
                'protocolVersion': mcp_types.LATEST_PROTOCOL_VERSION,
                'capabilities': capabilities,
                'clientInfo': client_info.model_dump(by_alias=True, mode='json', exclude_none=True),
            },
            None,
        )
        result = mcp_types.InitializeResult.model_validate(raw)
        if str(result.protocolVersion) not in SUPPORTED_PROTOCOL_VERSIONS:
            raise MCPError(
                f'MCP server {self.label} speaks MCP protocol version {result.protocolVersion}, which the client '
                f'does not support (it supports {", ".join(SUPPORTED_PROTOCOL_VERSIONS)}).'
            )
        self._server_info = result.serverInfo
        self._capabilities = ServerCapabilities.from_mcp_sdk(result.capabilities)
        self._instructions = result.instructions
        await session.notify('notifications/initialized')
        if self.log_level is not None and result.capabilities.logging is not None:
            await session.request('logging/setLevel', {'level': self.log_level}, None)

    async def _disconnect(self) -> None:
        task_group, stop = self._task_group, self._stop
        self._task_group = self._stop = None
        self._cached_tools = self._cached_resources = self._cached_prompts = None
        self._run_model = None
        if task_group is not None and stop is not None:
            stop.set()
            # Closing is bounded (a server that does not hang up is cut off): this runs shielded, in `__aexit__`.
            task_group.cancel_scope.deadline = anyio.current_time() + _CLOSE_SECONDS
            await task_group.__aexit__(None, None, None)

    # --- tools ------------------------------------------------------------------------------------------

    async def list_tools(self) -> list[mcp_types.Tool]:
        """The server's tools (all pages), from the cache when it holds them."""
        if self.cache_tools and self._cached_tools is not None:
            return self._cached_tools
        async with self._connected() as session:
            tools: list[mcp_types.Tool] = []
            cursor: str | None = None
            while True:
                raw = await self._request(session, 'tools/list', {'cursor': cursor} if cursor else None, None)
                page = mcp_types.ListToolsResult.model_validate(raw)
                tools.extend(page.tools)
                if not page.nextCursor:
                    break
                cursor = page.nextCursor
        if self.cache_tools and self.is_running:
            self._cached_tools = tools
        return tools

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        self._run_model = ctx.model
        tools: dict[str, ToolsetTool[Any]] = {}
        for mcp_tool in await self.list_tools():
            if not visible_to(mcp_tool.meta, 'model'):  # an MCP App's tool that only its page calls
                continue
            name = f'{self.tool_prefix}_{mcp_tool.name}' if self.tool_prefix else mcp_tool.name
            tool_def = ToolDefinition(
                name=name,
                description=mcp_tool.description,
                parameters_json_schema=mcp_tool.inputSchema,
                metadata={
                    'meta': mcp_tool.meta,
                    'annotations': mcp_tool.annotations.model_dump() if mcp_tool.annotations else None,
                    'output_schema': mcp_tool.outputSchema or None,
                },
                return_schema=mcp_tool.outputSchema or None,
                include_return_schema=self.include_return_schema,
            )
            tool = self.tool_for_tool_def(tool_def)
            if self.max_retries is None:
                tool.max_retries = ctx.max_retries
            tools[name] = tool
        return tools

    def tool_for_tool_def(self, tool_def: ToolDefinition) -> ToolsetTool[Any]:
        """The toolset tool for one of the server's tool definitions."""
        return ToolsetTool(
            toolset=self,
            tool_def=tool_def,
            max_retries=1 if self.max_retries is None else self.max_retries,
            args_validator=_ARGS_VALIDATOR,
        )

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        self._run_model = ctx.model
        if self.tool_prefix:
            name = name.removeprefix(f'{self.tool_prefix}_')
            ctx = ctx.replace_with(tool_name=name)
        if (resource_uri := app_resource_uri(tool.tool_def)) is not None:
            return await call_app_tool(self, name, tool_args, ctx, resource_uri)
        if self.process_tool_call is not None:
            return await self.process_tool_call(ctx, self.direct_call_tool, name, tool_args)
        return await self.direct_call_tool(name, tool_args)

    async def direct_call_tool(self, name: str, args: dict[str, Any], metadata: dict[str, Any] | None = None) -> Any:
        """Call the server's tool `name` (without the prefix) and map its result.

        Raises:
            ModelRetry: the tool reported an error, the server rejected the call, or no answer came within
                `read_timeout`.
            MCPError: the server could not be reached or closed the connection.
        """
        return await self._mapped_result(name, await self._call_raw(name, args, metadata))

    async def _call_raw(self, name: str, args: dict[str, Any], metadata: dict[str, Any] | None) -> Any:
        """The server's answer to a call of its tool `name`, as sent."""
        params: dict[str, Any] = {'name': name, 'arguments': args}
        if metadata:
            params['_meta'] = metadata
        session = self._session
        if session is not None and self._entered:
            return await self._request(session, 'tools/call', params, name)
        async with self._connected() as session:
            return await self._request(session, 'tools/call', params, name)

    async def _mapped_result(self, name: str, raw: Any) -> Any:
        """A tool's result as the model gets it (see `direct_call_tool`)."""
        value = structured_result(raw)
        if value is not UNSTRUCTURED:
            return value
        try:
            mapped = [
                await self.read_resource(part['uri']) if part.get('type') == 'resource_link' else map_content_part(part)
                for part in raw.get('content') or []
            ]
        except ValueError as e:  # binary data that is not base64
            raise MCPError(f'MCP server {self.label} answered tool {name!r} with content that is not valid: {e}') from e
        return mapped[0] if len(mapped) == 1 else mapped

    async def call_tool_for_app(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """Call the tool `name` for an MCP App's page (the host relays the page's `tools/call`), and give the
        server's `CallToolResult` as the page takes it (camelCase keys; an `isError` result is returned, not
        raised; `process_tool_call` does not apply).

        Raises:
            MCPError: `arguments` is not an object, the tool is not there or not visible to apps (its
                `_meta.ui.visibility` leaves out `'app'`), or the server answered with an error.
        """
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise MCPError(f'MCP server {self.label}: tool arguments from an app must be an object.', _INVALID_PARAMS)
        async with self._connected() as session:
            tool = next((t for t in await self.list_tools() if t.name == name), None)
            if tool is None or not visible_to(tool.meta, 'app'):
                raise MCPError(f'MCP server {self.label}: tool {name!r} is not available to apps.', _INVALID_PARAMS)
            raw = await self._request(session, 'tools/call', {'name': name, 'arguments': arguments}, None)
        return wire_result(raw)

    async def read_resource_for_app(self, uri: str) -> dict[str, Any]:
        """Read the resource at `uri` for an MCP App (its page, or the page's own `resources/read`): the server's
        `ReadResourceResult` as sent, each item keeping its MIME type and `_meta` (where `_meta.ui` holds the page's
        content security policy). Any resource of the server can be read: check `uri` first to limit a page.

        Raises:
            MCPError: the server answered with an error, or could not be reached.
        """
        async with self._connected() as session:
            raw = await self._request(session, 'resources/read', {'uri': uri}, None)
        return mcp_types.ReadResourceResult.model_validate(raw).model_dump(
            mode='json', by_alias=True, exclude_none=True
        )

    async def _request(self, session: MCPSession, method: str, params: dict[str, Any] | None, tool: str | None) -> Any:
        try:
            return await session.request(method, params, self.read_timeout)
        except MCPRequestError as e:
            if tool is None:
                raise MCPError(
                    f'MCP server {self.label} answered `{method}` with an error: {e.message}', e.code, e.data
                ) from e
            raise ModelRetry(e.message) from e
        except TimeoutError:
            what = f'tool {tool!r}' if tool else f'`{method}`'
            message = f'MCP server {self.label} did not answer {what} within {self.read_timeout} s (`read_timeout`).'
            if tool is None:
                raise MCPError(message) from None
            raise ModelRetry(message) from None
        except MCPConnectionClosed as e:
            # A caller being cancelled (its scope ended while another task closed the shared connection) sees
            # the cancellation, not a closed connection: which of the two lands first is a race.
            await anyio.lowlevel.checkpoint_if_cancelled()
            during = f'calling tool {tool!r}' if tool else f'`{method}`'
            raise MCPError(f'MCP server {self.label} closed the connection while {during}: {e}.') from e

    # --- resources and prompts ------------------------------------------------------------------------

    async def _list_all(self, method: str, key: str) -> list[dict[str, Any]]:
        """All pages of a `*/list` request: the items under `key`."""
        items: list[dict[str, Any]] = []
        async with self._connected() as session:
            cursor: str | None = None
            while True:
                page = await self._request(session, method, {'cursor': cursor} if cursor else None, None)
                items.extend(page.get(key) or [])
                cursor = page.get('nextCursor')
                if not cursor:
                    return items

    async def list_resources(self) -> list[Resource]:
        """The server's resources (all pages), from the cache when it holds them; `[]` if it offers none.

        Raises:
            MCPError: the server answered with an error, or could not be reached.
        """
        if self.cache_resources and self._cached_resources is not None:
            return self._cached_resources
        async with self:
            if not self.capabilities.resources:
                return []
            raw = await self._list_all('resources/list', 'resources')
            resources = [Resource.from_mcp_sdk(mcp_types.Resource.model_validate(item)) for item in raw]
            if self.cache_resources:
                self._cached_resources = resources
        return resources

    async def list_resource_templates(self) -> list[ResourceTemplate]:
        """The server's resource templates (all pages); `[]` if it offers no resources.

        Raises:
            MCPError: the server answered with an error, or could not be reached.
        """
        async with self:
            if not self.capabilities.resources:
                return []
            raw = await self._list_all('resources/templates/list', 'resourceTemplates')
        return [ResourceTemplate.from_mcp_sdk(mcp_types.ResourceTemplate.model_validate(item)) for item in raw]

    async def read_resource(self, uri: str | Resource) -> str | BinaryContent | list[str | BinaryContent]:
        """The content of the resource at `uri` (or of a `Resource`): text, or the decoded bytes, or a list of
        those when the resource has several parts.

        Raises:
            MCPError: the server answered with an error (no such resource), or could not be reached.
        """
        resource_uri = uri if isinstance(uri, str) else uri.uri
        async with self._connected() as session:
            raw = await self._request(session, 'resources/read', {'uri': resource_uri}, None)
        contents = mcp_types.ReadResourceResult.model_validate(raw).contents
        mapped = [resource_content(item) for item in contents]
        return mapped[0] if len(mapped) == 1 else mapped

    async def list_prompts(self) -> list[Prompt]:
        """The server's prompts (all pages), from the cache when it holds them; `[]` if it offers none.

        Raises:
            MCPError: the server answered with an error, or could not be reached.
        """
        if self.cache_prompts and self._cached_prompts is not None:
            return self._cached_prompts
        async with self:
            if not self.capabilities.prompts:
                return []
            raw = await self._list_all('prompts/list', 'prompts')
            prompts = [Prompt.from_mcp_sdk(mcp_types.Prompt.model_validate(item)) for item in raw]
            if self.cache_prompts:
                self._cached_prompts = prompts
        return prompts

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> PromptResult:
        """The prompt `name`, rendered by the server with `arguments`.

        Raises:
            MCPError: the server offers no prompts, answered with an error (no such prompt, a missing
                argument), or could not be reached.
        """
        params: dict[str, Any] = {'name': name}
        if arguments:
            params['arguments'] = arguments
        async with self._connected() as session:
            if not self.capabilities.prompts:
                raise MCPError(
                    f'MCP server {self.label} offers no prompts (no `prompts` capability): cannot get prompt {name!r}.',
                    _METHOD_NOT_FOUND,
                )
            raw = await self._request(session, 'prompts/get', params, None)
        result = mcp_types.GetPromptResult.model_validate(raw)
        return PromptResult(
            messages=[PromptMessage(role=m.role, content=map_prompt_part(m.content)) for m in result.messages],
            description=result.description,
            metadata=result.meta,
        )

    def _connected(self) -> AbstractAsyncContextManager[MCPSession]:
        return _Connected(self)

    async def get_instructions(self, ctx: RunContext[Any]) -> str | None:
        if not self.include_instructions or self._server_info is None:
            return None
        return self._instructions

    # --- the server's requests and notifications ---------------------------------------------------

    async def _on_server_request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == 'sampling/createMessage' and self.allow_sampling:
            return await sample(self.sampling_model or self._run_model, params)
        if method == 'elicitation/create' and self.elicitation_callback is not None:
            request = _ELICIT_PARAMS.validate_python(params)
            context = RequestContext(request_id=0, meta=request.meta, session=self, lifespan_context=None)  # type: ignore[type-var]
            answer = await self.elicitation_callback(context, request)
            if isinstance(answer, mcp_types.ErrorData):
                raise MCPRequestError(answer.message, answer.code, answer.data)
            return answer.model_dump(by_alias=True, mode='json', exclude_none=True)  # type: ignore[no-any-return]
        if method == 'sampling/createMessage':
            raise MCPRequestError('Sampling not supported (`allow_sampling` is off)', _INVALID_REQUEST)
        if method == 'elicitation/create':
            raise MCPRequestError('Elicitation not supported (no `elicitation_callback` is set)', _INVALID_REQUEST)
        raise MCPRequestError(f'the client does not handle {method!r}', _METHOD_NOT_FOUND)

    async def _on_notification(self, method: str, params: dict[str, Any]) -> None:
        if method == 'notifications/tools/list_changed':
            self._cached_tools = None
        elif method == 'notifications/resources/list_changed':
            self._cached_resources = None
        elif method == 'notifications/prompts/list_changed':
            self._cached_prompts = None
        elif method == 'notifications/message':
            await forward_log(self.label, params, self.log_level, self.log_handler)


class _Connected:
    """The open session, entering the server around the block when it is not entered already."""

    def __init__(self, server: MCPServer) -> None:
        self._server = server

    async def __aenter__(self) -> MCPSession:
        await self._server.__aenter__()
        session = self._server._session
        if session is None:  # pragma: no cover - the connection closed right after it opened
            await self._server.__aexit__(None, None, None)
            raise MCPError(f'MCP server {self._server.label} closed the connection.')
        return session

    async def __aexit__(self, *args: Any) -> None:
        await self._server.__aexit__(*args)

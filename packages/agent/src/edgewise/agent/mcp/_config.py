"""`load_mcp_toolsets` (and 1.x's `load_mcp_servers`): MCP servers described in a JSON file (`mcpServers`)."""

from __future__ import annotations as _annotations

import os
import re
import warnings
from pathlib import Path
from typing import Annotated, Any

import pydantic
import pydantic_core

from .._warnings import PydanticAIDeprecationWarning
from ..toolsets.abstract import AbstractToolset
from ._transports import (
    MCPServerSSE,
    MCPServerStdio,
    MCPServerStreamableHTTP,
    SSETransport,
    StdioTransport,
    StreamableHttpTransport,
)

__all__ = ('load_mcp_servers', 'load_mcp_toolsets')

# `${NAME}`, or `${NAME:-fallback}` (the fallback may be empty).
_VARIABLE = re.compile(r'\$\{([^}:]+)(:-([^}]*))?\}')


def _transport_of(entry: Any) -> str:
    if isinstance(entry, dict) and 'url' in entry:
        return 'sse' if str(entry['url']).endswith('/sse') else 'streamable-http'  # pyright: ignore[reportUnknownArgumentType]
    return 'stdio'


_Server = Annotated[
    Annotated[StdioTransport, pydantic.Tag('stdio')]
    | Annotated[StreamableHttpTransport, pydantic.Tag('streamable-http')]
    | Annotated[SSETransport, pydantic.Tag('sse')],
    pydantic.Discriminator(_transport_of),
]


class _Config(pydantic.BaseModel):
    mcp_servers: Annotated[dict[str, _Server], pydantic.Field(alias='mcpServers')]


def _expand(value: Any, source: Path) -> Any:
    """`value` with the `${NAME}` and `${NAME:-fallback}` in its strings replaced from the environment."""
    if isinstance(value, str):

        def lookup(match: re.Match[str]) -> str:
            name, fallback = match.group(1), match.group(3)
            if name in os.environ:
                return os.environ[name]
            if match.group(2) is not None:
                return fallback or ''
            raise ValueError(
                f'Environment variable ${{{name}}} is not defined (in {source}): set it, or give a default '
                f'with ${{{name}:-default}}.'
            )

        return _VARIABLE.sub(lookup, value)
    if isinstance(value, dict):
        return {key: _expand(item, source) for key, item in value.items()}  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, list):
        return [_expand(item, source) for item in value]  # pyright: ignore[reportUnknownVariableType]
    return value


def load_mcp_servers(config_path: str | Path) -> list[MCPServerStdio | MCPServerStreamableHTTP | MCPServerSSE]:
    """The MCP servers of a JSON configuration file, each with its name as `id` and `tool_prefix`.

    Deprecated (it warns): pydantic-ai 2.x reads the file with `load_mcp_toolsets`.

    The file holds `{"mcpServers": {name: entry, ...}}`. An entry with a `command` (and `args`, `env`, `cwd`)
    is a server run over stdio; one with a `url` (and `headers`) is reached over HTTP, with SSE when the
    URL ends in `/sse` and streamable HTTP otherwise. `${NAME}` in any string is replaced by the
    environment variable `NAME`, and `${NAME:-default}` by `default` when `NAME` is not set.

    Raises:
        FileNotFoundError: there is no such file.
        ValueError: the file is not JSON, or names an environment variable that is not set (without a default).
        pydantic.ValidationError: an entry lacks a field or has one of the wrong type (the error names it).
    """
    warnings.warn(
        '`load_mcp_servers` is deprecated: use `load_mcp_toolsets` (pydantic-ai 2.x), which gives `MCPToolset`s.',
        PydanticAIDeprecationWarning,
        stacklevel=2,
    )
    return _read_servers(config_path)


def _read_servers(config_path: str | Path) -> list[MCPServerStdio | MCPServerStreamableHTTP | MCPServerSSE]:
    path = Path(config_path)
    if not path.exists():
        raise FileNotFoundError(f'MCP configuration file {path} not found.')
    try:
        data = pydantic_core.from_json(path.read_bytes())
    except ValueError as e:
        raise ValueError(f'MCP configuration file {path} is not valid JSON: {e}') from e
    config = _Config.model_validate(_expand(data, path))
    servers: list[MCPServerStdio | MCPServerStreamableHTTP | MCPServerSSE] = []
    for name, server in config.mcp_servers.items():
        server.id = name
        server.tool_prefix = name
        servers.append(server)
    return servers


def load_mcp_toolsets(config_path: str | Path) -> list[AbstractToolset[Any]]:
    """The MCP servers of a JSON configuration file as `MCPToolset`s (pydantic-ai 2.x's `load_mcp_toolsets`).

    The file holds `{"mcpServers": {name: entry, ...}}`: an entry with a `command` (and `args`, `env`, `cwd`) is a
    server run over stdio, one with a `url` (and `headers`) is reached over HTTP (SSE when the URL ends in `/sse`);
    `${NAME}` and `${NAME:-default}` in any string are replaced from the environment. Each server becomes an
    `MCPToolset` with its name as `id`, its tools' names prefixed with that name (`PrefixedToolset`), and 2.x's
    defaults.

    Raises:
        FileNotFoundError: there is no such file.
        ValueError: the file is not JSON, or names an environment variable that is not set (without a default).
        pydantic.ValidationError: an entry lacks a field or has one of the wrong type (the error names it).
    """
    from ._toolset import MCPToolset

    toolsets: list[AbstractToolset[Any]] = []
    for server in _read_servers(config_path):
        name = server.id
        assert name is not None  # set from the entry's name above
        server.tool_prefix = None
        toolsets.append(MCPToolset(server, id=name).prefixed(name))
    return toolsets

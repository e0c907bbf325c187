"""`load_mcp_servers`, servers as fields of pydantic models, equality, and the deprecated `MCPServerHTTP`."""

from __future__ import annotations

import json
from pathlib import Path

import pydantic
import pytest

from edgewise.agent.mcp import (
    MCPServerHTTP,
    MCPServerSSE,
    MCPServerStdio,
    MCPServerStreamableHTTP,
    MCPToolset,
    SSETransport,
    StdioTransport,
    StreamableHttpTransport,
    load_mcp_servers,
    load_mcp_toolsets,
)
from edgewise.agent.toolsets import PrefixedToolset


def write(tmp_path: Path, config: object) -> Path:
    path = tmp_path / 'mcp.json'
    path.write_text(json.dumps(config))
    return path


def test_each_entry_becomes_a_server_named_and_prefixed_by_its_key(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            'mcpServers': {
                'files': {'command': 'node', 'args': ['server.js'], 'env': {'A': '1'}, 'cwd': '/tmp'},
                'events': {'url': 'http://127.0.0.1:3001/sse'},
                'web': {'url': 'http://127.0.0.1:8000/mcp', 'headers': {'X-Key': 'k'}},
            }
        },
    )
    with pytest.warns(DeprecationWarning, match='`load_mcp_servers` is deprecated: use `load_mcp_toolsets`'):
        files, events, web = load_mcp_servers(path)
    assert isinstance(files, MCPServerStdio)
    assert (files.command, files.args, files.env, files.cwd) == ('node', ['server.js'], {'A': '1'}, '/tmp')
    assert (files.id, files.tool_prefix) == ('files', 'files')
    assert type(events) is SSETransport
    assert (events.url, events.id, events.tool_prefix) == ('http://127.0.0.1:3001/sse', 'events', 'events')
    assert type(web) is StreamableHttpTransport
    assert (web.url, web.headers, web.id) == ('http://127.0.0.1:8000/mcp', {'X-Key': 'k'}, 'web')


def test_environment_variables_are_expanded_with_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('EDGEWISE_TEST_TOKEN', 'secret')
    monkeypatch.delenv('EDGEWISE_TEST_UNSET', raising=False)
    path = write(
        tmp_path,
        {
            'mcpServers': {
                'a': {
                    'command': 'run',
                    'args': [
                        '--token=${EDGEWISE_TEST_TOKEN}',
                        '${EDGEWISE_TEST_UNSET:-fallback}',
                        '${EDGEWISE_TEST_UNSET:-}',
                    ],
                }
            }
        },
    )
    [toolset] = load_mcp_toolsets(str(path))
    assert isinstance(toolset, PrefixedToolset)
    assert isinstance(toolset.wrapped, MCPToolset)
    server = toolset.wrapped.transport
    assert isinstance(server, MCPServerStdio)
    assert server.args == ['--token=secret', 'fallback', '']


def test_an_unset_variable_without_default_is_an_error_naming_it_and_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv('EDGEWISE_TEST_UNSET', raising=False)
    path = write(tmp_path, {'mcpServers': {'a': {'url': 'http://${EDGEWISE_TEST_UNSET}/mcp'}}})
    with pytest.raises(
        ValueError, match=r'^Environment variable \$\{EDGEWISE_TEST_UNSET\} is not defined \(in .*mcp.json\): set it'
    ):
        load_mcp_toolsets(path)


def test_a_missing_file_a_bad_file_and_a_bad_entry_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r'MCP configuration file .*nope.json not found'):
        load_mcp_toolsets(tmp_path / 'nope.json')
    bad = tmp_path / 'bad.json'
    bad.write_text('{not json')
    with pytest.raises(ValueError, match=r'bad.json is not valid JSON'):
        load_mcp_toolsets(bad)
    with pytest.raises(pydantic.ValidationError, match=r'mcpServers\.a\.stdio\.args\s+Field required'):
        load_mcp_toolsets(write(tmp_path, {'mcpServers': {'a': {'command': 'run'}}}))


def test_servers_validate_as_fields_of_a_pydantic_model() -> None:
    class Settings(pydantic.BaseModel):
        local: MCPServerStdio
        remote: MCPServerStreamableHTTP

    settings = Settings.model_validate(
        {'local': {'command': 'run', 'args': ['-v']}, 'remote': {'url': 'http://127.0.0.1:1/mcp'}}
    )
    assert settings.local == StdioTransport('run', ['-v'])
    assert settings.remote == StreamableHttpTransport('http://127.0.0.1:1/mcp')


def test_equality_is_by_class_id_prefix_and_endpoint() -> None:
    assert StdioTransport('run', ['a'], tool_prefix='p') == StdioTransport('run', ['a'], tool_prefix='p')
    assert hash(StdioTransport('run', ['a'], id='x')) == hash(StdioTransport('run', ['a'], id='x'))
    assert StdioTransport('run', ['a']) != StdioTransport('run', ['b'])
    assert StdioTransport('run', ['a']) != StdioTransport('run', ['a'], tool_prefix='p')
    assert SSETransport('http://h/sse') != StreamableHttpTransport('http://h/sse')
    assert SSETransport('http://h/sse') != 'http://h/sse'


def test_mcp_server_http_is_a_deprecated_mcp_server_sse() -> None:
    with pytest.warns(DeprecationWarning, match='`MCPServerHTTP` is deprecated, use `MCPServerSSE` instead.'):
        server = MCPServerHTTP('http://127.0.0.1:1/sse')
    assert isinstance(server, MCPServerSSE)

"""The options of a tool and of an MCP server, written once as `TypedDict`s (`ToolOptions`, `ToolDefaults`,
`ToolInitOptions`, `MCPServerOptions`): what `inspect.signature` shows, unknown names refused, defaults."""

from __future__ import annotations

import inspect

import pytest
from typing_extensions import TypedDict

from edgewise.agent import Agent, RunContext, Tool
from edgewise.agent._functions.keyword_options import KeywordOptions
from edgewise.agent.mcp import (
    MCPServerSSE,
    MCPServerStdio,
    MCPServerStreamableHTTP,
    SSETransport,
    StdioTransport,
    StreamableHttpTransport,
)
from edgewise.agent.mcp._server import MCPServer, MCPServerOptions
from edgewise.agent.models.test import TestModel
from edgewise.agent.tools import TOOL_DEFAULTS, ToolDefaults, ToolInitOptions, ToolOptions
from edgewise.agent.toolsets import FunctionToolset


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _keyword_only(func: object) -> dict[str, object]:
    parameters = inspect.signature(func).parameters.values()  # type: ignore[arg-type]
    return {p.name: p.default for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY}


def test_signatures_show_every_tool_option_with_its_default() -> None:
    own = {'name': None, 'description': None, 'prepare': None, 'args_validator': None}
    expected = {
        'takes_ctx': None,
        'max_retries': None,
        **own,
        **TOOL_DEFAULTS,
        'tool_kind': None,
        'function_schema': None,
    }
    assert _keyword_only(Tool) == expected
    assert set(_keyword_only(Tool)) == set(ToolInitOptions.__annotations__)
    for method in (FunctionToolset.tool, FunctionToolset.tool_plain, FunctionToolset.add_function):
        assert set(_keyword_only(method)) == set(ToolOptions.__annotations__)
    assert _keyword_only(FunctionToolset) == {'max_retries': None, 'id': None, 'instructions': None, **TOOL_DEFAULTS}
    assert set(ToolDefaults.__annotations__) <= set(ToolOptions.__annotations__)


def test_unknown_tool_options_are_refused_by_name() -> None:
    with pytest.raises(TypeError, match=r"Tool\(\) got an unexpected keyword argument 'retries'"):
        Tool(add, retries=3)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"FunctionToolset\(\) got an unexpected keyword argument 'name'"):
        FunctionToolset([add], name='x')  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"add_function\(\) got an unexpected keyword argument 'max_retries'"):
        FunctionToolset().add_function(add, max_retries=2)  # type: ignore[call-arg]


def test_options_left_out_or_none_take_the_toolsets_defaults() -> None:
    toolset = FunctionToolset[None](sequential=True, strict=True, docstring_format='google', timeout=3.0)

    @toolset.tool_plain(strict=None, retries=4)
    def first(a: int) -> int:
        return a

    @toolset.tool(name='second_tool', sequential=False)
    def second(ctx: RunContext[None], a: int) -> int:
        return a

    assert (toolset.tools['first'].strict, toolset.tools['first'].sequential) == (True, True)
    assert toolset.tools['first'].max_retries == 4
    assert toolset.tools['first'].docstring_format == 'google'
    assert toolset.tools['second_tool'].sequential is False
    assert toolset.tools['second_tool'].timeout is None  # the toolset's timeout bounds the call, not the tool's own


def test_the_agents_tool_decorator_passes_the_options_through() -> None:
    agent = Agent(TestModel())

    @agent.tool_plain(name='plus', description='Adds.', retries=2, timeout=1.5)
    def plus(a: int, b: int) -> int:
        return a + b

    tool = agent._tools.function_toolset.tools['plus']
    assert (tool.description, tool.max_retries, tool.timeout) == ('Adds.', 2, 1.5)


def test_keyword_options_must_give_a_default_to_each_key() -> None:
    class Options(TypedDict, total=False):
        a: int
        b: str

    with pytest.raises(TypeError, match=r"must name its keys: missing \['b'\], unknown \['c'\]"):
        KeywordOptions(Options, {'a': 1, 'c': 2})
    options = KeywordOptions(Options, {'a': 1, 'b': 'x'})
    assert options.resolve('f', {'b': 'y'}) == {'a': 1, 'b': 'y'}
    assert options.unknown({'a': 2, 'z': 0}) == ['z']

    def f(x: int, **options: object) -> None: ...

    assert str(options.signed(f).__signature__) == "(x: 'int', *, a: 'int' = 1, b: 'str' = 'x') -> 'None'"  # type: ignore[attr-defined]


def test_the_mcp_transports_show_the_servers_options_with_mcp_servers_defaults() -> None:
    defaults = {name: p.default for name, p in list(inspect.signature(MCPServer.__init__).parameters.items())[1:]}
    assert set(defaults) == set(MCPServerOptions.__annotations__)
    assert _keyword_only(MCPServerStdio) == {'env': None, 'cwd': None, **defaults}
    for transport in (MCPServerSSE, MCPServerStreamableHTTP):
        # (`auth`: 2.68's `MCPToolset(auth=...)`, which the HTTP transports take as well)
        assert _keyword_only(transport) == {'headers': None, 'http_client': None, 'auth': None, **defaults}


def test_the_mcp_transports_forward_their_options() -> None:
    stdio = StdioTransport('python', ['-c', 'pass'], tool_prefix='p', timeout=2, max_retries=3, cache_tools=False)
    assert (stdio.tool_prefix, stdio.timeout, stdio.max_retries, stdio.cache_tools, stdio.id) == ('p', 2, 3, False, 'p')
    assert stdio.read_timeout == 5 * 60
    http = StreamableHttpTransport('http://127.0.0.1:1/mcp', read_timeout=7, id='web')
    assert (http.read_timeout, http.id) == (7, 'web')
    with pytest.raises(TypeError, match='unexpected keyword argument'):
        SSETransport('http://127.0.0.1:1/sse', retries=2)  # type: ignore[call-arg]

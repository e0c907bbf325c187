"""Resources and prompts of the FastMCP test server over stdio, and their caching."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from edgewise.agent.exceptions import MCPError
from edgewise.agent.mcp import (
    EmbeddedResource,
    Prompt,
    PromptArgument,
    PromptMessage,
    PromptResult,
    Resource,
    ResourceTemplate,
    StdioTransport,
)
from edgewise.agent.messages import BinaryImage, TextContent

from .conftest import fastmcp_stdio
from .fastmcp_server import PIXEL

pytestmark = pytest.mark.anyio


async def test_resources_are_listed() -> None:
    async with fastmcp_stdio() as server:
        resources = {resource.name: resource for resource in await server.list_resources()}
    assert resources['readme'] == Resource(
        uri='memo://readme',
        name='readme',
        title='Read me',
        description='What this server is.',
        mime_type='text/plain',
    )
    assert resources['pixel'].uri == 'memo://pixel.png'
    assert resources['pixel'].mime_type == 'image/png'


async def test_resource_templates_are_listed() -> None:
    async with fastmcp_stdio() as server:
        templates = await server.list_resource_templates()
    assert templates == [
        ResourceTemplate(
            uri_template='memo://notes/{topic}', name='note', description='A note on a topic.', mime_type='text/plain'
        )
    ]


async def test_resources_are_read_as_text_or_binary_content() -> None:
    async with fastmcp_stdio() as server:
        readme = next(r for r in await server.list_resources() if r.name == 'readme')
        assert await server.read_resource(readme) == 'This server is for tests.'
        assert await server.read_resource('memo://pixel.png') == BinaryImage(PIXEL, media_type='image/png')
        assert await server.read_resource('memo://notes/tea') == 'Notes on tea.'


async def test_reading_a_resource_that_does_not_exist_is_an_mcp_error() -> None:
    async with fastmcp_stdio() as server:
        with pytest.raises(MCPError, match=r'answered `resources/read` with an error: Unknown resource: memo://nope'):
            await server.read_resource('memo://nope')


async def test_the_resource_list_is_cached_until_the_server_says_it_changed() -> None:
    async with fastmcp_stdio() as server:
        first = await server.list_resources()
        assert await server.list_resources() is first
        assert await server.direct_call_tool('add_resource', {'name': 'fresh'}) == 'added fresh'
        # The notification comes before the call's answer but is handled in a task of its own: one more
        # round trip makes sure it has been handled.
        await server.direct_call_tool('add', {'a': 0, 'b': 0})
        assert 'fresh' in [resource.name for resource in await server.list_resources()]
    # Leaving the server drops the cache.
    async with server:
        assert 'fresh' not in [resource.name for resource in await server.list_resources()]


async def test_without_cache_resources_the_list_is_asked_each_time() -> None:
    async with fastmcp_stdio(cache_resources=False) as server:
        assert await server.list_resources() is not await server.list_resources()


async def test_prompts_are_listed_and_cached() -> None:
    async with fastmcp_stdio() as server:
        prompts = await server.list_prompts()
        assert await server.list_prompts() is prompts
    greeting = next(prompt for prompt in prompts if prompt.name == 'greeting')
    assert greeting == Prompt(
        name='greeting',
        title='Greeting',
        description='Greets someone by name.',
        arguments=[PromptArgument(name='name', required=True), PromptArgument(name='mood', required=False)],
    )


async def test_without_cache_prompts_the_list_is_asked_each_time() -> None:
    async with fastmcp_stdio(cache_prompts=False) as server:
        assert await server.list_prompts() is not await server.list_prompts()


async def test_a_prompt_is_rendered_with_its_arguments() -> None:
    async with fastmcp_stdio() as server:
        result = await server.get_prompt('greeting', {'name': 'Ada', 'mood': 'curious'})
        embedded = await server.get_prompt('with_resource')
    assert result == PromptResult(
        description='Greets someone by name.',
        messages=[
            PromptMessage(role='user', content=TextContent('Greet Ada, who is curious.')),
            PromptMessage(role='assistant', content=TextContent('Hello!')),
        ],
    )
    assert embedded.messages == [
        PromptMessage(
            role='user',
            content=EmbeddedResource(uri='memo://readme', content='This server is for tests.', mime_type='text/plain'),
        )
    ]


async def test_a_prompt_with_a_missing_argument_is_an_mcp_error() -> None:
    async with fastmcp_stdio() as server:
        with pytest.raises(MCPError, match=r'answered `prompts/get` with an error: .*name') as info:
            await server.get_prompt('greeting')
    assert info.value.code is not None


RAW_SERVER = [sys.executable, str(Path(__file__).with_name('raw_server.py')), 'quirks']


async def test_a_server_without_resources_or_prompts_lists_none_and_refuses_get_prompt() -> None:
    server = StdioTransport(RAW_SERVER[0], RAW_SERVER[1:], timeout=30)
    async with server:
        assert not server.capabilities.resources
        assert await server.list_resources() == []
        assert await server.list_resource_templates() == []
        assert await server.list_prompts() == []
        with pytest.raises(MCPError, match=r"offers no prompts \(no `prompts` capability\): cannot get prompt 'p'"):
            await server.get_prompt('p')

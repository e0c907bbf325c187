"""The MCP server of the tests, made with FastMCP (the MCP SDK's server framework), not with Edgewise.

`python fastmcp_server.py stdio`, `python fastmcp_server.py streamable-http PORT` or `... sse PORT`.
"""

from __future__ import annotations

import base64
import os
import sys
from typing import Any

import anyio
from mcp.server.fastmcp import Audio, Context, FastMCP, Image
from mcp.server.fastmcp.prompts.base import AssistantMessage, UserMessage
from mcp.types import (
    BlobResourceContents,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    SamplingMessage,
    TextContent,
    TextResourceContents,
)
from pydantic import BaseModel

# A 1x1 PNG.
PIXEL = base64.b64decode(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg=='
)

app = FastMCP('edgewise-test-server', instructions='Numbers are added with `add`.', log_level='WARNING')


@app.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@app.tool()
def greet(name: str) -> str:
    """Greet someone."""
    return f'Hello, {name}!'


class Weather(BaseModel):
    city: str
    celsius: float


@app.tool()
def weather(city: str) -> Weather:
    """The weather in a city."""
    return Weather(city=city, celsius=21.5)


@app.tool()
def two_parts() -> list[str]:
    """Two text parts, no structured content."""
    return ['first', 'second']


@app.tool(structured_output=False)
def as_json_text() -> str:
    """A JSON document as text."""
    return '{"ok": true, "items": [1, 2]}'


@app.tool()
def picture() -> Image:
    """A tiny PNG image."""
    return Image(data=PIXEL, format='png')


@app.tool()
def sound() -> Audio:
    """A few bytes of WAV audio."""
    return Audio(data=b'RIFF0000WAVE', format='wav')


@app.tool(structured_output=False)
def picture_with_caption() -> list[Any]:
    """A caption and a tiny PNG image."""
    return ['a pixel', Image(data=PIXEL, format='png')]


@app.tool(structured_output=False)
def embedded() -> list[EmbeddedResource]:
    """Two embedded resources: a text and a blob."""
    return [
        EmbeddedResource(
            type='resource',
            resource=TextResourceContents(uri='memo://note', mimeType='text/plain', text='a note'),
        ),
        EmbeddedResource(
            type='resource',
            resource=BlobResourceContents(
                uri='memo://pixel', mimeType='image/png', blob=base64.b64encode(PIXEL).decode()
            ),
        ),
    ]


@app.tool(structured_output=False)
def link() -> ResourceLink:
    """A link to the `memo://readme` resource."""
    return ResourceLink(type='resource_link', uri='memo://readme', name='readme')


@app.tool(structured_output=False)
def bad_image() -> ImageContent:
    """An image whose data is not base64."""
    return ImageContent(type='image', data='not base64!', mimeType='image/png')


@app.resource(
    'memo://readme', name='readme', title='Read me', description='What this server is.', mime_type='text/plain'
)
def readme() -> str:
    return 'This server is for tests.'


@app.resource('memo://pixel.png', name='pixel', mime_type='image/png')
def pixel() -> bytes:
    return PIXEL


@app.resource('memo://notes/{topic}', name='note', description='A note on a topic.', mime_type='text/plain')
def note(topic: str) -> str:
    return f'Notes on {topic}.'


@app.tool()
async def add_resource(name: str, ctx: Context[Any, Any, Any]) -> str:
    """Adds a resource `memo://{name}` and tells the client that the resource list changed."""

    def content() -> str:
        return name

    app.resource(f'memo://{name}', name=name)(content)
    await ctx.session.send_resource_list_changed()
    return f'added {name}'


@app.prompt(title='Greeting', description='Greets someone by name.')
def greeting(name: str, mood: str = 'happy') -> list[Any]:
    return [UserMessage(f'Greet {name}, who is {mood}.'), AssistantMessage('Hello!')]


@app.prompt()
def with_resource() -> list[Any]:
    """A prompt with an embedded resource."""
    resource = TextResourceContents(uri='memo://readme', mimeType='text/plain', text='This server is for tests.')
    return [UserMessage(EmbeddedResource(type='resource', resource=resource))]


@app.tool()
def fail(reason: str) -> str:
    """Always fails with the given reason."""
    raise ValueError(reason)


@app.tool()
async def chatty(message: str, ctx: Context[Any, Any, Any]) -> str:
    """Sends log messages, then answers."""
    await ctx.debug(f'debug: {message}')
    await ctx.warning(f'warning: {message}')
    return 'logged'


@app.tool()
async def summarize(text: str, ctx: Context[Any, Any, Any]) -> str:
    """Asks the client's model for a summary (MCP sampling)."""
    result = await ctx.session.create_message(
        messages=[SamplingMessage(role='user', content=TextContent(type='text', text=text))],
        max_tokens=50,
        system_prompt='Summarize in a few words.',
        temperature=0.5,
    )
    assert isinstance(result.content, TextContent)
    return f'summary: {result.content.text} (by {result.model})'


@app.tool()
async def ask_agent(question: str, ctx: Context[Any, Any, Any], stream: bool = False) -> str:
    """Runs an Edgewise agent whose model is the client's (MCP sampling through `MCPSamplingModel`)."""
    from mcp.types import ModelHint, ModelPreferences

    from edgewise.agent import Agent, BinaryContent
    from edgewise.agent.messages import (
        ModelMessage,
        ModelRequest,
        ModelResponse,
        TextPart,
        ThinkingPart,
        UserContent,
        UserPromptPart,
    )
    from edgewise.agent.models.mcp_sampling import MCPSamplingModel, MCPSamplingModelSettings

    agent = Agent(MCPSamplingModel(ctx.session, default_max_tokens=99), instructions='Answer briefly.')
    settings = MCPSamplingModelSettings(
        temperature=0.25, stop_sequences=['END'], mcp_model_preferences=ModelPreferences(hints=[ModelHint(name='s')])
    )
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart('earlier')]),
        ModelResponse(parts=[ThinkingPart('hmm'), TextPart('earlier answer')]),
    ]
    prompt: list[UserContent] = [question, BinaryContent(PIXEL, media_type='image/png')]
    if stream:
        async with agent.run_stream(prompt, message_history=history, model_settings=settings) as streamed:
            return await streamed.get_output()  # pragma: no cover - sampling does not stream
    result = await agent.run(prompt, message_history=history, model_settings=settings)
    answer = result.all_messages()[-1]
    assert isinstance(answer, ModelResponse)
    return f'{result.output} (by {answer.model_name})'


class Person(BaseModel):
    name: str


@app.tool()
async def ask_name(ctx: Context[Any, Any, Any]) -> str:
    """Asks the user for their name (MCP elicitation)."""
    answer = await ctx.elicit('What is your name?', schema=Person)
    if answer.action == 'accept':
        return f'Nice to meet you, {answer.data.name}.'
    return f'No name ({answer.action}).'


@app.tool()
async def grow(name: str, ctx: Context[Any, Any, Any]) -> str:
    """Adds a tool called `name` and tells the client that the tool list changed."""

    def new_tool() -> str:
        return f'I am {name}'

    app.add_tool(new_tool, name=name, description=f'The tool {name}.')
    await ctx.session.send_tool_list_changed()
    return f'added {name}'


@app.tool()
def crash() -> str:
    """Exits the server process in the middle of the call."""
    os._exit(3)


@app.tool()
async def nap(seconds: float) -> str:
    """Sleeps, then answers."""
    await anyio.sleep(seconds)
    return 'rested'


@app.tool()
def caller(ctx: Context[Any, Any, Any]) -> dict[str, str | None]:
    """The `Authorization` and `X-User` headers of the HTTP request that called the tool."""
    headers = getattr(ctx.request_context.request, 'headers', None) or {}
    return {'authorization': headers.get('authorization'), 'user': headers.get('x-user')}


DASHBOARD = 'ui://dashboard/page.html'


@app.resource(DASHBOARD, mime_type='text/html;profile=mcp-app', meta={'ui': {'prefersBorder': True}})
def dashboard_page() -> str:
    """The MCP App page of the `dashboard` tools."""
    return '<p>dashboard</p>'


@app.tool(meta={'ui': {'resourceUri': DASHBOARD}})
def dashboard(city: str) -> dict[str, Any]:
    """The visits of a city, shown on the dashboard page (an MCP App)."""
    return {'city': city, 'visits': 3}


@app.tool(meta={'ui': {'resourceUri': DASHBOARD, 'visibility': ['app']}})
def refresh_dashboard(city: str) -> str:
    """Called by the dashboard page only: the model is not shown it."""
    return f'refreshed {city}'


if __name__ == '__main__':
    transport = sys.argv[1] if len(sys.argv) > 1 else 'stdio'
    if transport != 'stdio':
        app.settings.host = '127.0.0.1'
        app.settings.port = int(sys.argv[2])
    app.run(transport)  # type: ignore[arg-type]

"""An agent that calls the tools of an MCP server run as a subprocess, driven by `TestModel` (offline).

`TestModel` calls each tool the server lists (with made-up arguments, here the text `'a'`) and answers with
what they returned. Swap it for a real model (`'openai:gpt-5'`, ...) and nothing else changes.

Run it with `python -m examples.agent.mcp_stdio` (needs the `mcp` extra: `pip install "edgewise-agent[mcp]"`).
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

from edgewise.agent import Agent
from edgewise.agent.mcp import StdioTransport
from edgewise.agent.messages import ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart
from edgewise.agent.models.test import TestModel

SERVER_SCRIPT = Path(__file__).with_name('mcp_text_server.py')

text_tools = StdioTransport(sys.executable, [str(SERVER_SCRIPT)], tool_prefix='text', timeout=30)
agent = Agent(TestModel(), toolsets=[text_tools])


async def run() -> None:
    async with agent:  # starts the server once for every run inside the block
        tools = await text_tools.list_tools()
        print('server:', text_tools.server_info.name, '- tools:', ', '.join(tool.name for tool in tools))
        result = await agent.run('Look at the text.')
    for message in result.all_messages():
        parts = message.parts if isinstance(message, (ModelRequest, ModelResponse)) else []
        for part in parts:
            if isinstance(part, ToolCallPart):
                print(f'  call    {part.tool_name}({part.args})')
            elif isinstance(part, ToolReturnPart):
                print(f'  return  {part.tool_name} -> {part.content!r}')
    print('output:', result.output)


def main() -> None:
    anyio.run(run)


if __name__ == '__main__':
    main()

"""A small MCP server made with FastMCP (the MCP SDK's server framework): two text tools.

`examples/agent/mcp_stdio.py` starts it as a subprocess; any MCP client can: `python -m examples.agent.mcp_text_server`.
"""

from __future__ import annotations

from mcp.server.fastmcp import FastMCP

server = FastMCP('text-tools', instructions='Tools that look at text.', log_level='WARNING')


@server.tool()
def word_count(text: str) -> int:
    """Count the words of a text."""
    return len(text.split())


@server.tool()
def shout(text: str) -> str:
    """The text in capitals, with an exclamation mark."""
    return f'{text.upper()}!'


if __name__ == '__main__':
    server.run('stdio')

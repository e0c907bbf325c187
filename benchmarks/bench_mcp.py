# mypy: disable-error-code="import-not-found"
"""MCP tool call round trips over stdio against pydantic-ai 1.107's `MCPServerStdio`, on the same server.

Both clients connect once to their own copy of the same server process, then call the `add` tool in
batches, the two clients taking turns (A B A B ...); the median time per call of each is reported. The
main figure uses a minimal hand-written server (`_mcp_stdio_server.py`), so that it measures the clients;
the second one uses a FastMCP server (the SDK's framework), whose own cost per call dominates both.

pydantic-ai's client goes through the MCP SDK's `ClientSession` and stdio transport: a request crosses a
writer task, a reader task and the session's receive loop, each a task switch, and is built and parsed
through the SDK's pydantic models. Edgewise writes the request to the pipe from the caller and parses the
reply in one reader task, with plain JSON.
"""

from __future__ import annotations

import statistics
import sys
import time
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

from benchmarks._harness import Result, report

MINIMAL = Path(__file__).with_name('_mcp_stdio_server.py')
FASTMCP_SOURCE = '''
from mcp.server.fastmcp import FastMCP
app = FastMCP('bench', log_level='WARNING')
@app.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b
app.run('stdio')
'''


def _servers(args: list[str]) -> dict[str, Any]:
    from edgewise.agent.mcp import MCPServerStdio as EdgewiseStdio

    with warnings.catch_warnings():
        # pydantic-ai 1.107 deprecates its MCPServer* classes in favour of a FastMCP-based toolset.
        warnings.simplefilter('ignore', DeprecationWarning)
        from pydantic_ai.mcp import MCPServerStdio as PydanticStdio

        pydantic_server = PydanticStdio(sys.executable, args, timeout=60)
    return {'pydantic-ai': pydantic_server, 'edgewise': EdgewiseStdio(sys.executable, args, timeout=60)}


async def _measure(args: list[str], calls: int, repeats: int) -> dict[str, float]:
    servers = _servers(args)
    samples: dict[str, list[float]] = {name: [] for name in servers}
    async with servers['pydantic-ai'], servers['edgewise']:
        batches: dict[str, Callable[[], Awaitable[None]]] = {}
        for name, server in servers.items():

            async def batch(server: Any = server) -> None:
                for i in range(calls):
                    assert await server.direct_call_tool('add', {'a': i, 'b': 1}) == i + 1

            batches[name] = batch
        for name in servers:  # warm-up
            await batches[name]()
        for _ in range(repeats):
            for name in servers:
                start = time.perf_counter()
                await batches[name]()
                samples[name].append((time.perf_counter() - start) / calls)
    return {name: statistics.median(times) for name, times in samples.items()}


def main() -> None:
    minimal = Result('MCP tool call round trip over stdio, minimal server', 'call')
    minimal.per_unit = anyio.run(_measure, [str(MINIMAL)], 200, 9)
    minimal.notes.append('target: edgewise <= 0.5x pydantic-ai')
    print(report(minimal, anchor='pydantic-ai'), flush=True)
    fastmcp = Result('MCP tool call round trip over stdio, FastMCP server', 'call')
    fastmcp.per_unit = anyio.run(_measure, ['-c', FASTMCP_SOURCE], 50, 5)
    fastmcp.notes.append("the server's own work dominates the round trip here")
    print(report(fastmcp, anchor='pydantic-ai'), flush=True)

"""A minimal MCP server over stdio for the MCP benchmark: one `add` tool, answered as fast as Python can.

Hand-written on purpose (the protocol's handshake, `tools/list`, `tools/call`, `ping`), so that the round
trip measures the clients rather than a server framework. `python benchmarks/_mcp_stdio_server.py`.
"""

from __future__ import annotations

import json
import sys
from typing import Any

TOOLS = [
    {
        'name': 'add',
        'description': 'Add two integers.',
        'inputSchema': {
            'type': 'object',
            'properties': {'a': {'type': 'integer'}, 'b': {'type': 'integer'}},
            'required': ['a', 'b'],
        },
    }
]


def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == 'initialize':
        return {
            'protocolVersion': params.get('protocolVersion', '2025-06-18'),
            'capabilities': {'tools': {'listChanged': False}},
            'serverInfo': {'name': 'bench', 'version': '1'},
        }
    if method == 'tools/list':
        return {'tools': TOOLS}
    if method == 'tools/call':
        arguments = params['arguments']
        total = arguments['a'] + arguments['b']
        return {
            'content': [{'type': 'text', 'text': str(total)}],
            'structuredContent': {'result': total},
            'isError': False,
        }
    return {}


def main() -> None:
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        message = json.loads(line)
        if 'id' not in message or 'method' not in message:
            continue  # a notification, or an answer to a request the server never makes
        reply = {
            'jsonrpc': '2.0',
            'id': message['id'],
            'result': answer(message['method'], message.get('params') or {}),
        }
        out.write(json.dumps(reply).encode() + b'\n')
        out.flush()


if __name__ == '__main__':
    main()

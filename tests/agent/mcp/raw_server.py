"""A hand-written MCP server speaking raw JSON-RPC over stdio, for protocol corner cases no framework produces.

`python raw_server.py MODE`: `quirks` (noise on stdout, string ids, requests to the client, paginated
tools), `refuse` (an error answer to the handshake), `old` (an unknown protocol version), `list-error`
(an error answer to `tools/list`).
"""

from __future__ import annotations

import json
import sys
from typing import Any

MODE = sys.argv[1]
out = sys.stdout


def send(message: Any) -> None:
    out.write((message if isinstance(message, str) else json.dumps(message)) + '\n')
    out.flush()


replies: list[Any] = []
for line in sys.stdin:
    message = json.loads(line)
    method, request_id = message.get('method'), message.get('id')
    if method is None:
        replies.append(message)  # the client's answer to one of our requests
        continue
    if request_id is None:
        continue  # a notification
    if method == 'initialize':
        if MODE == 'refuse':
            send({'jsonrpc': '2.0', 'id': request_id, 'error': {'code': -32000, 'message': 'go away'}})
            continue
        if MODE == 'quirks':
            for noise in ['not json', '', '[1]', json.dumps({'jsonrpc': '2.0', 'id': 999, 'result': {}})]:
                send(noise)
            send({'jsonrpc': '2.0', 'id': 'bad', 'result': {}})
            send({'jsonrpc': '2.0', 'id': 'srv-1', 'method': 'ping'})
            send({'jsonrpc': '2.0', 'id': 'srv-2', 'method': 'roots/list'})
        version = '1999-01-01' if MODE == 'old' else message['params']['protocolVersion']
        result: dict[str, Any] = {
            'protocolVersion': version,
            'capabilities': {'tools': {}},
            'serverInfo': {'name': 'raw', 'version': '0'},
        }
        send({'jsonrpc': '2.0', 'id': str(request_id), 'result': result})
    elif method == 'tools/list':
        if MODE == 'list-error':
            send({'jsonrpc': '2.0', 'id': request_id, 'error': {'code': -32603, 'message': 'no list today'}})
            continue
        cursor = (message.get('params') or {}).get('cursor')
        tool = {'name': 'second' if cursor else 'first', 'inputSchema': {'type': 'object'}}
        page = {'tools': [tool], **({} if cursor else {'nextCursor': 'page-2'})}
        send({'jsonrpc': '2.0', 'id': request_id, 'result': page})
    elif method == 'tools/call':
        text = json.dumps(sorted(replies, key=lambda r: r['id']))
        send({'jsonrpc': '2.0', 'id': request_id, 'result': {'content': [{'type': 'text', 'text': text}]}})

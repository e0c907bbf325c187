"""A small Chat Completions server for the model benchmarks, run in its own process (its CPU is not measured).

`python -m benchmarks._chat_server` prints its port, then answers every POST with canned JSON, or with
canned server-sent events when the body asks for `"stream": true`, over HTTP/1.1 keep-alive connections.

Requests whose path starts with `/hold` wait until `POST /release`; `GET /held` says how many wait. The
memory benchmark uses them to keep a known number of runs in flight.
"""

from __future__ import annotations

import asyncio
import json
import sys

TEXT = 'The weather in Paris is mild today: nineteen degrees, light wind from the west, and no rain expected.'
WORDS = TEXT.split(' ')


def _completion() -> bytes:
    return json.dumps(
        {
            'id': 'chatcmpl-bench',
            'object': 'chat.completion',
            'created': 1700000000,
            'model': 'gpt-4o-2024-08-06',
            'choices': [
                {
                    'index': 0,
                    'finish_reason': 'stop',
                    'logprobs': None,
                    'message': {'role': 'assistant', 'content': TEXT, 'refusal': None},
                }
            ],
            'usage': {'prompt_tokens': 120, 'completion_tokens': 24, 'total_tokens': 144},
            'system_fingerprint': 'fp_bench',
        }
    ).encode()


def _chunk(delta: dict[str, object], finish_reason: str | None = None, usage: object = None) -> bytes:
    chunk: dict[str, object] = {
        'id': 'chatcmpl-bench',
        'object': 'chat.completion.chunk',
        'created': 1700000000,
        'model': 'gpt-4o-2024-08-06',
        'system_fingerprint': 'fp_bench',
        'choices': [{'index': 0, 'delta': delta, 'logprobs': None, 'finish_reason': finish_reason}]
        if usage is None
        else [],
    }
    if usage is not None:
        chunk['usage'] = usage
    return b'data: ' + json.dumps(chunk).encode() + b'\n\n'


def _events() -> list[bytes]:
    events = [_chunk({'role': 'assistant', 'content': '', 'refusal': None})]
    events += [_chunk({'content': word if i == 0 else ' ' + word}) for i, word in enumerate(WORDS)]
    events.append(_chunk({}, 'stop'))
    events.append(_chunk({}, usage={'prompt_tokens': 120, 'completion_tokens': 24, 'total_tokens': 144}))
    events.append(b'data: [DONE]\n\n')
    return events


COMPLETION = _completion()
PLAIN = (
    b'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n' % len(COMPLETION) + COMPLETION
)
# Each event its own chunk of a chunked body, as a streaming server sends them (written at once here).
STREAM = (
    b'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n'
    + b''.join(b'%x\r\n%s\r\n' % (len(event), event) for event in _events())
    + b'0\r\n\r\n'
)


class _Hold:
    def __init__(self) -> None:
        self.waiting = 0
        self.release = asyncio.Event()


async def _serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, hold: _Hold) -> None:
    try:
        while True:
            head = await reader.readuntil(b'\r\n\r\n')
            request_line, _, header_block = head.partition(b'\r\n')
            method, path, _version = request_line.split(b' ', 2)
            length = 0
            for line in header_block.split(b'\r\n'):
                name, _, value = line.partition(b':')
                if name.strip().lower() == b'content-length':
                    length = int(value)
            body = await reader.readexactly(length) if length else b''
            if path == b'/held':
                text = str(hold.waiting).encode()
                writer.write(b'HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s' % (len(text), text))
            elif path == b'/release':
                hold.release.set()
                hold.release = asyncio.Event()
                writer.write(b'HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n')
            else:
                if path.startswith(b'/hold'):
                    hold.waiting += 1
                    event = hold.release
                    await event.wait()
                    hold.waiting -= 1
                streamed = method == b'POST' and b'"stream":true' in body.replace(b' ', b'')
                writer.write(STREAM if streamed else PLAIN)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def main() -> None:
    hold = _Hold()
    server = await asyncio.start_server(lambda r, w: _serve(r, w, hold), '127.0.0.1', 0, backlog=4096)
    port = server.sockets[0].getsockname()[1]
    print(port, flush=True)
    async with server:
        await server.serve_forever()


if __name__ == '__main__':
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)

"""Server-sent events: an incremental parser of `text/event-stream` bodies (the WHATWG rules that LLM APIs use).

It takes the body in chunks of any size (an event, a line or a `\\r\\n` may be split between two chunks) and
yields each event once its blank line has arrived; an event left without its blank line at the end of the
body (as Gemini streams end) is yielded too.
"""

from __future__ import annotations as _annotations

import re
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass

__all__ = ('ServerSentEvent', 'SSEDecoder', 'aiter_sse')

_LINE_BREAK = re.compile('\r\n|\r|\n')


@dataclass(frozen=True, slots=True)
class ServerSentEvent:
    """One event of a stream."""

    event: str = 'message'
    """The event's type (`event:` field), `'message'` when the event names none."""
    data: str = ''
    """The event's data: its `data:` lines joined with `\\n`."""
    id: str | None = None
    """The last event id seen so far in the stream (`id:` field)."""
    retry: int | None = None
    """The reconnection time in milliseconds, when the event sets one."""


class SSEDecoder:
    """Turns lines of an event stream into events; feed it text with `feed`, then call `flush` at the end."""

    def __init__(self) -> None:
        self._buffer = ''
        self._pending_cr = False
        self._event = ''
        self._data: list[str] = []
        self._has_data = False
        self._last_id: str | None = None
        self._retry: int | None = None

    def feed(self, text: str) -> list[ServerSentEvent]:
        """The events completed by `text`, the next piece of the body."""
        if not text:
            return []
        if self._pending_cr and text.startswith('\n'):
            # The `\r` that ended the previous piece and this `\n` are one line break.
            text = text[1:]
        self._pending_cr = text.endswith('\r')
        # Only CR, LF and CRLF end lines here (not the other breaks `str.splitlines` knows, like U+2028).
        pieces = _LINE_BREAK.split(self._buffer + text)
        self._buffer = pieces.pop()  # the text after the last line break: the start of the next line
        events: list[ServerSentEvent] = []
        for line in pieces:
            event = self._line(line)
            if event is not None:
                events.append(event)
        return events

    def flush(self) -> list[ServerSentEvent]:
        """The events still held at the end of the body (a last line or event without its terminator)."""
        events: list[ServerSentEvent] = []
        if self._buffer:
            event = self._line(self._buffer)
            self._buffer = ''
            if event is not None:
                events.append(event)
        event = self._line('')
        if event is not None:
            events.append(event)
        return events

    def _line(self, line: str) -> ServerSentEvent | None:
        if not line:
            return self._dispatch()
        if line.startswith(':'):
            return None  # a comment, sent to keep the connection alive
        name, _, value = line.partition(':')
        value = value.removeprefix(' ')
        if name == 'data':
            self._data.append(value)
            self._has_data = True
        elif name == 'event':
            self._event = value
        elif name == 'id':
            if '\0' not in value:
                self._last_id = value
        elif name == 'retry' and value.isdigit():
            self._retry = int(value)
        return None

    def _dispatch(self) -> ServerSentEvent | None:
        if not self._has_data:
            # No data: nothing to dispatch, and the event type is reset as the standard says.
            self._event = ''
            return None
        event = ServerSentEvent(
            event=self._event or 'message', data='\n'.join(self._data), id=self._last_id, retry=self._retry
        )
        self._event = ''
        self._data = []
        self._has_data = False
        self._retry = None
        return event


async def aiter_sse(text_chunks: AsyncIterable[str]) -> AsyncIterator[ServerSentEvent]:
    """The events of a body given as decoded text chunks of any size."""
    decoder = SSEDecoder()
    async for chunk in text_chunks:
        for event in decoder.feed(chunk):
            yield event
    for event in decoder.flush():
        yield event

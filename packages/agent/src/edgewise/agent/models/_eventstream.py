"""The AWS event-stream binary framing (`application/vnd.amazon.eventstream`), decoded incrementally.

A message is a 12-byte prelude (total length, headers length, the prelude's CRC32, all big-endian), its headers
(a one-byte name length, the name, a one-byte type, the value), its payload, and the CRC32 of everything before.
`EventStreamDecoder.feed` takes the body's bytes as they arrive, split anywhere, and returns the messages completed
by them; a message that fails its checks raises `EventStreamError` (nothing after it can be trusted). Pure data,
no I/O: Bedrock's ConverseStream sends its events this way.
"""

from __future__ import annotations as _annotations

import struct
import uuid
import zlib
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

__all__ = ('EventStreamDecoder', 'EventStreamError', 'EventStreamMessage', 'MAX_MESSAGE_LENGTH', 'decode_headers')

MAX_MESSAGE_LENGTH = 16 * 1024 * 1024 + 128 * 1024 + 16
"""The longest message AWS sends (16 MiB of payload, 128 KiB of headers, the prelude and CRC)."""

_PRELUDE = 12
_MINIMUM = _PRELUDE + 4


class EventStreamError(ValueError):
    """The bytes are not a well-formed event stream (a bad length, checksum or header)."""


@dataclass(frozen=True)
class EventStreamMessage:
    """One decoded message: its headers by name, and its payload bytes."""

    headers: dict[str, Any]
    payload: bytes


def _fixed(data: bytes, at: int, size: int, fmt: str) -> tuple[Any, int]:
    if at + size > len(data):
        raise EventStreamError('A header value runs past the end of the headers.')
    return struct.unpack_from(fmt, data, at)[0], at + size


def _sized(data: bytes, at: int) -> tuple[bytes, int]:
    length, at = _fixed(data, at, 2, '>H')
    if at + length > len(data):
        raise EventStreamError('A header value runs past the end of the headers.')
    return data[at : at + length], at + length


def _value(data: bytes, at: int, kind: int) -> tuple[Any, int]:
    if kind == 0:
        return True, at
    if kind == 1:
        return False, at
    if kind == 2:
        return _fixed(data, at, 1, '>b')
    if kind == 3:
        return _fixed(data, at, 2, '>h')
    if kind == 4:
        return _fixed(data, at, 4, '>i')
    if kind == 5:
        return _fixed(data, at, 8, '>q')
    if kind == 6:
        return _sized(data, at)
    if kind == 7:
        raw, at = _sized(data, at)
        return raw.decode('utf-8', errors='replace'), at
    if kind == 8:
        millis, at = _fixed(data, at, 8, '>q')
        return datetime.fromtimestamp(millis / 1000, tz=timezone.utc), at
    if kind == 9:
        if at + 16 > len(data):
            raise EventStreamError('A header value runs past the end of the headers.')
        return uuid.UUID(bytes=data[at : at + 16]), at + 16
    raise EventStreamError(f'Unknown header value type {kind}.')


def decode_headers(data: bytes) -> dict[str, Any]:
    """The headers of a message, from their bytes."""
    headers: dict[str, Any] = {}
    at = 0
    while at < len(data):
        length = data[at]
        name_end = at + 1 + length
        if name_end + 1 > len(data):
            raise EventStreamError('A header name runs past the end of the headers.')
        name = data[at + 1 : name_end].decode('utf-8', errors='replace')
        headers[name], at = _value(data, name_end + 1, data[name_end])
    return headers


class EventStreamDecoder:
    """Turns event-stream bytes, fed in pieces of any size, into messages."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, chunk: bytes) -> list[EventStreamMessage]:
        """The messages the bytes so far complete.

        Raises:
            EventStreamError: a message's prelude or checksum is wrong, or its headers are malformed.
        """
        self._buffer += chunk
        messages: list[EventStreamMessage] = []
        while len(self._buffer) >= _PRELUDE:
            total, headers_length, prelude_crc = struct.unpack_from('>III', self._buffer)
            if zlib.crc32(self._buffer[:8]) != prelude_crc:
                raise EventStreamError('The checksum of a message prelude does not match.')
            if not _MINIMUM + headers_length <= total <= MAX_MESSAGE_LENGTH:
                raise EventStreamError(f'A message length of {total} bytes is out of range.')
            if len(self._buffer) < total:
                break
            message = bytes(self._buffer[:total])
            del self._buffer[:total]
            (message_crc,) = struct.unpack_from('>I', message, total - 4)
            if zlib.crc32(message[:-4]) != message_crc:
                raise EventStreamError('The checksum of a message does not match.')
            headers = decode_headers(message[_PRELUDE : _PRELUDE + headers_length])
            messages.append(EventStreamMessage(headers, message[_PRELUDE + headers_length : -4]))
        return messages

    @property
    def pending(self) -> int:
        """How many bytes are buffered towards a message not yet complete."""
        return len(self._buffer)

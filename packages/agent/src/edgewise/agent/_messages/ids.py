"""Time-ordered ids: UUID version 7 (RFC 9562), for conversations and enqueued content."""

from __future__ import annotations as _annotations

import os
import time

__all__ = ('uuid7',)


def uuid7() -> str:
    """A new UUID version 7 as text: 48 bits of Unix milliseconds, then random bits (ids made later sort later)."""
    value = (time.time_ns() // 1_000_000) << 80 | int.from_bytes(os.urandom(10), 'big')
    value = value & ~(0xF000 << 64) | 0x7000 << 64  # version 7
    value = value & ~(0xC << 60) | 0x8 << 60  # RFC 9562 variant
    h = f'{value:032x}'
    return f'{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}'

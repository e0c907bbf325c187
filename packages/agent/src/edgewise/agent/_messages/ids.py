"""Time-ordered ids: UUID version 7 (RFC 9562), for conversations and enqueued content."""

from __future__ import annotations as _annotations

import os
import time

__all__ = ('uuid7',)


def uuid7() -> str:
    """A new UUID version 7 as text: 48 bits of Unix milliseconds, then random bits (ids made later sort later)."""
    # Built as bytes (cheaper than the same bits as one 128-bit int): the milliseconds in 6 bytes, then the random
    # ones, with the version in the high half of the first and the variant in the top bits of the third.
    random = bytearray(os.urandom(10))
    random[0] = random[0] & 0x0F | 0x70  # version 7
    random[2] = random[2] & 0x3F | 0x80  # RFC 9562 variant
    h = ((time.time_ns() // 1_000_000).to_bytes(6, 'big') + random).hex()
    return f'{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}'

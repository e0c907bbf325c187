"""What the `edgewise` command's modules share: the error a user's mistake raises, and output helpers."""

from __future__ import annotations as _annotations

import sys
from datetime import datetime, timezone

from ..exceptions import GraphError

__all__ = ('CommandError', 'echo', 'when', 'duration')


class CommandError(GraphError):
    """A mistake in a command's arguments or in what they point at; printed as one line, exit status 1."""


def echo(text: str = '', *, end: str = '\n') -> None:
    """Print to stdout at once (progress lines must show while the next node runs)."""
    sys.stdout.write(text + end)
    sys.stdout.flush()


def when(moment: datetime | None) -> str:
    """A UTC time to the second, `2026-01-31 23:59:59`, or `-`."""
    if moment is None:
        return '-'
    # isoformat is several times faster than strftime, which shows on listings of thousands of runs.
    return moment.astimezone(timezone.utc).isoformat(' ', 'seconds')[:19]


def duration(seconds: float | None) -> str:
    """A duration in the unit that suits it: `850 us`, `12.3 ms`, `4.56 s`, or `-`."""
    if seconds is None:
        return '-'
    if seconds < 1e-3:
        return f'{seconds * 1e6:.0f} us'
    if seconds < 1:
        return f'{seconds * 1e3:.1f} ms'
    return f'{seconds:.2f} s'

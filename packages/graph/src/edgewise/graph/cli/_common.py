"""What the `edgewise` command's modules share: the error a user's mistake raises, and output helpers."""

from __future__ import annotations as _annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Any, TextIO, cast

from ..exceptions import GraphError

__all__ = ('CommandError', 'echo', 'progress_output', 'when', 'duration')


class CommandError(GraphError):
    """A mistake in a command's arguments or in what they point at; printed as one line, exit status 1."""


def echo(text: str = '', *, end: str = '\n') -> None:
    """Print to stdout at once (progress lines must show while the next node runs).

    Under `progress_output()`, a line that something else wrote into (a node that prints) starts again on a line of
    its own before `text` goes on with it.
    """
    out = sys.stdout
    if not isinstance(out, _ProgressOutput):
        out.write(text + end)
        out.flush()
        return
    target = out.target
    if out.broken and out.line is not None:
        target.write(('' if out.at_line_start else '\n') + out.line)
    out.broken = False
    target.write(text + end)
    out.line = None if end.endswith('\n') else (out.line or '') + text + end
    target.flush()


class _ProgressOutput:
    """Stands for stdout while progress lines are written: what others write breaks off the unfinished line."""

    def __init__(self, target: TextIO) -> None:
        self.target = target
        self.line: str | None = None
        """The progress line written so far, while it waits for its end."""
        self.broken = False
        """Whether others wrote since the progress line was last written to."""
        self.at_line_start = True
        """Whether what others wrote ended with a line break."""

    def write(self, text: str) -> int:
        if not text:
            return 0
        if self.line is not None and not self.broken:
            self.target.write('\n')
            self.broken = True
        self.at_line_start = text.endswith('\n')
        return self.target.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.target, name)


@contextmanager
def progress_output() -> Iterator[None]:
    """Within: a node that prints between a progress line's start and its end gets lines of its own."""
    target = sys.stdout
    sys.stdout = cast(TextIO, _ProgressOutput(target))
    try:
        yield
    finally:
        sys.stdout = target


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

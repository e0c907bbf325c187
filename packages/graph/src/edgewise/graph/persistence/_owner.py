"""Who holds a run: the current process's identity, and whether a recorded owner is still alive."""

from __future__ import annotations as _annotations

import json
import os
import socket
import time
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ('Owner', 'current_owner', 'owner_is_alive')


@dataclass(frozen=True, kw_only=True)
class Owner:
    """The process holding a run: enough to tell, on the same host, whether it is still alive."""

    host: str
    pid: int
    started: str
    """An identity of the process's start (boot-relative on Linux), so that a reused pid is not taken for it."""
    token: str
    """Unique per claim, so that one process's separate claims are told apart."""

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str | None) -> Owner | None:
        if not text:
            return None
        try:
            data: Any = json.loads(text)
            return cls(
                host=str(data['host']), pid=int(data['pid']), started=str(data['started']), token=str(data['token'])
            )
        except (ValueError, KeyError, TypeError):
            return None

    def describe(self) -> str:
        return f'process {self.pid} on host {self.host!r} (started {self.started})'


def _process_start(pid: int) -> str | None:
    """The start time of `pid` in clock ticks since boot (Linux), or `None` where it cannot be read."""
    try:
        with open(f'/proc/{pid}/stat', 'rb') as f:
            stat = f.read()
    except OSError:
        return None
    # The command name (field 2) may contain spaces and parentheses: split after its closing parenthesis.
    fields = stat[stat.rfind(b')') + 2 :].split()
    if fields[0] in (b'Z', b'X'):  # killed, not yet reaped by its parent: gone all the same
        return 'gone'
    return f'ticks:{int(fields[19])}'


_pid = -1
_started = ''


def _identity() -> tuple[int, str]:
    global _pid, _started
    pid = os.getpid()
    if pid != _pid:  # first call, or a forked child
        _started = _process_start(pid) or f'time:{time.time():.6f}'
        _pid = pid
    return pid, _started


def current_owner() -> Owner:
    """A new owner record for this process, with a fresh token."""
    pid, started = _identity()
    return Owner(host=socket.gethostname(), pid=pid, started=started, token=os.urandom(12).hex())


def owner_is_alive(owner: Owner) -> bool:
    """Whether `owner` may still be running: `False` only when it is known to be gone.

    A process on another host cannot be checked from here, so it counts as alive.
    """
    if owner.host != socket.gethostname():
        return True
    pid, started = _identity()
    if owner.pid == pid:
        return owner.started == started
    try:
        os.kill(owner.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - a live process of another user
        return True
    actual = _process_start(owner.pid)
    if actual == 'gone':
        return False
    if actual is None or not owner.started.startswith('ticks:'):  # pragma: no cover - without /proc
        return True
    return actual == owner.started

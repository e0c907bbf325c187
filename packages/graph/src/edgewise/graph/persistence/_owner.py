"""Who holds a run: the current process's identity, and whether a recorded owner is still alive.

A claim may also take a lease: an OS lock (`flock`) on a file named after the claim's token, in a directory
shared by the host's processes. A backend whose hold is only a record in its store (SQLite) takes one, so that
letting go of a run never needs a write: should the store refuse the write that clears the record (a full
disk), dropping the lease still tells every process on the host, at once, that the run is free. The OS drops
a lease when its process dies.
"""

from __future__ import annotations as _annotations

import contextlib
import json
import os
import socket
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ('Owner', 'current_owner', 'drop_lease', 'owner_is_alive')


@dataclass(frozen=True, kw_only=True)
class Owner:
    """The process holding a run: enough to tell, on the same host, whether it is still alive."""

    host: str
    pid: int
    started: str
    """An identity of the process's start (boot-relative on Linux), so that a reused pid is not taken for it."""
    token: str
    """Unique per claim, so that one process's separate claims are told apart."""
    lease: bool = False
    """The claim holds a lease (see the module's docstring): it is over as soon as the lease is dropped."""

    def to_json(self) -> str:
        data = asdict(self)
        if not self.lease:
            del data['lease']  # the record as earlier versions wrote it
        return json.dumps(data)

    @classmethod
    def from_json(cls, text: str | None) -> Owner | None:
        if not text:
            return None
        try:
            data: Any = json.loads(text)
            return cls(
                host=str(data['host']),
                pid=int(data['pid']),
                started=str(data['started']),
                token=str(data['token']),
                lease=data.get('lease') is True,
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


def current_owner(*, lease: bool = False) -> Owner:
    """A new owner record for this process, with a fresh token; with `lease`, holding a new lease until
    `drop_lease`."""
    pid, started = _identity()
    owner = Owner(host=socket.gethostname(), pid=pid, started=started, token=os.urandom(12).hex(), lease=lease)
    if lease and fcntl is not None:
        directory = _lease_directory()
        fd = os.open(directory / owner.token, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX)
        _leases[owner.token] = fd
    return owner


def drop_lease(owner: Owner) -> None:
    """End `owner`'s lease (if it holds one): from now on no process takes it for a live holder. Never fails."""
    fd = _leases.pop(owner.token, None)
    if fd is not None:
        with contextlib.suppress(FileNotFoundError):  # removed by hand meanwhile
            os.unlink(_lease_directory() / owner.token)
        os.close(fd)  # closing drops the lock


_leases: dict[str, int] = {}
"""The leases this process holds, by token."""


def _lease_directory() -> Path:
    directory = Path(tempfile.gettempdir()) / 'edgewise-leases'
    if not directory.is_dir():
        try:
            directory.mkdir()
            directory.chmod(0o1777)  # shared by the host's users, as /tmp is
        except FileExistsError:  # pragma: no cover - made by another process meanwhile
            pass
    return directory


def _lease_is_held(owner: Owner) -> bool:
    """Whether `owner`'s lease is still held (by a process of this host)."""
    if fcntl is None:  # pragma: no cover - Windows
        return True
    try:
        fd = os.open(_lease_directory() / owner.token, os.O_RDONLY)
    except FileNotFoundError:
        return False  # dropped
    except OSError:  # pragma: no cover - not readable here: cannot tell, so held
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False  # its holder died before dropping it


def owner_is_alive(owner: Owner) -> bool:
    """Whether `owner` may still be running: `False` only when it is known to be gone.

    A process on another host cannot be checked from here, so it counts as alive.
    """
    if owner.host != socket.gethostname():
        return True
    pid, started = _identity()
    if owner.pid == pid and owner.started == started:
        return owner.token in _leases if owner.lease else True
    if owner.pid == pid:
        return False
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
        return not owner.lease or _lease_is_held(owner)
    return actual == owner.started and (not owner.lease or _lease_is_held(owner))

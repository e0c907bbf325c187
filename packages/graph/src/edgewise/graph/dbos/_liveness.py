"""Which DBOS executors are alive: each worker holds a lock named after its executor id for as long as it lives.

DBOS recovers the runs of a dead executor only when something asks it to for that executor's id (DBOS
Conductor does in DBOS's cloud; a process restarted with the same id does at launch). Edgewise workers
ask each other instead: a worker holds its executor's lock from before `DBOS.launch()` until it exits, so
a lock that another worker can take belongs to an executor that is gone. The survivor holds that lock while
it hands the dead executor's runs back to their queues, so the same executor id cannot start again in
between and have a run it just took handed out a second time.

- PostgreSQL: a session-level advisory lock on a connection of its own. The server drops it when the
  process's connection closes: at once for a killed process (its socket is closed by the kernel), within
  the TCP keepalive time set on the session for a machine that vanished.
- SQLite (one machine): an `flock` on a file beside the database, released by the kernel when the process
  dies.
"""

from __future__ import annotations as _annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any, Protocol

__all__ = ('ExecutorLocks', 'executor_locks', 'libpq_dsn', 'sqlite_path')

# A vanished machine's session is dropped by the server after about idle + interval * count seconds.
_KEEPALIVE_SETTINGS = (
    'SET tcp_keepalives_idle = 10',
    'SET tcp_keepalives_interval = 5',
    'SET tcp_keepalives_count = 3',
)


class ExecutorLocks(Protocol):
    """The liveness locks of one system database."""

    def hold(self, executor_id: str) -> None:
        """Take this process's own lock, waiting while another process (a survivor recovering it) holds it."""
        ...

    def try_take(self, executor_id: str) -> bool:
        """Take another executor's lock if it is free (its executor is gone); `True` if taken."""
        ...

    def release(self, executor_id: str) -> None:
        """Release a lock taken by `try_take`."""
        ...

    def close(self) -> None:
        """Release every lock and close the connection or files."""
        ...


def libpq_dsn(url: str) -> str:
    """A SQLAlchemy-style PostgreSQL URL (`postgresql+psycopg://...`) as libpq takes it (`postgresql://...`)."""
    return re.sub(r'^postgres(ql)?\+[A-Za-z0-9_]+://', 'postgresql://', url)


def executor_locks(system_database_url: str) -> ExecutorLocks:
    """The liveness locks of the system database at `system_database_url` (PostgreSQL or SQLite)."""
    if system_database_url.startswith('sqlite'):
        return _FileLocks(sqlite_path(system_database_url))
    return _AdvisoryLocks(libpq_dsn(system_database_url))


def sqlite_path(url: str) -> Path:
    """The database file of a SQLAlchemy-style SQLite URL."""
    # `sqlite:///relative.db` and `sqlite:////absolute.db`, as SQLAlchemy reads them.
    path = url.split('://', 1)[1]
    path = path[1:] if path.startswith('/') else path
    return Path(path.split('?', 1)[0])


def _lock_key(executor_id: str) -> int:
    # Advisory locks take a signed 64-bit key; a hash keeps ids of any length apart.
    digest = hashlib.blake2b(f'edgewise-executor:{executor_id}'.encode(), digest_size=8).digest()
    return int.from_bytes(digest, 'big', signed=True)


class _AdvisoryLocks:
    def __init__(self, dsn: str) -> None:
        import psycopg

        self._conn: Any = psycopg.connect(dsn, autocommit=True)
        for statement in _KEEPALIVE_SETTINGS:
            self._conn.execute(statement)

    def hold(self, executor_id: str) -> None:
        self._conn.execute('SELECT pg_advisory_lock(%s)', (_lock_key(executor_id),))

    def try_take(self, executor_id: str) -> bool:
        row = self._conn.execute('SELECT pg_try_advisory_lock(%s)', (_lock_key(executor_id),)).fetchone()
        return bool(row[0])

    def release(self, executor_id: str) -> None:
        self._conn.execute('SELECT pg_advisory_unlock(%s)', (_lock_key(executor_id),))

    def close(self) -> None:
        self._conn.close()


class _FileLocks:
    def __init__(self, database: Path) -> None:
        self._dir = database.parent / f'{database.name}.executors'
        self._dir.mkdir(parents=True, exist_ok=True)
        self._held: dict[str, int] = {}

    def _open(self, executor_id: str) -> int:
        name = hashlib.blake2b(executor_id.encode(), digest_size=16).hexdigest()
        return os.open(self._dir / f'{name}.lock', os.O_RDWR | os.O_CREAT, 0o644)

    def hold(self, executor_id: str) -> None:
        import fcntl

        fd = self._open(executor_id)
        fcntl.flock(fd, fcntl.LOCK_EX)
        self._held[executor_id] = fd

    def try_take(self, executor_id: str) -> bool:
        import fcntl

        fd = self._open(executor_id)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._held[executor_id] = fd
        return True

    def release(self, executor_id: str) -> None:
        fd = self._held.pop(executor_id, None)
        if fd is not None:
            os.close(fd)  # closing the descriptor releases its flock

    def close(self) -> None:
        for executor_id in list(self._held):
            self.release(executor_id)

"""Liveness locks: an executor's lock is taken by another process only once its holder is gone."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from edgewise.graph.dbos._liveness import executor_locks, libpq_dsn, sqlite_path

from .conftest import ROOT

HOLD = """
import sys
from edgewise.graph.dbos._liveness import executor_locks
locks = executor_locks(sys.argv[1])
locks.hold(sys.argv[2])
conn = getattr(locks, '_conn', None)  # PostgreSQL: name the server process that holds the lock
print('held', conn.execute('SELECT pg_backend_pid()').fetchone()[0] if conn else '-', flush=True)
sys.stdin.read()
"""


def wait_for_backend_exit(url: str, pid: str) -> None:
    """Wait until PostgreSQL has ended the killed holder's server process.

    The server learns of the dead client from its closed socket; on a busy machine that takes a moment, and until
    then the lock is rightly still held. The wait is for that event, capped only to fail clearly.
    """
    import psycopg

    with psycopg.connect(libpq_dsn(url), autocommit=True) as conn:
        deadline = time.monotonic() + 120
        while conn.execute('SELECT 1 FROM pg_stat_activity WHERE pid = %s', (int(pid),)).fetchone():
            assert time.monotonic() < deadline, f"PostgreSQL kept the killed holder's backend {pid} for 120 s"
            time.sleep(0.05)


def check_locks(url: str, after_kill: Callable[[str], None] | None = None) -> None:
    held, other, mine = 'edgewise-held', 'edgewise-other', 'edgewise-mine'
    holder = subprocess.Popen(
        [sys.executable, '-c', HOLD, url, held], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None
    assert holder.stdin is not None
    word, backend = holder.stdout.readline().split()
    assert word == 'held'
    survivor = executor_locks(url)
    try:
        assert not survivor.try_take(held)  # its holder lives
        assert survivor.try_take(other)  # nobody holds this one
        survivor.release(other)
        holder.kill()
        holder.wait()
        if after_kill is not None:
            after_kill(backend)
        assert survivor.try_take(held)  # the holder is gone
        survivor.release(held)
        survivor.hold(mine)
    finally:
        survivor.close()
        holder.kill()
        holder.communicate()


def test_sqlite_file_locks(tmp_path: Path) -> None:
    check_locks(f'sqlite:///{tmp_path / "system.sqlite"}')
    assert (tmp_path / 'system.sqlite.executors').is_dir()


def test_postgres_advisory_locks(postgres_url: str) -> None:
    url = postgres_url.replace('postgresql://', 'postgresql+psycopg://')
    check_locks(url, lambda backend: wait_for_backend_exit(url, backend))


@pytest.mark.parametrize(
    ('url', 'dsn'),
    [
        ('postgresql+psycopg://u@h/db', 'postgresql://u@h/db'),
        ('postgres+psycopg2://u@h/db', 'postgresql://u@h/db'),
        ('postgresql://u@h/db', 'postgresql://u@h/db'),
    ],
)
def test_libpq_dsn(url: str, dsn: str) -> None:
    assert libpq_dsn(url) == dsn


def test_sqlite_path() -> None:
    assert sqlite_path('sqlite:///runs.sqlite') == Path('runs.sqlite')
    assert sqlite_path('sqlite:////var/lib/runs.sqlite?timeout=5') == Path('/var/lib/runs.sqlite')

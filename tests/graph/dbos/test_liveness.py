"""Liveness locks: an executor's lock is taken by another process only once its holder is gone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from edgewise.graph.dbos._liveness import executor_locks, libpq_dsn, sqlite_path

from .conftest import ROOT

HOLD = """
import sys
from edgewise.graph.dbos._liveness import executor_locks
locks = executor_locks(sys.argv[1])
locks.hold('edgewise-held')
print('held', flush=True)
sys.stdin.read()
"""


def check_locks(url: str) -> None:
    holder = subprocess.Popen(
        [sys.executable, '-c', HOLD, url], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None
    assert holder.stdin is not None
    assert holder.stdout.readline() == 'held\n'
    survivor = executor_locks(url)
    try:
        assert not survivor.try_take('edgewise-held')  # its holder lives
        assert survivor.try_take('edgewise-other')  # nobody holds this one
        survivor.release('edgewise-other')
        holder.kill()
        holder.wait()
        assert survivor.try_take('edgewise-held')  # the holder is gone
        survivor.release('edgewise-held')
        survivor.hold('edgewise-mine')
    finally:
        survivor.close()
        holder.kill()
        holder.communicate()


def test_sqlite_file_locks(tmp_path: Path) -> None:
    check_locks(f'sqlite:///{tmp_path / "system.sqlite"}')
    assert (tmp_path / 'system.sqlite.executors').is_dir()


def test_postgres_advisory_locks(postgres_url: str) -> None:
    check_locks(postgres_url.replace('postgresql://', 'postgresql+psycopg://'))


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

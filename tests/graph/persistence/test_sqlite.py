"""SQLite specifics: listing runs, schema versions, foreign or damaged files, waiting for other writers."""

from __future__ import annotations

import gc
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import anyio
import pytest

from edgewise.graph.exceptions import PersistenceError
from edgewise.graph.persistence import sqlite as sqlite_module
from edgewise.graph.persistence._sql import SCHEMA_VERSION
from edgewise.graph.persistence.sqlite import SqliteStatePersistence

from ._workflow import Fails, Start, Tally, cycle_graph

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).parents[3]


async def test_list_runs_shows_each_run_with_its_status(tmp_path: Path) -> None:
    db = tmp_path / 'runs.db'
    before = datetime.now(tz=timezone.utc)
    await cycle_graph.run(Start(), state=Tally(target=1), persistence=SqliteStatePersistence(db, 'finished'))
    await cycle_graph.initialize(Start(), SqliteStatePersistence(db, 'waiting'), state=Tally())
    with pytest.raises(ValueError, match='always fails'):
        await cycle_graph.run(Fails(), state=Tally(), persistence=SqliteStatePersistence(db, 'failed'))
    running = SqliteStatePersistence(db, 'running')
    await cycle_graph.initialize(Start(), running, state=Tally())
    [snapshot] = await running.load_all()
    async with running.claim_run(), running.record_run(snapshot.id):
        runs = await SqliteStatePersistence.list_runs(db)

    assert [(r.run_id, r.graph_name, r.status, r.snapshot_count) for r in runs] == [
        ('finished', 'cycle_graph', 'finished', 4),
        ('waiting', 'cycle_graph', 'waiting', 1),
        ('failed', 'cycle_graph', 'failed', 1),
        ('running', 'cycle_graph', 'running', 1),
    ]
    assert all(before <= r.created <= r.updated <= datetime.now(tz=timezone.utc) for r in runs)
    assert [r.created for r in runs] == sorted(r.created for r in runs)


async def test_list_runs_of_a_missing_file_is_empty_and_creates_nothing(tmp_path: Path) -> None:
    assert await SqliteStatePersistence.list_runs(tmp_path / 'nothing.db') == []
    assert [p async for p in anyio.Path(tmp_path).iterdir()] == []


async def test_a_run_id_is_generated_when_not_given(tmp_path: Path) -> None:
    first = SqliteStatePersistence(tmp_path / 'runs.db')
    second = SqliteStatePersistence(tmp_path / 'runs.db')

    assert first.run_id.startswith('run-')
    assert first.run_id != second.run_id
    assert repr(first) == f'SqliteStatePersistence(path={str(tmp_path / "runs.db")!r}, run_id={first.run_id!r})'


async def test_the_database_is_in_wal_mode_with_its_schema_version(tmp_path: Path) -> None:
    db = tmp_path / 'runs.db'
    async with SqliteStatePersistence(db, 'r') as persistence:
        await cycle_graph.initialize(Start(), persistence, state=Tally())

    with sqlite3.connect(db) as conn:
        assert conn.execute('PRAGMA journal_mode').fetchone() == ('wal',)
        assert conn.execute('SELECT version FROM edgewise_schema_version').fetchall() == [(SCHEMA_VERSION,)]


async def test_a_database_with_a_newer_schema_is_refused(tmp_path: Path) -> None:
    db = tmp_path / 'runs.db'
    with sqlite3.connect(db) as conn:
        conn.execute('CREATE TABLE edgewise_schema_version (version INTEGER NOT NULL)')
        conn.execute('INSERT INTO edgewise_schema_version VALUES (99)')

    with pytest.raises(PersistenceError, match='holds an Edgewise schema of version 99, newer than'):
        await SqliteStatePersistence.list_runs(db)


async def test_an_older_schema_is_migrated(tmp_path: Path) -> None:
    db = tmp_path / 'runs.db'
    with sqlite3.connect(db) as conn:
        conn.execute('CREATE TABLE edgewise_schema_version (version INTEGER NOT NULL)')
        conn.execute('INSERT INTO edgewise_schema_version VALUES (0)')

    assert await SqliteStatePersistence.list_runs(db) == []
    with sqlite3.connect(db) as conn:
        assert conn.execute('SELECT version FROM edgewise_schema_version').fetchall() == [(SCHEMA_VERSION,)]


async def test_a_database_of_another_application_is_refused_and_untouched(tmp_path: Path) -> None:
    db = tmp_path / 'other.db'
    with sqlite3.connect(db) as conn:
        conn.execute('CREATE TABLE checkpoints (id TEXT)')
    before = db.read_bytes()

    persistence = SqliteStatePersistence(db, 'r')
    with pytest.raises(PersistenceError, match=r'is a SQLite database of another application \(tables: checkpoints\)'):
        await cycle_graph.initialize(Start(), persistence, state=Tally())
    assert db.read_bytes() == before


async def test_a_file_that_is_not_a_database_is_refused_and_untouched(tmp_path: Path) -> None:
    db = tmp_path / 'notes.db'
    db.write_text('just some notes, not a database' * 100)

    persistence = SqliteStatePersistence(db, 'r')
    with pytest.raises(PersistenceError, match=r"SQLite file '.*notes.db' cannot be used for run 'r': file is not a"):
        await cycle_graph.initialize(Start(), persistence, state=Tally())
    assert db.read_text() == 'just some notes, not a database' * 100


async def test_a_store_cut_short_is_refused_before_anything_touches_it(tmp_path: Path) -> None:
    db = tmp_path / 'runs.db'
    async with SqliteStatePersistence(db, 'r') as persistence:
        await cycle_graph.initialize(Start(), persistence, state=Tally(trail=['x' * 20_000]))
    with sqlite3.connect(db) as conn:  # everything in the file, nothing left in the log
        conn.execute('PRAGMA wal_checkpoint(TRUNCATE)')
    whole = db.read_bytes()
    db.write_bytes(whole[: len(whole) // 2])
    before = db.read_bytes()

    with pytest.raises(PersistenceError) as exc_info:
        await SqliteStatePersistence(db, 'r').info()
    assert exc_info.value.message == (
        f"SQLite file '{db}' is damaged: its header counts {len(whole) // 4096} pages of 4096 bytes, but the file "
        f'holds {len(before)} bytes (cut short?). Nothing was changed; restore the file from a copy.'
    )
    assert db.read_bytes() == before


async def test_a_write_waits_while_another_process_holds_the_write_lock(tmp_path: Path) -> None:
    db = tmp_path / 'runs.db'
    persistence = SqliteStatePersistence(db, 'r')
    await cycle_graph.initialize(Start(), persistence, state=Tally())
    blocker = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    blocker.execute('BEGIN IMMEDIATE')
    timer = threading.Timer(0.05, lambda: blocker.execute('COMMIT'))
    timer.start()

    assert await persistence.load_next() is not None
    timer.join()
    blocker.close()


async def test_a_write_gives_up_after_the_busy_timeout(tmp_path: Path) -> None:
    db = tmp_path / 'runs.db'
    persistence = SqliteStatePersistence(db, 'r', busy_timeout=0.02)
    await cycle_graph.initialize(Start(), persistence, state=Tally())
    blocker = sqlite3.connect(db, isolation_level=None)
    blocker.execute('BEGIN IMMEDIATE')
    try:
        with pytest.raises(PersistenceError, match=r'stayed locked by another process for more than 0.02 s'):
            await persistence.load_next()
    finally:
        blocker.execute('ROLLBACK')
        blocker.close()
    assert (await persistence.load_next()) is not None


async def test_the_log_is_copied_into_the_database_in_the_background(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_module, '_CHECKPOINT_EVERY', 64)
    db = tmp_path / 'runs.db'
    await cycle_graph.run(Start(), state=Tally(target=90), persistence=SqliteStatePersistence(db, 'long'))
    for thread in threading.enumerate():
        if thread.name == 'edgewise-sqlite-checkpoint':
            thread.join()

    with sqlite3.connect(f'file:{db}?mode=ro', uri=True) as conn:
        assert conn.execute('PRAGMA integrity_check').fetchall() == [('ok',)]
    assert (await anyio.Path(db).stat()).st_size > 16 * 1024  # pages reached the database file, not only the log


_LOG_LIMIT = 2 * 1024 * 1024
_LOG_BOUND = _LOG_LIMIT + 256 * 1024
"""The log file's bound by construction: the limit, and the pages of two writes."""


@pytest.fixture
def stalled_checkpoints(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A busy machine, made certain: background checkpoints start and then never run."""
    release = threading.Event()

    def stalled(self: sqlite_module._Checkpointer, path: str) -> None:
        release.wait()
        with self._lock:
            self._running.discard(path)

    monkeypatch.setattr(sqlite_module._Checkpointer, '_checkpoint', stalled)
    yield
    release.set()


async def _log_sizes_over_a_long_run(db: Path) -> list[int]:
    persistence = SqliteStatePersistence(db, 'long')
    sizes = []
    async with cycle_graph.iter(Start(), state=Tally(target=700), persistence=persistence) as run:
        async for _ in run:
            sizes.append((await anyio.Path(f'{db}-wal').stat()).st_size)
    persistence.close()
    assert run.result is not None
    with sqlite3.connect(db) as conn:
        assert conn.execute('PRAGMA integrity_check').fetchall() == [('ok',)]
    return sizes


async def _log_sizes_over_many_short_runs(db: Path) -> list[int]:
    sizes = []
    for index in range(120):
        persistence = SqliteStatePersistence(db, f'run-{index}')
        await cycle_graph.run(Start(), state=Tally(target=3), persistence=persistence)
        persistence.close()
        sizes.append((await anyio.Path(f'{db}-wal').stat()).st_size)
    assert len(await SqliteStatePersistence.list_runs(db)) == 120
    return sizes


async def test_the_log_stays_short_however_long_a_run_goes_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Steps write back to back, so a background checkpoint alone never catches up with the log, and the log
    # would grow by every step's pages (about 2,000 steps x a few pages, and a growing state, here: over 20 MB).
    monkeypatch.setattr(sqlite_module, '_CHECKPOINT_EVERY', 32)
    monkeypatch.setattr(sqlite_module, '_LOG_LIMIT', _LOG_LIMIT)
    sizes = await _log_sizes_over_a_long_run(tmp_path / 'runs.db')

    assert len(sizes) == 2_101  # 2,100 nodes and the end
    assert max(sizes) < _LOG_BOUND, max(sizes)


@pytest.mark.usefixtures('stalled_checkpoints')
async def test_the_log_stays_short_when_background_checkpoints_never_get_their_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_module, '_CHECKPOINT_EVERY', 32)
    monkeypatch.setattr(sqlite_module, '_LOG_LIMIT', _LOG_LIMIT)
    sizes = await _log_sizes_over_a_long_run(tmp_path / 'runs.db')

    assert len(sizes) == 2_101
    assert max(sizes) < _LOG_BOUND, max(sizes)


async def test_the_log_stays_short_over_many_short_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Each run writes fewer times than a checkpoint is due after: writes are counted per file, not per run.
    monkeypatch.setattr(sqlite_module, '_CHECKPOINT_EVERY', 32)
    monkeypatch.setattr(sqlite_module, '_LOG_LIMIT', _LOG_LIMIT)
    sizes = await _log_sizes_over_many_short_runs(tmp_path / 'runs.db')

    assert max(sizes) < _LOG_BOUND, max(sizes)


@pytest.mark.usefixtures('stalled_checkpoints')
async def test_the_log_stays_short_over_many_short_runs_without_background_checkpoints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_module, '_CHECKPOINT_EVERY', 32)
    monkeypatch.setattr(sqlite_module, '_LOG_LIMIT', _LOG_LIMIT)
    sizes = await _log_sizes_over_many_short_runs(tmp_path / 'runs.db')

    assert max(sizes) < _LOG_BOUND, max(sizes)


def _open_files() -> list[str]:
    return sorted(os.readlink(f'/proc/self/fd/{fd}') for fd in os.listdir('/proc/self/fd') if _is_link(fd))


def _is_link(fd: str) -> bool:
    try:
        os.readlink(f'/proc/self/fd/{fd}')
    except OSError:  # the descriptor `listdir` itself used, closed since
        return False
    return True


@pytest.mark.skipif(not os.path.isdir('/proc/self/fd'), reason='lists open files through /proc')
@pytest.mark.parametrize('closed', [True, False], ids=['closed', 'dropped'])
async def test_a_store_leaves_no_file_open_once_closed_or_dropped(tmp_path: Path, closed: bool) -> None:
    # A store reads the log's size from a descriptor it keeps (see `_log_size`); it goes with the connection.
    db = tmp_path / 'runs.db'
    for run_id in ('first', 'second'):
        await cycle_graph.run(Start(), state=Tally(target=2), persistence=SqliteStatePersistence(db, run_id))
    gc.collect()
    # The process keeps one idle connection to the file it used last, and a descriptor to read its header through
    # from the second connection on (`_Checkpointer`).
    before = _open_files()

    persistence = SqliteStatePersistence(db, 'third')
    await cycle_graph.run(Start(), state=Tally(target=2), persistence=persistence)
    assert f'{db}-wal' in [name.removesuffix(' (deleted)') for name in _open_files()]
    if closed:
        persistence.close()
    del persistence
    gc.collect()

    assert _open_files() == before


async def test_an_error_listing_a_bad_store_names_the_store_only(tmp_path: Path) -> None:
    db = tmp_path / 'runs.db'
    db.write_bytes(b'SQLite format 3\x00' + b'\xff' * 200)

    with pytest.raises(PersistenceError) as info:
        await SqliteStatePersistence.list_runs(db)

    assert str(db) in info.value.message
    assert 'run' not in info.value.message.replace('runs.db', '')


async def test_a_listing_writes_nothing_while_another_process_holds_the_write_lock(tmp_path: Path) -> None:
    db = tmp_path / 'runs.db'
    await cycle_graph.run(Start(), state=Tally(target=1), persistence=SqliteStatePersistence(db, 'done'))
    writer = sqlite3.connect(db, isolation_level=None)
    writer.execute('BEGIN IMMEDIATE')  # a listing that wrote would wait for this, then fail
    try:
        runs = await SqliteStatePersistence.list_runs(db)
    finally:
        writer.execute('ROLLBACK')
        writer.close()
    assert [(r.run_id, r.status) for r in runs] == [('done', 'finished')]


async def test_a_read_that_fails_says_so_and_not_that_a_write_failed(tmp_path: Path) -> None:
    db = tmp_path / 'runs.db'
    async with SqliteStatePersistence(db, 'done') as persistence:
        await cycle_graph.run(Start(), state=Tally(target=1), persistence=persistence)
    # The log is cut short under this process's open connection: its index points past the end of the log.
    os.truncate(f'{db}-wal', 0)

    with pytest.raises(PersistenceError) as info:
        await SqliteStatePersistence.list_runs(db)

    assert info.value.message == (
        f'SQLite file {str(db)!r} could not be read: disk I/O error (tried 4 times). Nothing was changed. Check '
        f'the disk, and the log beside the file ({str(db) + "-wal"!r}).'
    )


async def test_a_stored_time_that_is_not_a_timestamp_is_a_persistence_error_naming_the_run(tmp_path: Path) -> None:
    db = tmp_path / 'runs.db'
    await cycle_graph.run(Start(), state=Tally(target=1), persistence=SqliteStatePersistence(db, 'garbled'))
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE edgewise_runs SET created = 'not a time'")
        conn.execute("UPDATE edgewise_snapshots SET start_ts = 'yesterday' WHERE start_ts IS NOT NULL")
    conn.close()
    persistence = SqliteStatePersistence(db, 'garbled')
    persistence.set_graph_types(cycle_graph)

    with pytest.raises(PersistenceError, match=r"Run 'garbled' has a creation time that is not a timestamp"):
        await SqliteStatePersistence.list_runs(db)
    with pytest.raises(PersistenceError, match=r"Run 'garbled' has a creation time that is not a timestamp"):
        await persistence.info()
    with pytest.raises(PersistenceError, match=r"Run 'garbled' has a start time that is not a timestamp: 'yesterday'"):
        await persistence.load_all()


def _writer(db: Path, name: str) -> subprocess.Popen[str]:
    args = [sys.executable, '-m', 'tests.graph.persistence._sqlite_writer', str(db), name]
    env = {**os.environ, 'PYTHONPATH': str(ROOT), 'LOGFIRE_IGNORE_NO_CONFIG': '1'}
    return subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wrote(writer: subprocess.Popen[str]) -> None:
    """Wait for the writer to finish a run (it is then writing its next one)."""
    assert writer.stdout is not None
    line = writer.stdout.readline()
    assert line == 'wrote\n', writer.stderr.read() if writer.stderr else line


def test_readers_keep_listing_runs_while_writers_are_killed(tmp_path: Path) -> None:
    db = tmp_path / 'runs.db'
    rng = random.Random(27)
    names = iter(f'w{i}' for i in range(100))
    writers = [_writer(db, next(names)) for _ in range(4)]
    errors: list[str] = []
    listings = 0
    try:
        for _ in range(20):
            victim = rng.randrange(len(writers))
            for writer in writers:
                _wrote(writer)
            for _ in range(5):  # while every writer is writing its next run
                try:
                    anyio.run(SqliteStatePersistence.list_runs, db)
                    listings += 1
                except PersistenceError as e:
                    errors.append(str(e))
            _wrote(writers[victim])  # killed in the middle of a run
            writers[victim].send_signal(signal.SIGKILL)
            writers[victim].communicate()
            for _ in range(5):  # right after the kill, and while a new writer starts
                try:
                    anyio.run(SqliteStatePersistence.list_runs, db)
                    listings += 1
                except PersistenceError as e:
                    errors.append(str(e))
            writers[victim] = _writer(db, next(names))
    finally:
        for writer in writers:
            writer.send_signal(signal.SIGKILL)
            writer.communicate()
    assert errors == []
    assert listings == 200
    with sqlite3.connect(db) as conn:
        assert conn.execute('PRAGMA integrity_check').fetchall() == [('ok',)]
    runs = anyio.run(SqliteStatePersistence.list_runs, db)
    assert {r.status for r in runs} <= {'finished', 'waiting'}  # the killed writers' runs wait to be resumed


def test_a_connection_released_by_a_finalizer_while_the_checkpointer_is_busy_does_not_deadlock(tmp_path: Path) -> None:
    # The garbage collector runs a dropped persistence's finalizer wherever it strikes, also in a thread that holds
    # the checkpointer's lock (inside `keep_open`, say): the finalizer must not wait for that lock.
    import sqlite3
    import threading

    from edgewise.graph.persistence import sqlite as sqlite_module

    checkpointer = sqlite_module._Checkpointer()
    path = str(tmp_path / 'runs.db')
    sqlite3.connect(path).close()
    checkpointer.opened(path)
    assert checkpointer.read_header(path) is not None  # keeps a descriptor open while the connection is counted
    conn = sqlite3.connect(path, check_same_thread=False)
    released = threading.Event()

    def finalizer() -> None:
        conn.close()
        checkpointer.closed_later(path)
        released.set()

    with checkpointer._lock:
        worker = threading.Thread(target=finalizer)
        worker.start()
        worker.join(timeout=60)  # a guard against a hang only: the call takes microseconds
        assert released.is_set()
    assert path in checkpointer._open  # counted at the next call that takes the lock ...
    checkpointer.opened('elsewhere')
    assert path not in checkpointer._open  # ... which closes the descriptor kept for it
    assert path not in checkpointer._descriptors


def test_release_leaves_the_count_to_the_next_caller(tmp_path: Path) -> None:
    import sqlite3

    from edgewise.graph.persistence import sqlite as sqlite_module

    path = str(tmp_path / 'runs.db')
    sqlite_module._checkpointer.opened(path)
    sqlite_module._release(sqlite3.connect(path), path)
    assert path in sqlite_module._checkpointer._open
    assert sqlite_module._checkpointer.read_header(path) is not None
    assert path not in sqlite_module._checkpointer._open

"""SQLite persistence: the embedded default for durable runs; one database file holds many runs.

Every snapshot is a row and every write is one small transaction, so a step costs the same at the
10th snapshot as at the 100,000th. The database runs in WAL mode with `synchronous=NORMAL`: a commit
survives the process being killed at any instant (the crash tests kill it thousands of times); after a
power loss the last few commits may be rolled back, never corrupted (pass `synchronous='FULL'` to fsync
every commit).

Why the calls run on the event loop rather than in a worker thread: each transaction touches a handful
of rows of a local file and takes microseconds, less than a hop to a thread and back would cost.
Waiting is never done blocking: the connection's busy timeout is zero, and when another process holds
the write lock the transaction is retried after an `anyio.sleep`, so other tasks keep running. The one
slow part of WAL mode, copying the log back into the database with its fsyncs (a checkpoint), runs mostly
in a background thread on a connection of its own; every `_CHECKPOINT_EVERY` writes, the writing connection
copies the last few frames itself (about a millisecond), so that the log restarts and stays a few megabytes.

That keeps the log short when the background thread runs in time; the bound does not depend on it. A write
that leaves the log file over `_LOG_LIMIT` bytes copies the whole log itself before it returns (waiting out
a background pass that holds the checkpoint lock), so that the next write restarts the log, and SQLite
truncates the file back to `_LOG_LIMIT` as it restarts (`journal_size_limit`). So the log file never holds
more than `_LOG_LIMIT` plus two writes, however busy the machine (only a reader of another process that
stays inside one transaction can hold the log back, as it can in SQLite itself).
"""

from __future__ import annotations as _annotations

import atexit
import collections
import contextlib
import os
import sqlite3
import threading
import weakref
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import partial
from os import PathLike, fspath
from pathlib import Path
from time import monotonic
from typing import Any, Literal, Self, TypeVar

import anyio

from ..exceptions import PersistenceError
from . import RunEndT, RunInfo, StateT
from ._pages import RunPage, RunQuery
from ._sql import (
    SCHEMA_VERSION,
    Dialect,
    OwnerRecordHold,
    Program,
    Query,
    Rows,
    SqlStatePersistence,
    drive,
    list_runs_program,
    new_run_id,
    run_page_program,
    setup_program,
)
from .raw import RawSnapshot

__all__ = ('SqliteStatePersistence',)

_T = TypeVar('_T')

_DIALECT = Dialect(
    name='SQLite',
    time_type='TEXT',
    float_type='REAL',
    # The owner record is the hold: SQLite has no session locks that outlive a transaction.
    hold=OwnerRecordHold(),
    time_param=datetime.isoformat,
    table_options='WITHOUT ROWID',
    migrations={
        2: (
            """CREATE TRIGGER edgewise_complete_previous AFTER INSERT ON edgewise_snapshots
            WHEN NEW.prev_duration IS NOT NULL
            BEGIN
                UPDATE edgewise_snapshots SET status = 'success', duration = NEW.prev_duration
                WHERE run_id = NEW.run_id AND seq = NEW.seq - 1;
            END""",
        ),
        3: ('DROP TRIGGER IF EXISTS edgewise_complete_previous',),
    },
)
_BUSY = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
_CHECKPOINT_EVERY = 512
"""Write transactions between two background checkpoints."""
_LOG_LIMIT = 16 * 1024 * 1024
"""Bytes of log file past which a writer copies the whole log itself, whatever the background thread is doing."""
_CHECKPOINT_PASSES = 16
_CHECKPOINT_TAIL = 8
"""A background checkpoint stops once a pass copies fewer frames than this (or after `_CHECKPOINT_PASSES`)."""


class _Checkpointer:
    """Checkpoints databases in background threads, at most one at a time per file; keeps files open.

    A `PASSIVE` checkpoint never blocks writers: steps go on appending to the log while it runs.

    The last connection to a file copies the whole log into the database as it closes, with its fsyncs:
    milliseconds at the end of every run that opens and closes its own connection. So the process keeps
    one idle connection to each of the files it used last (it holds no lock), and the connections of runs
    close at once; the kept ones close when the process exits, or when other files take their place.
    """

    def __init__(self, keep: int = 8) -> None:
        self._lock = threading.Lock()
        self._running: set[str] = set()
        self._writes: dict[str, int] = {}
        """Write transactions per file, counted across connections: runs of a few steps each add up."""
        self._catch_up: set[str] = set()
        """Files whose background checkpoint was requested, for a writer to copy the rest once it is done."""
        self._keep = keep
        self._kept: dict[str, sqlite3.Connection] = {}
        self._open: dict[str, int] = {}
        """Connections of this process open to each file (the kept ones and those of `SqliteStatePersistence`)."""
        self._descriptors: dict[str, int] = {}
        """Descriptors of files with connections open, for `read_header`."""
        self._closed: collections.deque[str] = collections.deque()
        """Files of connections closed by a finalizer, not counted yet (see `closed_later`)."""

    def opened(self, path: str, change: int = 1) -> None:
        """Count a connection to `path` opened (or, with `change=-1`, closed)."""
        with self._lock:
            self._settle()
            self._count(path, change)

    def closed_later(self, path: str) -> None:
        """Note a connection to `path` closed, to be counted by the next call that takes the lock.

        For finalizers: the garbage collector may run one in a thread that holds the lock (in the middle of
        `keep_open`, say), where taking it again would wait for ever. Appending to a deque takes no lock.
        """
        self._closed.append(path)

    def _settle(self) -> None:
        # Called with the lock held.
        while self._closed:
            self._count(self._closed.popleft(), -1)

    def _count(self, path: str, change: int) -> None:
        # Called with the lock held.
        count = self._open[path] = self._open.get(path, 0) + change
        if count:
            return
        del self._open[path]
        fd = self._descriptors.pop(path, None)
        if fd is not None:  # no connection left to lose its locks
            os.close(fd)

    def read_header(self, path: str) -> tuple[bytes, int] | None:
        """The first 100 bytes of the file at `path` and its length; `None` when there is no file.

        While this process has a connection open to the file, the descriptor read through stays open until the last
        one closes: closing any descriptor of a file drops every POSIX lock the process holds on it, SQLite's shared
        lock of its connections included. Another process would then take itself for the last connection to the
        database and delete the log under them, and their reads would find pages missing (`disk I/O error`).
        """
        with self._lock:
            self._settle()
            keep = path in self._open
            fd = self._descriptors.get(path)
            if fd is None:
                try:
                    fd = os.open(path, os.O_RDONLY)
                except FileNotFoundError:
                    return None
                if keep:
                    self._descriptors[path] = fd
            try:
                return os.pread(fd, 100, 0), os.fstat(fd).st_size
            finally:
                if not keep:
                    os.close(fd)

    def request(self, path: str) -> None:
        with self._lock:
            if path in self._running:
                return
            self._running.add(path)
        threading.Thread(target=self._checkpoint, args=(path,), name='edgewise-sqlite-checkpoint', daemon=True).start()

    def wrote(self, path: str) -> bool:
        """Count a write transaction on `path` (by any connection of this process); whether the writer should now
        copy the log's last frames itself (see `SqliteStatePersistence._wrote`)."""
        writes = self._writes[path] = self._writes.get(path, 0) + 1
        if writes % _CHECKPOINT_EVERY == 0:
            self.request(path)
            self._catch_up.add(path)
        elif path in self._catch_up and path not in self._running:
            self._catch_up.discard(path)
            return True
        return False

    def keep_open(self, path: str) -> None:
        """Hold an idle connection to `path` (a verified Edgewise store) until exit or until evicted."""
        with self._lock:
            self._settle()
            kept = self._kept.pop(path, None)
            evicted: tuple[str, sqlite3.Connection] | None = None
            if kept is None:
                kept = sqlite3.connect(path, check_same_thread=False)
                self._open[path] = self._open.get(path, 0) + 1
                # A connection only joins the log (and so counts as open to the others) once it has read.
                kept.execute('SELECT version FROM edgewise_schema_version').fetchall()
                if len(self._kept) >= self._keep:
                    oldest = next(iter(self._kept))
                    evicted = oldest, self._kept.pop(oldest)
            self._kept[path] = kept  # most recently used last
        if evicted is not None:
            _close(evicted[1])
            self.opened(evicted[0], -1)

    def close_all(self) -> None:  # pragma: no cover - runs at exit, after coverage stops measuring
        """Close every kept connection (at exit)."""
        with self._lock:
            kept, self._kept = list(self._kept.values()), {}
        for conn in kept:
            _close(conn)

    def _checkpoint(self, path: str) -> None:
        try:
            conn = sqlite3.connect(path, timeout=5)
            self.opened(path)
            try:
                # Pass after pass, each copying what was written during the one before, until a pass copies
                # little: the writer then copies the rest itself, quickly (see `_wrote`).
                done = 0
                for _ in range(_CHECKPOINT_PASSES):
                    _, _, copied = conn.execute('PRAGMA wal_checkpoint(PASSIVE)').fetchone()
                    if copied - done < _CHECKPOINT_TAIL:
                        break
                    done = copied
            finally:
                conn.close()
                self.opened(path, -1)
        except sqlite3.Error:  # pragma: no cover - the next checkpoint (or closing the file) catches up
            pass
        finally:
            with self._lock:
                self._running.discard(path)


def _release(conn: sqlite3.Connection, path: str) -> None:
    """Close a connection of `SqliteStatePersistence`, and count it closed (by the next call that takes the
    checkpointer's lock: this runs as a finalizer too, maybe in a thread that holds it)."""
    conn.close()
    _checkpointer.closed_later(path)


def _close(conn: sqlite3.Connection) -> None:
    # A checkpoint on close that fails leaves the log in place: the next connection recovers it.
    with contextlib.suppress(sqlite3.Error):
        conn.close()


_checkpointer = _Checkpointer()
atexit.register(_checkpointer.close_all)


class SqliteStatePersistence(SqlStatePersistence[StateT, RunEndT]):
    """Stores a run's snapshots in a SQLite database file (created on first use), beside other runs.

    Several processes on one machine can use the same file at once. Use it with `Graph.iter`,
    `Graph.run` or `Graph.iter_from_persistence` like any other persistence; the connection, opened on first
    use, is closed by `aclose()` or on leaving `async with`:

    ```python {test="skip"}
    async with SqliteStatePersistence('runs.db') as persistence:
        await graph.run(StartNode(), persistence=persistence)
    ```
    """

    dialect = _DIALECT
    _lease_claims = True  # the hold is a record in the file, which a full disk may not let us clear

    def __init__(
        self,
        path: str | PathLike[str],
        run_id: str | None = None,
        *,
        synchronous: Literal['NORMAL', 'FULL'] = 'NORMAL',
        busy_timeout: float = 30.0,
    ) -> None:
        """Open (lazily) the database at `path` for the run `run_id`.

        Args:
            path: The database file; created with its tables on first use.
            run_id: The run to hold; a new id is generated when not given (see `run_id`).
            synchronous: SQLite's `synchronous` setting: `'NORMAL'` survives process crashes, `'FULL'` also
                power loss, at the cost of an fsync per commit.
            busy_timeout: How long to keep retrying, in seconds, while other processes hold the write lock.
        """
        self.path = Path(path)
        """The database file."""
        self._run_id = run_id if run_id is not None else new_run_id()
        self.synchronous = synchronous
        """SQLite's `synchronous` setting for this connection."""
        self.busy_timeout = busy_timeout
        """How long writes wait for other processes' write locks, in seconds."""
        self._conn: sqlite3.Connection | None = None
        self._file = fspath(self.path)
        self._wal = f'{self._file}-wal'
        self._wal_fd: int | None = None
        self._wal_closer: weakref.finalize[Any, Any] | None = None
        self._release: Callable[[], Any] = lambda: None

    def __repr__(self) -> str:
        return f'{type(self).__name__}(path={fspath(self.path)!r}, run_id={self._run_id!r})'

    def _describe(self) -> str:
        return f'SQLite file {fspath(self.path)!r}'

    def _with_run_id(self, run_id: str) -> Self:
        return type(self)(self.path, run_id, synchronous=self.synchronous, busy_timeout=self.busy_timeout)

    @staticmethod
    async def list_runs(path: str | PathLike[str]) -> list[RunInfo]:
        """Every run stored in the database at `path`, oldest first (no file: no runs)."""
        if not await anyio.Path(path).exists():
            return []
        async with SqliteStatePersistence[Any, Any](path) as store:
            store._listing = True
            return await store._transact(lambda: list_runs_program(_DIALECT), write=False)

    @staticmethod
    async def list_runs_page(path: str | PathLike[str], query: RunQuery) -> RunPage:
        """A page of the top-level runs stored in the database at `path`, newest first (see `RunQuery`)."""
        if not await anyio.Path(path).exists():
            return RunPage(runs=[])
        async with SqliteStatePersistence[Any, Any](path) as store:
            store._listing = True
            return await store._transact(lambda: run_page_program(_DIALECT, query), write=False)

    @staticmethod
    async def last_raw_snapshots(path: str | PathLike[str], run_ids: Sequence[str]) -> dict[str, RawSnapshot]:
        """The last snapshot of each run of `run_ids` in the database at `path` that has one, read without the
        graph (as `load_raw` reads), by run id: one connection and a query per 500 runs."""
        if not run_ids or not await anyio.Path(path).exists():
            return {}
        async with SqliteStatePersistence[Any, Any](path) as store:
            store._listing = True
            return await store._transact(lambda: store.last_raw_program(run_ids), write=False)

    async def _op_info(self) -> RunInfo | None:
        if self._conn is None and not await anyio.Path(self.path).exists():
            return None  # reading creates no database
        return await super()._op_info()

    def close(self) -> None:
        """Close the database connection now, without awaiting; unlike `aclose()`, the object stays usable (the
        connection is opened again when needed)."""
        self._close_log()  # first: the last connection to close removes the log file
        if self._conn is not None:
            self._conn = None
            self._release()

    async def _op_close(self) -> None:
        self.close()

    # --- the driver ----------------------------------------------------------------------------------

    async def _transact(self, program: Callable[[], Program[_T]], *, write: bool = True) -> _T:
        return await self._retrying(lambda conn: _run(conn, program, write), write)

    async def _execute_alone(self, query: Query) -> int:
        # In autocommit mode a single statement is a transaction of its own, its trigger included.
        return await self._retrying(lambda conn: conn.execute(query.sql, query.params).rowcount, True)

    async def _retrying(self, call: Callable[[sqlite3.Connection], _T], write: bool) -> _T:
        """`call(connection)`, again after a pause while another process holds the write lock; a read that meets an
        I/O error is tried again on a new connection, `_READ_RETRIES` times."""
        deadline: float | None = None
        delay = 0.0005
        failed_reads = 0
        while True:
            try:
                conn = self._conn if self._conn is not None else self._connect()
                result = call(conn)
                if write:
                    await self._wrote(conn)
                return result
            except sqlite3.OperationalError as e:
                code = e.sqlite_errorcode & 0xFF
                if code == sqlite3.SQLITE_IOERR and not write and failed_reads < _READ_RETRIES:
                    failed_reads += 1
                    self.close()
                elif code not in _BUSY:
                    raise self._error(e, write) from None
            except sqlite3.Error as e:
                raise self._error(e, write) from None
            now = monotonic()
            if deadline is None:
                deadline = now + self.busy_timeout
            elif now > deadline:
                raise PersistenceError(
                    f'{self._describe()} stayed locked by another process for more than {self.busy_timeout} s; '
                    'nothing was written. Retry later, or raise `busy_timeout`.'
                )
            await anyio.sleep(delay)
            delay = min(delay * 2, 0.05)

    async def _wrote(self, conn: sqlite3.Connection) -> None:
        """Keep the log short: bulk copies in the background, the tail inline so that the log restarts, and the whole
        log inline once the log file passes `_LOG_LIMIT`.

        The log goes back to its start only at a write that finds every frame of it copied into the database.
        A background checkpoint never gets there while steps keep writing (each copies what was there when it
        started, while new frames arrive), so the log would grow for as long as writes go on. So once the
        background checkpoint is done, the next writer copies the few frames written meanwhile itself: about a
        millisecond every `_CHECKPOINT_EVERY` writes to the file, and the log stays some megabytes. If the
        background thread has not had its turn (a busy machine), the bound still holds: the writer that takes
        the file past `_LOG_LIMIT` copies the whole log. The write is committed already, so a checkpoint that
        fails is left to the next write.
        """
        try:
            if _checkpointer.wrote(self._file):
                conn.execute('PRAGMA wal_checkpoint(PASSIVE)').fetchall()
                return
            size = self._log_size()
            if size is None or size <= _LOG_LIMIT:
                return
            deadline = monotonic() + self.busy_timeout
            # A background pass holding the checkpoint lock makes ours report busy (1, -1, -1): wait our turn.
            while True:
                busy = conn.execute('PRAGMA wal_checkpoint(PASSIVE)').fetchone()[0]
                if not busy or monotonic() > deadline:
                    break
                await anyio.sleep(0.001)
        except sqlite3.Error:
            pass

    def _log_size(self) -> int | None:
        """The size of the log file (`None`: there is none), read from a descriptor kept open: an `fstat` costs a
        fraction of a `stat` of its path, twice per step. The descriptor is the file SQLite writes to: the log is
        not removed or replaced while a connection to the database (ours) is open, and is closed with it."""
        fd = self._wal_fd
        if fd is None:
            try:
                fd = os.open(self._wal, os.O_RDONLY)
            except FileNotFoundError:
                return None
            self._wal_fd = fd
            self._wal_closer = weakref.finalize(self, os.close, fd)  # also when the object is dropped unclosed
        return os.fstat(fd).st_size

    def _close_log(self) -> None:
        if self._wal_closer is not None:
            self._wal_closer()
        self._wal_fd = self._wal_closer = None

    def _connect(self) -> sqlite3.Connection:
        if self._closed:
            raise self._closed_error()
        self._check_length()
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=0)
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if tables and 'edgewise_schema_version' not in tables:
                raise PersistenceError(
                    f'{self._describe()} is a SQLite database of another application (tables: '
                    f'{", ".join(sorted(tables)[:5])}), not an Edgewise store; nothing was changed. '
                    'Give SqliteStatePersistence a file of its own.'
                )
            if conn.execute('PRAGMA journal_mode').fetchone()[0] != 'wal':
                conn.execute('PRAGMA journal_mode = WAL')
            conn.execute(f'PRAGMA synchronous = {self.synchronous}')
            conn.execute('PRAGMA wal_autocheckpoint = 0')  # checkpoints run in the background instead
            conn.execute(f'PRAGMA journal_size_limit = {_LOG_LIMIT}')
            # A store of the current schema is opened without a write transaction (a listing writes nothing).
            if not tables or conn.execute('SELECT version FROM edgewise_schema_version').fetchall() != [
                (SCHEMA_VERSION,)
            ]:
                _run(conn, lambda: setup_program(_DIALECT, self._describe()), True)
            _checkpointer.keep_open(self._file)
        except BaseException:
            conn.close()
            raise
        _checkpointer.opened(self._file)
        self._conn = conn
        self._release = weakref.finalize(self, _release, conn, self._file)  # also when dropped unclosed
        return conn

    def _check_length(self) -> None:
        """Refuse a file shorter than its own header says (cut short by a failed copy, a full disk, ...) before
        anything touches it: SQLite itself would notice only on reaching a missing page, after opening the file
        for writing (and switching it to WAL mode rewrites its header).

        Only a file without a log to go with it is judged alone: while a log holds pages, a checkpoint (of
        another connection) may be copying them into the file, whose header can then be ahead of its length.
        """
        shortfall = self._shortfall()
        if shortfall is not None:  # a second look, should a checkpoint have been finishing during the first
            shortfall = self._shortfall()
        if shortfall is None:
            return
        pages, page_size, length = shortfall
        raise PersistenceError(
            f'{self._describe()} is damaged: its header counts {pages} pages of {page_size} bytes, but the file '
            f'holds {length} bytes (cut short?). Nothing was changed; restore the file from a copy.'
        )

    def _shortfall(self) -> tuple[int, int, int] | None:
        """The file's page count, page size and length when it holds fewer bytes than its header says."""
        try:
            read = _checkpointer.read_header(self._file)
        except IsADirectoryError:
            raise PersistenceError(
                f'{self._describe()} is a directory, not a database file; give the path of a file (in it, say: '
                f'{os.path.join(self._file, "runs.db")!r}). Nothing was changed.'
            ) from None
        if read is None:
            return None  # a new store
        header, length = read
        if len(header) < 100 or not header.startswith(b'SQLite format 3\x00'):
            return None  # not a database at all: SQLite says so, without writing
        page_size = int.from_bytes(header[16:18], 'big')
        page_size = 65536 if page_size == 1 else page_size
        pages = int.from_bytes(header[28:32], 'big')
        # The page count is valid when the counter beside it matches the change counter (SQLite >= 3.7.0).
        if header[92:96] != header[24:28] or length >= pages * page_size:
            return None
        try:
            if os.stat(self._wal).st_size > 0:
                return None  # pages in the log: the file alone does not tell
        except FileNotFoundError:
            pass
        return pages, page_size, length

    def _error(self, error: sqlite3.Error, write: bool) -> PersistenceError:
        if getattr(error, 'sqlite_errorcode', 0) & 0xFF in _WRITE_FAILURES:
            if not write:
                return PersistenceError(
                    f'{self._describe()} could not be read{self._for_run()}: {error} (tried {_READ_RETRIES + 1} '
                    f'times). Nothing was changed. Check the disk, and the log beside the file ({self._wal!r}).'
                )
            return PersistenceError(
                f'{self._describe()} refused a write{self._for_run()}: {error}. That write was rolled back, and '
                'the run can be resumed (its unfinished step runs again) once the store can be written again.'
            )
        return PersistenceError(
            f'{self._describe()} cannot be used{self._for_run()}: {error} '
            '(not an Edgewise SQLite store, or damaged). Nothing was changed.'
        )


_READ_RETRIES = 3
"""How many times a read that meets an I/O error is tried again, on a new connection."""
_WRITE_FAILURES = frozenset({8, 10, 13})
"""SQLITE_READONLY, SQLITE_IOERR, SQLITE_FULL: the store is sound, but this write could not be made."""


def _run(conn: sqlite3.Connection, program: Callable[[], Program[_T]], write: bool) -> _T:
    """Run `program` in one transaction on `conn`: commit when it returns, roll back when it raises."""
    conn.execute('BEGIN IMMEDIATE' if write else 'BEGIN')
    try:
        result = drive(program(), partial(_query, conn))
    except BaseException:
        _rollback(conn)
        raise
    try:
        conn.execute('COMMIT')
    except BaseException:  # pragma: no cover - a commit failing after its statements succeeded (disk full, ...)
        _rollback(conn)
        raise
    return result


def _query(conn: sqlite3.Connection, query: Query) -> Rows:
    cursor = conn.execute(query.sql, query.params)
    return Rows(cursor.fetchall(), cursor.rowcount)


def _rollback(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        conn.execute('ROLLBACK')

"""What the SQL backends share: the schema, its migrations, and every transaction as a driver-neutral program.

A program is a generator that yields `Query` objects and receives each one's `Rows`; its return value is
the transaction's result. `drive` (blocking) and `drive_async` run a program's queries on a connection; a
backend only supplies a `Dialect` (types, migrations, and its `RunHold`: how a run is held by one process)
and opens and closes the transaction around one of the two drivers, committing when the program returns
and rolling back when it raises. So SQLite (stdlib `sqlite3`) and PostgreSQL (psycopg, async on asyncio,
blocking in a worker thread on trio) run the very same transactions.

Tables (all names prefixed `edgewise_`, so they can live in a database shared with other applications):

- `edgewise_schema_version(version)`: one row, the schema version; `MIGRATIONS` upgrades older ones.
- `edgewise_runs`: one row per run (graph name, creation time, the owner holding it); its status, last
  update and snapshot count are read from its last snapshot, so that a step writes one row only.
- `edgewise_snapshots`: one row per snapshot; `data` is the snapshot's JSON (as pydantic-graph writes it),
  written once; status, start time and duration live in their own columns, so a status change rewrites
  a few bytes of one row, whatever the size of the state or the length of the history.

A step of a run (store the next snapshot, mark the one that ran `'success'`) is one `INSERT` on its own,
without `BEGIN` and `COMMIT`, that writes one row and touches no other: the new row carries the duration of
the node that produced it (`prev_duration`), and that is what marks the row before it `'success'`. A row
whose successor (`seq + 1` of the same run) has a `prev_duration` reads as `'success'` with that duration,
whatever its own `status` column says (`'running'`, as it was stored). So both changes commit together or
not at all, and a step never rewrites the previous row (with its JSON: on SQLite that is a rewrite of its
pages, as costly as the insert itself). Version 2 of the schema marked the row with a trigger instead;
version 3 drops it, and rows it marked read the same either way.
"""

from __future__ import annotations as _annotations

import json
import os
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Generator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any, Self, TypeVar

import pydantic

from ..exceptions import GraphNodeStatusError, GraphRuntimeError, PersistenceError
from . import NodeError, NodeSnapshot, RunEndT, RunInfo, Snapshot, StateT, now_utc
from ._durable import (
    Completion,
    DurableStatePersistence,
    EndStatus,
    run_in_progress,
    run_status,
    snapshot_not_found,
)
from ._owner import Owner, owner_is_alive
from ._pages import RunPage, RunQuery
from .raw import RAW_SNAPSHOT_ADAPTER, RawSnapshot

__all__ = (
    'Query',
    'Rows',
    'Program',
    'drive',
    'drive_async',
    'RunHold',
    'OwnerRecordHold',
    'Dialect',
    'SqlStatePersistence',
    'SCHEMA_VERSION',
    'MIGRATIONS',
    'new_run_id',
    'to_datetime',
    'setup_program',
    'list_runs_program',
    'run_page_program',
)

_T = TypeVar('_T')


@dataclass(frozen=True, slots=True)
class Query:
    """One statement of a program, written with `?` placeholders."""

    sql: str
    params: tuple[Any, ...] = ()


@dataclass(slots=True)
class Rows:
    """What a statement returned: its rows and the number of rows it changed."""

    rows: list[tuple[Any, ...]]
    rowcount: int


Program = Generator[Query, Rows, _T]
"""A transaction: yields queries, receives their rows, returns its result."""


def drive(program: Program[_T], execute: Callable[[Query], Rows]) -> _T:
    """Run `program`'s queries one by one with `execute` (blocking), sending each one's rows back; its result."""
    try:
        query = next(program)
        while True:
            query = program.send(execute(query))
    except StopIteration as done:
        result: _T = done.value
        return result


async def drive_async(program: Program[_T], execute: Callable[[Query], Awaitable[Rows]]) -> _T:
    """`drive` with an async `execute`."""
    try:
        query = next(program)
        while True:
            query = program.send(await execute(query))
    except StopIteration as done:
        result: _T = done.value
        return result


class RunHold(ABC):
    """How a backend holds a run for one process at a time: a strategy of each SQL backend.

    Every backend also records the holder in `edgewise_runs.owner` (for error messages); the strategy decides
    what makes the hold binding and how a listing tells whether a run is held by a live process.
    """

    listing_prefix: str = ''
    """SQL put before a listing's `SELECT` (e.g. a `WITH` clause that `listing_holder` reads)."""
    listing_holder: str = 'r.owner'
    """A SQL expression of the listing (over `r`, the run's row, and `s`, its last snapshot) that `is_held` reads."""

    @abstractmethod
    def acquire(self, run_id: str) -> Program[None]:
        """The part of a claim's transaction that takes the run, or raises `RunInProgressError` naming its holder."""

    def release(self, run_id: str) -> Program[None]:
        """The part of a release's transaction that lets go of the run, after its owner record is cleared."""
        yield from ()

    @abstractmethod
    def is_held(self, holder: Any) -> bool:
        """Whether a listed run is held by a live process, from the value of `listing_holder`."""


class OwnerRecordHold(RunHold):
    """The owner record is the hold: taken when its process is gone (checked on this host; one on another host
    counts as alive), within the claim's transaction, so that two claims never both succeed."""

    def acquire(self, run_id: str) -> Program[None]:
        held = (yield Query('SELECT owner FROM edgewise_runs WHERE run_id = ?', (run_id,))).rows
        current = Owner.from_json(held[0][0])
        if current is not None and owner_is_alive(current):
            raise run_in_progress(run_id, current)

    def is_held(self, holder: Any) -> bool:
        owner = Owner.from_json(holder)
        return owner is not None and owner_is_alive(owner)


@dataclass(frozen=True, kw_only=True)
class Dialect:
    """What differs between SQL databases, as data."""

    name: str
    """Shown in messages: `'SQLite'`, `'PostgreSQL'`."""
    time_type: str
    float_type: str
    hold: RunHold
    """How a run is held by one process at a time."""
    time_param: Callable[[datetime], Any] = lambda t: t
    """How a time is passed to the driver (SQLite has no time type: ISO text)."""
    table_options: str = ''
    """Appended to `CREATE TABLE` of the snapshots table (e.g. SQLite's `WITHOUT ROWID`)."""
    serialize_setup: str | None = None
    """A statement that serializes concurrent schema setup, when `CREATE ... IF NOT EXISTS` does not."""
    top_run_id: str = "substr(r.run_id, 1, instr(r.run_id, '/') - 1)"
    """The SQL expression of the top-level run id (before the first `/`) of a child run `r`."""
    migrations: Mapping[int, tuple[str, ...]] = field(default_factory=dict, hash=False)
    """Statements of this database only, run after the shared `MIGRATIONS` of the same version (version 2: the
    trigger `edgewise_complete_previous`, which marked the row before an inserted one with a `prev_duration`,
    `seq - 1` of the same run, `'success'` with that duration; version 3: dropping it again)."""


def new_run_id() -> str:
    """A new unique run id."""
    return f'run-{os.urandom(10).hex()}'


def to_datetime(value: Any, run_id: str, column: str) -> datetime:
    """A stored timestamp as an aware datetime.

    Raises:
        PersistenceError: the stored value is not a timestamp (the store was changed outside Edgewise).
    """
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)
    try:
        return datetime.fromisoformat(str(value))
    except ValueError:
        raise PersistenceError(
            f'Run {run_id!r} has a {column} that is not a timestamp: {str(value)[:40]!r} (the store was changed '
            'outside Edgewise). Nothing was changed.'
        ) from None


# --- schema -------------------------------------------------------------------------------------------

SCHEMA_VERSION = 4
"""The schema version this code writes; older databases are migrated on first use."""

MIGRATIONS: dict[int, list[str]] = {
    1: [
        """CREATE TABLE edgewise_runs (
            run_id TEXT PRIMARY KEY,
            graph_name TEXT,
            created {time} NOT NULL,
            owner TEXT
        )""",
        """CREATE TABLE edgewise_snapshots (
            run_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            snapshot_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            status TEXT,
            start_ts {time},
            duration {float},
            written {time} NOT NULL,
            data TEXT NOT NULL,
            PRIMARY KEY (run_id, seq)
        ) {table_options}""",
    ],
    2: [
        'ALTER TABLE edgewise_snapshots ADD COLUMN prev_duration {float}',
        # then each dialect's trigger `edgewise_complete_previous` (`Dialect.migrations`)
    ],
    # The trigger of version 2 is dropped (`Dialect.migrations`): a row is `'success'` when its successor has a
    # `prev_duration` (see `_EFFECTIVE_STATUS`), so a step writes one row.
    3: [],
    # Pages of runs, newest first (`run_page_program`), read the runs in this order and stop at the page's end.
    4: ['CREATE INDEX edgewise_runs_created ON edgewise_runs (created, run_id)'],
}
"""Statements that bring a database from the previous version to each version."""


def setup_program(dialect: Dialect, where: str) -> Program[None]:
    """Create the tables, or migrate them to `SCHEMA_VERSION`; refuse a newer schema."""
    if dialect.serialize_setup:
        yield Query(dialect.serialize_setup)
    yield Query('CREATE TABLE IF NOT EXISTS edgewise_schema_version (version INTEGER NOT NULL)')
    found = (yield Query('SELECT version FROM edgewise_schema_version')).rows
    version = found[0][0] if found else 0
    if version > SCHEMA_VERSION:
        raise PersistenceError(
            f'{where} holds an Edgewise schema of version {version}, newer than this version of Edgewise '
            f'understands ({SCHEMA_VERSION}); upgrade edgewise-graph to use it. Nothing was changed.'
        )
    for target in range(version + 1, SCHEMA_VERSION + 1):
        for statement in MIGRATIONS[target]:
            yield Query(
                statement.format(time=dialect.time_type, float=dialect.float_type, table_options=dialect.table_options)
            )
        for statement in dialect.migrations.get(target, ()):
            yield Query(statement)
    if not found:
        yield Query('INSERT INTO edgewise_schema_version (version) VALUES (?)', (SCHEMA_VERSION,))
    elif version < SCHEMA_VERSION:
        yield Query('UPDATE edgewise_schema_version SET version = ?', (SCHEMA_VERSION,))


def list_runs_program(
    dialect: Dialect, run_id: str | None = None, *, under: str | None = None
) -> Program[list[RunInfo]]:
    """Every run of the store, oldest first; or only the run `run_id`; or the child runs of the run `under`."""
    where = 'ORDER BY r.created, r.run_id'
    params: tuple[Any, ...] = ()
    if run_id is not None:
        where, params = 'AND r.run_id = ?', (run_id,)
    elif under is not None:
        # `substr` compares exactly (SQLite's LIKE ignores case, and `_`/`%` in ids would need escaping).
        prefix = f'{under}/'
        where, params = f'AND substr(r.run_id, 1, ?) = ? {where}', (len(prefix), prefix)
    return (yield from _listing(dialect, where, params))


def _listing(dialect: Dialect, where: str, params: tuple[Any, ...]) -> Program[list[RunInfo]]:
    # The status is read from each run's last snapshot (one primary-key lookup), so that steps never
    # have to update the run's row just to change its status.
    hold = dialect.hold
    rows = (
        yield Query(
            hold.listing_prefix
            + 'SELECT r.run_id, r.graph_name, s.kind, s.status, r.created, s.written, s.start_ts, s.seq, '
            f'{hold.listing_holder} '
            'FROM edgewise_runs r LEFT JOIN edgewise_snapshots s ON s.run_id = r.run_id '
            'AND s.seq = (SELECT MAX(seq) FROM edgewise_snapshots m WHERE m.run_id = r.run_id) '
            # A run with no snapshot (being started, or left so by an earlier version) is not listed.
            'WHERE s.seq IS NOT NULL ' + where,
            params,
        )
    ).rows
    return [
        RunInfo(
            run_id=r[0],
            graph_name=r[1],
            status=run_status(r[2], r[3], r[3] in ('running', 'pending') and hold.is_held(r[8])),
            created=to_datetime(r[4], r[0], 'creation time'),
            updated=max(to_datetime(t, r[0], 'update time') for t in (r[4], r[5], r[6]) if t is not None),
            snapshot_count=r[7] or 0,
        )
        for r in rows
    ]


_STATUS_FILTERS: dict[str, str] = {
    'finished': "s.kind = 'end'",
    'failed': "s.status = 'error'",
    # Running and waiting differ by whether a live process holds the run: told apart after the query.
    'running': "s.kind = 'node' AND s.status IN ('running', 'pending')",
    'waiting': "s.kind = 'node' AND COALESCE(s.status, '') <> 'error'",
}


def run_page_program(dialect: Dialect, query: RunQuery) -> Program[RunPage]:
    """One page of the store's top-level runs, newest first, filtered by `query`, with the child runs of each.

    Filters and the page's bounds are in the SQL (a keyset on `(created, run_id)`), so a page costs about the
    same in a store of any size; only running and waiting runs, told apart by whether a live process holds
    them, are checked after the query (a few more rows are read when many of them do not match).
    """
    conditions = ["r.run_id NOT LIKE '%/%'"]
    params: list[Any] = []
    if query.status is not None:
        conditions.append(_STATUS_FILTERS[query.status])
    if query.graph_name is not None:
        conditions.append('r.graph_name = ?')
        params.append(query.graph_name)
    if query.search is not None:
        conditions.append('substr(r.run_id, 1, ?) = ?')
        params += [len(query.search), query.search]
    runs: list[RunInfo] = []
    after = query.after
    while True:
        bound, bound_params = '', []
        if after is not None:
            created = dialect.time_param(after[0])
            bound, bound_params = (
                'AND (r.created < ? OR (r.created = ? AND r.run_id < ?)) ',
                [created, created, after[1]],
            )
        fetched = yield from _listing(
            dialect,
            f'AND {" AND ".join(conditions)} {bound}ORDER BY r.created DESC, r.run_id DESC LIMIT ?',
            (*params, *bound_params, query.limit + 1),
        )
        runs += [run for run in fetched[: query.limit] if query.status is None or run.status == query.status]
        more = len(fetched) > query.limit
        if len(runs) >= query.limit or not more:
            break
        last = fetched[query.limit - 1]
        after = (last.created, last.run_id)
    more = more or len(runs) > query.limit
    runs = runs[: query.limit]
    children: dict[str, list[RunInfo]] = {}
    if runs:
        marks = ', '.join('?' for _ in runs)
        found = yield from _listing(
            dialect,
            f"AND r.run_id LIKE '%/%' AND {dialect.top_run_id} IN ({marks}) ORDER BY r.created, r.run_id",
            tuple(run.run_id for run in runs),
        )
        for child in found:
            children.setdefault(child.run_id.partition('/')[0], []).append(child)
    return RunPage(runs=runs, children=children, next_after=(runs[-1].created, runs[-1].run_id) if more else None)


def _time(convert: Callable[[datetime], Any], value: datetime | None) -> Any:
    return None if value is None else convert(value)


def _status(snapshot: Snapshot[Any, Any], start: datetime | None) -> str | None:
    if not isinstance(snapshot, NodeSnapshot):
        return None
    return 'created' if start is None else 'running'


_SUCCESSOR = 'LEFT JOIN edgewise_snapshots n ON n.run_id = s.run_id AND n.seq = s.seq + 1'
"""Joins each row `s` with its successor `n`, whose `prev_duration` marks `s` `'success'` (see the module docs)."""
_EFFECTIVE_STATUS = "CASE WHEN n.prev_duration IS NULL THEN s.status ELSE 'success' END"
"""The status of the row `s` joined with its successor `n` (`_SUCCESSOR`)."""
_SNAPSHOT_COLUMNS = (
    f's.snapshot_id, s.kind, {_EFFECTIVE_STATUS}, s.start_ts, COALESCE(n.prev_duration, s.duration), s.data, s.seq'
)
_SELECT_SNAPSHOT = f'SELECT {_SNAPSHOT_COLUMNS} FROM edgewise_snapshots s {_SUCCESSOR}'
_SELECT_LAST_SNAPSHOTS = (
    f'SELECT {_SNAPSHOT_COLUMNS}, s.run_id FROM edgewise_snapshots s {_SUCCESSOR} WHERE s.run_id IN ({{}}) '
    'AND s.seq = (SELECT MAX(seq) FROM edgewise_snapshots m WHERE m.run_id = s.run_id)'
)
_IDS_PER_QUERY = 500
"""Run ids per query of `last_raw_program` (SQLite takes at most 999 parameters before 3.32)."""
_APPEND = (
    'INSERT INTO edgewise_snapshots (run_id, seq, snapshot_id, kind, status, start_ts, written, data, prev_duration) '
    'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, seq) DO NOTHING'
)


class SqlStatePersistence(DurableStatePersistence[StateT, RunEndT]):
    """The contract on a SQL database; subclasses give the dialect and run programs in transactions."""

    dialect: Dialect
    _run_id: str
    _listing: bool = False
    """Set by `list_runs`: this object reads the whole store, not a run, so its errors name the store only."""
    _run_row_written: bool = False
    _known_seq: tuple[str, int] | None = None
    """The id and position of the snapshot this object last stored or handed out: the one that runs next."""
    _last_time: tuple[datetime, Any] | None = None
    """The last time this object encoded for the driver, and its encoding: a step's start is written again
    when it completes."""

    def _for_run(self) -> str:
        """`' for run <id>'` in error messages, or nothing when this object lists the store."""
        return '' if self._listing else f' for run {self._run_id!r}'

    @property
    def run_id(self) -> str:
        return self._run_id

    @abstractmethod
    async def _transact(self, program: Callable[[], Program[_T]], *, write: bool = True) -> _T:
        """Run `program` in one transaction (again from the start if the database asks to retry)."""

    @abstractmethod
    async def _execute_alone(self, query: Query) -> int:
        """Run one statement as a transaction of its own (retried while the database asks to); its row count."""

    @abstractmethod
    def _with_run_id(self, run_id: str) -> Self:
        """A persistence of the same store for another run."""

    def _related(self, run_id: str) -> Self:
        return self._with_run_id(run_id)

    # --- programs ------------------------------------------------------------------------------------

    def _ensure_run(self, now: datetime) -> Query:
        return Query(
            'INSERT INTO edgewise_runs (run_id, graph_name, created) VALUES (?, ?, ?) ON CONFLICT (run_id) DO NOTHING',
            (self._run_id, self.graph_name, self.dialect.time_param(now)),
        )

    def _insert_program(
        self,
        snapshot: Snapshot[StateT, RunEndT],
        data: str,
        complete: Completion | None,
        if_new: bool,
        start: datetime | None,
    ) -> Program[int | None]:
        run_id = self._run_id
        # A snapshot stored `'running'` starts at the instant it is written: one time, encoded once.
        now = start if start is not None else now_utc()
        t = self.dialect.time_param
        written = t(now)
        if not self._run_row_written:
            yield self._ensure_run(now)
        if if_new:
            found = yield Query(
                'SELECT 1 FROM edgewise_snapshots WHERE run_id = ? AND snapshot_id = ?', (run_id, snapshot.id)
            )
            if found.rows:
                return None
        start_text = None if start is None else written
        params = (snapshot.id, snapshot.kind, _status(snapshot, start), start_text, written, data)
        known = self._known_seq
        seq: int | None = None
        if known is not None:
            # Positions are dense (1, 2, 3, ... per run, never deleted), so the slot after a known snapshot is
            # free only when that snapshot is the run's last: then it is the next position, found without a
            # lookup. Taken (another writer went on, or a later snapshot exists), the lookup below decides.
            taken = yield Query(_APPEND, (run_id, known[1] + 1, *params, None))
            if taken.rowcount == 1:
                seq = known[1] + 1
        if seq is None:
            # The position comes from the run's last row (a primary-key lookup): the run's own row is not
            # written on every step, and no index but the primary key is: a step writes one page.
            inserted = yield Query(
                'INSERT INTO edgewise_snapshots (run_id, seq, snapshot_id, kind, status, start_ts, written, data) '
                'SELECT ?, COALESCE(MAX(seq), 0) + 1, ?, ?, ?, ?, ?, ? FROM edgewise_snapshots WHERE run_id = ? '
                'RETURNING seq',
                (run_id, *params, run_id),
            )
            seq = inserted.rows[0][0]
        last = self._last_time
        self._last_time = (now, written)
        if complete is not None:
            started = last[1] if last is not None and last[0] is complete.start_ts else t(complete.start_ts)
            done = (started, complete.duration, run_id)
            if known is not None and known[0] == complete.snapshot_id:
                yield Query(
                    "UPDATE edgewise_snapshots SET status = 'success', start_ts = ?, duration = ? "
                    'WHERE run_id = ? AND seq = ?',
                    (*done, known[1]),
                )
            else:
                yield Query(
                    "UPDATE edgewise_snapshots SET status = 'success', start_ts = ?, duration = ? "
                    'WHERE run_id = ? AND snapshot_id = ?',
                    (*done, complete.snapshot_id),
                )
        return seq

    def _start_program(self, snapshot_id: str, now: datetime) -> Program[None]:
        run_id = self._run_id
        start_ts = self.dialect.time_param(now)
        started = yield Query(
            "UPDATE edgewise_snapshots SET status = 'running', start_ts = ? "
            "WHERE run_id = ? AND snapshot_id = ? AND status IN ('created', 'pending')",
            (start_ts, run_id, snapshot_id),
        )
        if started.rowcount == 0:
            found = (
                yield Query(
                    f'SELECT s.kind, {_EFFECTIVE_STATUS} FROM edgewise_snapshots s {_SUCCESSOR} '
                    'WHERE s.run_id = ? AND s.snapshot_id = ?',
                    (run_id, snapshot_id),
                )
            ).rows
            if not found:
                raise snapshot_not_found(snapshot_id)
            if found[0][0] != 'node':
                raise GraphRuntimeError(
                    f'Snapshot {snapshot_id!r} is the end of the run; only node snapshots can be run.'
                )
            raise GraphNodeStatusError(found[0][1])
        self._last_time = (now, start_ts)

    def _finish_program(
        self,
        snapshot_id: str,
        status: EndStatus,
        start_ts: datetime | None,
        duration: float,
        error: NodeError | None = None,
    ) -> Program[None]:
        yield Query(
            'UPDATE edgewise_snapshots SET status = ?, start_ts = ?, duration = ? WHERE run_id = ? AND snapshot_id = ?',
            (status, _time(self.dialect.time_param, start_ts), duration, self._run_id, snapshot_id),
        )
        if error is not None:
            # The error goes into the snapshot's JSON (rewritten once, as the run fails): readers of any version
            # parse it there, and stores without it stay as they are.
            key = (self._run_id, snapshot_id)
            rows = (yield Query('SELECT data FROM edgewise_snapshots WHERE run_id = ? AND snapshot_id = ?', key)).rows
            if rows:  # pragma: no branch - the row whose status was just written
                data = json.loads(rows[0][0])
                data['error'] = asdict(error)
                yield Query(
                    'UPDATE edgewise_snapshots SET data = ? WHERE run_id = ? AND snapshot_id = ?',
                    (json.dumps(data), *key),
                )

    def _decode_row(
        self, row: tuple[Any, ...], adapter: pydantic.TypeAdapter[Snapshot[StateT, RunEndT]] | None = None
    ) -> Snapshot[StateT, RunEndT]:
        snapshot_id, _kind, status, start_ts, duration, data = row[:6]
        snapshot = self._decode(data, snapshot_id, adapter)
        if isinstance(snapshot, NodeSnapshot):
            snapshot.status = status
            snapshot.start_ts = None if start_ts is None else to_datetime(start_ts, self._run_id, 'start time')
            snapshot.duration = duration
        return snapshot

    def last_raw_program(self, run_ids: Sequence[str]) -> Program[dict[str, RawSnapshot]]:
        """The last snapshot of each run of `run_ids` that has one, as `load_raw` reads it, by run id."""
        found: dict[str, Any] = {}
        for start in range(0, len(run_ids), _IDS_PER_QUERY):
            ids = tuple(run_ids[start : start + _IDS_PER_QUERY])
            rows = (yield Query(_SELECT_LAST_SNAPSHOTS.format(', '.join('?' * len(ids))), ids)).rows
            adapter: Any = RAW_SNAPSHOT_ADAPTER  # (`load_raw`'s: the snapshots as data, not as the graph's types)
            found.update((row[7], self._decode_row(row, adapter)) for row in rows)
        return found

    def _load_next_program(self) -> Program[tuple[NodeSnapshot[StateT, RunEndT], int] | None]:
        run_id = self._run_id
        rows = (
            yield Query(
                f"{_SELECT_SNAPSHOT} WHERE s.run_id = ? AND s.status = 'created' AND n.prev_duration IS NULL "
                'ORDER BY s.seq LIMIT 1',
                (run_id,),
            )
        ).rows
        if not rows:
            return None
        snapshot = self._decode_row(rows[0])  # a snapshot that cannot be read is not marked: nothing changes
        assert isinstance(snapshot, NodeSnapshot)
        seq: int = rows[0][6]
        yield Query("UPDATE edgewise_snapshots SET status = 'pending' WHERE run_id = ? AND seq = ?", (run_id, seq))
        snapshot.status = 'pending'
        return snapshot, seq

    def _load_all_program(
        self, adapter: pydantic.TypeAdapter[Snapshot[StateT, RunEndT]] | None
    ) -> Program[list[Snapshot[StateT, RunEndT]]]:
        rows = (yield Query(f'{_SELECT_SNAPSHOT} WHERE s.run_id = ? ORDER BY s.seq', (self._run_id,))).rows
        return [self._decode_row(row, adapter) for row in rows]

    def _claim_program(self, owner: Owner, keep: str | None) -> Program[None]:
        run_id = self._run_id
        now = now_utc()
        yield self._ensure_run(now)
        yield from self.dialect.hold.acquire(run_id)
        yield Query(
            'UPDATE edgewise_runs SET owner = ?, graph_name = COALESCE(?, graph_name) WHERE run_id = ?',
            (owner.to_json(), self.graph_name, run_id),
        )
        # Whoever left the last step pending or running no longer holds the run: it runs again (unless it is the
        # node `keep` this object's `load_next` handed out, to be replaced by a node carrying user input).
        yield Query(
            "UPDATE edgewise_snapshots SET status = 'created' WHERE run_id = ? AND status IN ('pending', 'running') "
            'AND seq = (SELECT MAX(seq) FROM edgewise_snapshots WHERE run_id = ?) AND snapshot_id <> ?',
            (run_id, run_id, keep or ''),
        )

    def _release_program(self, owner: Owner, unstarted: str | None) -> Program[None]:
        run_id = self._run_id
        if unstarted is not None:
            yield Query(
                "UPDATE edgewise_snapshots SET status = 'created', start_ts = NULL "
                "WHERE run_id = ? AND snapshot_id = ? AND status IN ('pending', 'running')",
                (run_id, unstarted),
            )
        yield Query('UPDATE edgewise_runs SET owner = NULL WHERE run_id = ? AND owner = ?', (run_id, owner.to_json()))
        # A claim that stored nothing (a resume of an unknown run, a run left before its first step) leaves no
        # run behind.
        yield Query(
            'DELETE FROM edgewise_runs WHERE run_id = ? AND NOT EXISTS '
            '(SELECT 1 FROM edgewise_snapshots WHERE run_id = ?)',
            (run_id, run_id),
        )
        yield from self.dialect.hold.release(run_id)

    def _delete_program(self) -> Program[bool]:
        deleted = (yield Query('DELETE FROM edgewise_snapshots WHERE run_id = ?', (self._run_id,))).rowcount
        return deleted > 0

    def _fork_program(self, snapshot_id: str, new_run_id: str) -> Program[None]:
        run_id = self._run_id
        now = now_utc()
        found = (
            yield Query(
                'SELECT seq, kind FROM edgewise_snapshots WHERE run_id = ? AND snapshot_id = ?', (run_id, snapshot_id)
            )
        ).rows
        if not found:
            raise snapshot_not_found(snapshot_id)
        seq, kind = found[0]
        exists = (yield Query('SELECT 1 FROM edgewise_runs WHERE run_id = ?', (new_run_id,))).rows
        if exists:
            raise PersistenceError(
                f'Cannot fork run {run_id!r} into {new_run_id!r}: a run with that id already exists in '
                f'{self._describe()}. Choose another run id, or leave it out to get a new one.'
            )
        yield Query(
            'INSERT INTO edgewise_runs (run_id, graph_name, created) SELECT ?, graph_name, ? FROM edgewise_runs '
            'WHERE run_id = ?',
            (new_run_id, self.dialect.time_param(now), run_id),
        )
        yield Query(
            'INSERT INTO edgewise_snapshots '
            '(run_id, seq, snapshot_id, kind, status, start_ts, duration, written, data, prev_duration) '
            'SELECT ?, seq, snapshot_id, kind, status, start_ts, duration, written, data, prev_duration '
            'FROM edgewise_snapshots '
            'WHERE run_id = ? AND seq <= ?',
            (new_run_id, run_id, seq),
        )
        if kind == 'node':
            yield Query(
                "UPDATE edgewise_snapshots SET status = 'created', start_ts = NULL, duration = NULL "
                'WHERE run_id = ? AND seq = ?',
                (new_run_id, seq),
            )

    # --- operations ----------------------------------------------------------------------------------

    async def _op_insert(
        self, snapshot: Snapshot[StateT, RunEndT], complete: Completion | None, if_new: bool, start: datetime | None
    ) -> bool:
        data = self._dump(snapshot).decode()
        known = self._known_seq
        if known is not None and not if_new and self._run_row_written:
            last = self._last_time
            if complete is None or (
                complete.snapshot_id == known[0] and last is not None and last[0] is complete.start_ts
            ):
                # The step of a run: the slot after the snapshot that ran, which that snapshot's own row
                # already holds the start time of. One statement; its `prev_duration` marks the predecessor.
                now = start if start is not None else now_utc()
                written = self.dialect.time_param(now)
                next_seq = known[1] + 1
                appended = await self._execute_alone(
                    Query(
                        _APPEND,
                        (
                            self._run_id,
                            next_seq,
                            snapshot.id,
                            snapshot.kind,
                            _status(snapshot, start),
                            None if start is None else written,
                            written,
                            data,
                            None if complete is None else complete.duration,
                        ),
                    )
                )
                if appended == 1:
                    self._last_time = (now, written)
                    self._known_seq = (snapshot.id, next_seq)
                    return True
                # Taken: another writer went on, or a later snapshot exists. The position is no longer known:
                # the transaction below finds it (without trying that slot again).
                self._known_seq = None
        seq = await self._transact(lambda: self._insert_program(snapshot, data, complete, if_new, start))
        self._run_row_written = True
        if seq is None:
            return False
        self._known_seq = (snapshot.id, seq)
        return True

    async def _op_checkpoint(self, snapshot: NodeSnapshot[StateT, RunEndT]) -> None:
        data = self._dump(snapshot).decode()
        changed = await self._execute_alone(
            Query(
                'UPDATE edgewise_snapshots SET data = ? WHERE run_id = ? AND snapshot_id = ? '
                "AND kind = 'node' AND status IN ('created', 'pending', 'running') AND NOT EXISTS "
                '(SELECT 1 FROM edgewise_snapshots n WHERE n.run_id = edgewise_snapshots.run_id '
                'AND n.seq = edgewise_snapshots.seq + 1 AND n.prev_duration IS NOT NULL)',
                (data, self._run_id, snapshot.id),
            )
        )
        if changed == 0:
            raise self.checkpoint_missing(snapshot.id)

    async def _op_start(self, snapshot_id: str, start_ts: datetime) -> None:
        await self._transact(lambda: self._start_program(snapshot_id, start_ts))

    async def _op_finish(
        self, snapshot_id: str, status: EndStatus, start_ts: datetime | None, duration: float, error: NodeError | None
    ) -> None:
        await self._transact(lambda: self._finish_program(snapshot_id, status, start_ts, duration, error))

    async def _op_load_next(self) -> NodeSnapshot[StateT, RunEndT] | None:
        found = await self._transact(self._load_next_program)
        if found is None:
            return None
        self._known_seq = (found[0].id, found[1])
        return found[0]

    async def _op_load_all(
        self, adapter: pydantic.TypeAdapter[Snapshot[StateT, RunEndT]] | None
    ) -> list[Snapshot[StateT, RunEndT]]:
        return await self._transact(lambda: self._load_all_program(adapter), write=False)

    async def _op_load_range(
        self, adapter: pydantic.TypeAdapter[Snapshot[StateT, RunEndT]], offset: int, count: int
    ) -> list[Snapshot[StateT, RunEndT]]:
        def program() -> Program[list[Snapshot[StateT, RunEndT]]]:
            query = f'{_SELECT_SNAPSHOT} WHERE s.run_id = ? ORDER BY s.seq LIMIT ? OFFSET ?'
            rows = (yield Query(query, (self._run_id, count, offset))).rows
            return [self._decode_row(row, adapter) for row in rows]

        return await self._transact(program, write=False)

    async def _op_info(self) -> RunInfo | None:
        found = await self._transact(lambda: list_runs_program(self.dialect, self._run_id), write=False)
        return found[0] if found else None

    async def _op_child_runs(self) -> list[RunInfo]:
        return await self._transact(lambda: list_runs_program(self.dialect, under=self._run_id), write=False)

    async def _op_claim(self, owner: Owner, keep: str | None) -> None:
        await self._transact(lambda: self._claim_program(owner, keep))
        self._run_row_written = True

    async def _op_release(self, owner: Owner, unstarted: str | None) -> None:
        await self._transact(lambda: self._release_program(owner, unstarted))

    async def _op_delete(self) -> bool:
        # The run's row goes when the claim is released, with no snapshot left.
        return await self._transact(self._delete_program)

    async def _op_fork(self, snapshot_id: str, run_id: str | None) -> Self:
        fork_id = run_id or new_run_id()
        await self._transact(lambda: self._fork_program(snapshot_id, fork_id))
        forked = self._with_run_id(fork_id)
        forked._run_row_written = True
        return forked

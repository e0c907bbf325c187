"""PostgreSQL persistence (extra `edgewise-graph[postgres]`, psycopg 3): runs shared by processes on many machines.

The same tables and transactions as `SqliteStatePersistence` (see `_sql`), with one difference in how a
run is held (`_SessionLockHold`): by a session-level advisory lock, which the server releases when the holding
session ends (its process died, its machine went away), so a crashed run can be resumed from any machine.

psycopg's async connections work on asyncio only; under trio the same transactions run on a blocking
psycopg connection in a worker thread.
"""

from __future__ import annotations as _annotations

from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, Self, TypeVar

import anyio.to_thread

from ..exceptions import PersistenceError
from . import RunEndT, RunInfo, StateT
from ._durable import run_in_progress
from ._owner import Owner
from ._pages import RunPage, RunQuery
from ._redact import mask_dsn as mask_dsn  # where `store` and the DBOS modules import it from
from ._sql import (
    Dialect,
    Program,
    Query,
    Rows,
    RunHold,
    SqlStatePersistence,
    drive,
    drive_async,
    list_runs_program,
    new_run_id,
    run_page_program,
    setup_program,
)
from .raw import RawSnapshot

if TYPE_CHECKING:
    import psycopg

__all__ = ('PostgresStatePersistence',)

_T = TypeVar('_T')
_A = TypeVar('_A')


# A run's lock key: advisory locks are database-wide, so the key includes the schema the tables live in (two
# stores in two schemas of one database may have runs with the same id).
def _run_lock_key(run_id: str) -> str:
    """The SQL expression of the advisory lock key of the run whose id is the SQL expression `run_id`."""
    return f"hashtextextended(current_schema() || '/' || {run_id}, 0)"


_RUN_LOCK_KEY = _run_lock_key('?')


class _SessionLockHold(RunHold):
    """A run is held by a session-level advisory lock on its key: the server lets go of it when the holding
    session ends, whichever machine it was on, so a gone holder never needs to be checked for."""

    # The advisory locks held in this database, read once per listing (a bigint lock shows in `pg_locks` as two
    # 32-bit halves), and whether the run `r` is among them: checked only for runs whose last node is running.
    listing_prefix = (
        'WITH held AS MATERIALIZED (SELECT (l.classid::bigint << 32) | l.objid::bigint AS key FROM pg_locks l '
        "WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 "
        'AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())) '
    )
    listing_holder = (
        "CASE WHEN s.status IN ('running', 'pending') "
        f'THEN EXISTS (SELECT 1 FROM held h WHERE h.key = {_run_lock_key("r.run_id")}) ELSE FALSE END'
    )

    def acquire(self, run_id: str) -> Program[None]:
        got = (yield Query(f'SELECT pg_try_advisory_lock({_RUN_LOCK_KEY})', (run_id,))).rows[0][0]
        if not got:
            held = (yield Query('SELECT owner FROM edgewise_runs WHERE run_id = ?', (run_id,))).rows
            raise run_in_progress(run_id, Owner.from_json(held[0][0]))

    def release(self, run_id: str) -> Program[None]:
        yield Query(f'SELECT pg_advisory_unlock({_RUN_LOCK_KEY})', (run_id,))

    def is_held(self, holder: Any) -> bool:
        return bool(holder)


_DIALECT = Dialect(
    name='PostgreSQL',
    time_type='TIMESTAMPTZ',
    float_type='DOUBLE PRECISION',
    hold=_SessionLockHold(),
    top_run_id="split_part(r.run_id, '/', 1)",
    # Concurrent `CREATE TABLE IF NOT EXISTS` can collide in PostgreSQL's catalog: take turns.
    serialize_setup="SELECT pg_advisory_xact_lock(hashtext('edgewise schema setup'))",
    migrations={
        2: (
            # `search_path` pinned to the schema the tables are created in, so that the function finds those.
            """CREATE FUNCTION edgewise_complete_previous() RETURNS trigger LANGUAGE plpgsql
            SET search_path FROM CURRENT AS $$
            BEGIN
                UPDATE edgewise_snapshots SET status = 'success', duration = NEW.prev_duration
                WHERE run_id = NEW.run_id AND seq = NEW.seq - 1;
                RETURN NULL;
            END
            $$""",
            """CREATE TRIGGER edgewise_complete_previous AFTER INSERT ON edgewise_snapshots
            FOR EACH ROW WHEN (NEW.prev_duration IS NOT NULL) EXECUTE FUNCTION edgewise_complete_previous()""",
        ),
        3: (
            'DROP TRIGGER IF EXISTS edgewise_complete_previous ON edgewise_snapshots',
            'DROP FUNCTION IF EXISTS edgewise_complete_previous()',
        ),
    },
)
_placeholders: dict[str, str] = {}


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError as e:  # pragma: no cover - psycopg is installed for the tests
        raise ImportError(
            'PostgresStatePersistence needs psycopg 3: install the `postgres` extra, '
            "e.g. `pip install 'edgewise-graph[postgres]'`."
        ) from e
    return psycopg


def _sql(query_sql: str) -> str:
    converted = _placeholders.get(query_sql)
    if converted is None:
        converted = _placeholders[query_sql] = query_sql.replace('%', '%%').replace('?', '%s')
    return converted


class PostgresStatePersistence(SqlStatePersistence[StateT, RunEndT]):
    """Stores a run's snapshots in PostgreSQL, beside other runs; tables are created on first use.

    One object holds one database connection, opened on first use; close it with `aclose()`, or use the
    object as an async context manager:

    ```python {test="skip"}
    async with PostgresStatePersistence('postgresql://app@db/runs', run_id='order-42') as persistence:
        await graph.run(StartNode(), persistence=persistence)
    ```
    """

    dialect = _DIALECT

    def __init__(self, dsn: str, run_id: str | None = None) -> None:
        """Use the database at `dsn` for the run `run_id`.

        Args:
            dsn: A libpq connection string or URL, e.g. `postgresql://user@host/db`; never shown with its password.
            run_id: The run to hold; a new id is generated when not given (see `run_id`).
        """
        self._dsn = dsn
        self._run_id = run_id if run_id is not None else new_run_id()
        self._conn: Any = None
        self._blocking = False
        self._hold_lost = False
        """The connection holding the run's lock was lost: nothing more is written until the claim ends."""

    @property
    def dsn(self) -> str:
        """The connection string, with any password masked."""
        return mask_dsn(self._dsn)

    def __repr__(self) -> str:
        return f'{type(self).__name__}(dsn={self.dsn!r}, run_id={self._run_id!r})'

    def _describe(self) -> str:
        return f'PostgreSQL database {self.dsn!r}'

    def _with_run_id(self, run_id: str) -> Self:
        return type(self)(self._dsn, run_id)

    async def setup(self) -> None:
        """Create the tables (or migrate them) now rather than on first use."""
        await self._connection()

    @staticmethod
    async def list_runs(dsn: str) -> list[RunInfo]:
        """Every run stored in the database at `dsn`, oldest first."""
        async with PostgresStatePersistence[Any, Any](dsn) as store:
            store._listing = True
            return await store._transact(lambda: list_runs_program(_DIALECT), write=False)

    @staticmethod
    async def list_runs_page(dsn: str, query: RunQuery) -> RunPage:
        """A page of the top-level runs stored in the database at `dsn`, newest first (see `RunQuery`)."""
        async with PostgresStatePersistence[Any, Any](dsn) as store:
            store._listing = True
            return await store._transact(lambda: run_page_program(_DIALECT, query), write=False)

    @staticmethod
    async def last_raw_snapshots(dsn: str, run_ids: Sequence[str]) -> dict[str, RawSnapshot]:
        """The last snapshot of each run of `run_ids` in the database at `dsn` that has one, read without the graph
        (as `load_raw` reads), by run id: one connection and a query per 500 runs."""
        if not run_ids:
            return {}
        async with PostgresStatePersistence[Any, Any](dsn) as store:
            store._listing = True
            return await store._transact(lambda: store.last_raw_program(run_ids), write=False)

    async def _op_close(self) -> None:
        await self._disconnect()

    async def _op_release(self, owner: Owner, unstarted: str | None) -> None:
        if self._hold_lost:
            # The server let go of the lock with the lost session; the run's stored state says what to resume.
            self._hold_lost = False
            return
        await super()._op_release(owner, unstarted)

    async def _disconnect(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            if self._blocking:
                await anyio.to_thread.run_sync(conn.close)
            else:
                await conn.close()

    # --- the driver ----------------------------------------------------------------------------------

    async def _connection(self) -> Any:
        if self._conn is not None:
            return self._conn
        if self._closed:
            raise self._closed_error()
        if self._hold_lost and self._owner is None:  # the claim it lost has ended
            self._hold_lost = False
        if self._hold_lost:
            # A new session would not hold the run's lock, and another process may have taken the run over.
            raise PersistenceError(
                f'The connection to {self._describe()} that held run {self._run_id!r} was lost; nothing more is '
                'written for this run here. Resume it (its unfinished step runs again).'
            )
        psycopg = _psycopg()
        import sniffio  # declared by the `postgres` extra, with psycopg

        # psycopg's async connections need asyncio; under trio the transactions run on a blocking one.
        self._blocking = sniffio.current_async_library() != 'asyncio'
        try:
            if self._blocking:
                conn = await anyio.to_thread.run_sync(lambda: psycopg.Connection.connect(self._dsn, autocommit=True))
            else:
                conn = await psycopg.AsyncConnection.connect(self._dsn, autocommit=True)
        except psycopg.Error as e:
            raise self._error(e) from None
        self._conn = conn
        try:
            await self._transact(lambda: setup_program(_DIALECT, self._describe()))
        except BaseException:
            await self._disconnect()
            raise
        return conn

    async def _transact(self, program: Callable[[], Program[_T]], *, write: bool = True) -> _T:
        return await self._on_connection(_run_blocking, _run_async, program)

    async def _execute_alone(self, query: Query) -> int:
        # The connection is in autocommit mode: a statement alone is a transaction of its own.
        return await self._on_connection(_execute_blocking, _execute_async, query)

    async def _on_connection(
        self,
        blocking: Callable[[psycopg.Connection[Any], _A], _T],
        asynchronous: Callable[[psycopg.AsyncConnection[Any], _A], Awaitable[_T]],
        arg: _A,
    ) -> _T:
        """`blocking(connection, arg)` in a worker thread, or `await asynchronous(connection, arg)` on asyncio."""
        conn = await self._connection()
        psycopg = _psycopg()
        # A transaction, once started, is not interrupted by cancellation: psycopg would close the
        # connection (and with it the session lock holding the run) to abandon a query in flight.
        with anyio.CancelScope(shield=True):
            try:
                if self._blocking:
                    result: _T = await anyio.to_thread.run_sync(blocking, conn, arg)
                else:
                    result = await asynchronous(conn, arg)
            except psycopg.Error as e:
                if conn.closed:
                    self._conn = None  # opened again on next use, unless it held the run
                    if self._owner is not None:
                        self._hold_lost = True
                        raise PersistenceError(
                            f'The connection to {self._describe()} that held run {self._run_id!r} was lost '
                            f'({self._error(e).message}). The run was left as stored, to be resumed (its '
                            'unfinished step runs again).'
                        ) from None
                raise self._error(e) from None
        return result

    def _error(self, error: psycopg.Error) -> PersistenceError:
        message = str(error)
        password = _password(self._dsn)
        if password:
            message = message.replace(password, '***')
        return PersistenceError(f'{self._describe()} failed{self._for_run()}: {message}')


def _password(dsn: str) -> str | None:
    try:
        from psycopg.conninfo import conninfo_to_dict

        value = conninfo_to_dict(dsn).get('password')
    except Exception:  # pragma: no cover - an unparsable DSN fails to connect anyway
        return None
    return str(value) if value else None


async def _run_async(conn: psycopg.AsyncConnection[Any], program: Callable[[], Program[_T]]) -> _T:
    async with conn.transaction():
        return await drive_async(program(), partial(_query_async, conn))


def _run_blocking(conn: psycopg.Connection[Any], program: Callable[[], Program[_T]]) -> _T:
    with conn.transaction():
        return drive(program(), partial(_query_blocking, conn))


async def _query_async(conn: psycopg.AsyncConnection[Any], query: Query) -> Rows:
    cursor = await conn.execute(_sql(query.sql), query.params)
    return Rows(await cursor.fetchall() if cursor.description is not None else [], cursor.rowcount)


def _query_blocking(conn: psycopg.Connection[Any], query: Query) -> Rows:
    cursor = conn.execute(_sql(query.sql), query.params)
    return Rows(cursor.fetchall() if cursor.description is not None else [], cursor.rowcount)


async def _execute_async(conn: psycopg.AsyncConnection[Any], query: Query) -> int:
    rowcount: int = (await conn.execute(_sql(query.sql), query.params)).rowcount
    return rowcount


def _execute_blocking(conn: psycopg.Connection[Any], query: Query) -> int:
    rowcount: int = conn.execute(_sql(query.sql), query.params).rowcount
    return rowcount

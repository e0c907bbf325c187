"""File persistence: a run's history as a JSON list of snapshots in one file (pydantic-graph 1.x's format).

Unlike pydantic-graph's, every write is crash-safe, a file that is not a snapshot list is reported and never
overwritten, and the lock beside the file is an OS lock (`flock`) whose file records its owner (host, pid,
start time): the OS drops it when its owner dies, so a lock left by a killed process never blocks anyone, and
an error names a live owner.

While a run is held by a process (`claim_run`, as every graph run does), each write appends one fsynced record
to a journal beside the file (`<file>.edgewise-journal`, see `_journal`), so a step costs the same at any
length of the history (classic and builder runs alike); when the run is let go, the file is rewritten whole
with the journal folded in, and the journal removed. A write outside a claim rewrites the file whole. Either
way the file is replaced atomically (a temporary file beside it is written, fsynced and renamed over it).
After a crash the file and its journal together hold every write that completed; a journal record cut short
by the crash is ignored.
"""

from __future__ import annotations as _annotations

import contextlib
import glob
import json
import os
from collections.abc import AsyncIterator, Callable
from dataclasses import asdict
from datetime import datetime, timezone
from os import PathLike, fspath
from pathlib import Path
from time import monotonic
from typing import Any, Self, TypeVar

import anyio
import anyio.to_thread
import pydantic

from ..exceptions import GraphNodeStatusError, GraphRuntimeError, PersistenceError
from . import NodeError, NodeSnapshot, RunEndT, RunInfo, Snapshot, StateT
from ._durable import (
    Completion,
    DurableStatePersistence,
    EndStatus,
    duplicate_snapshot,
    run_in_progress,
    run_status,
    snapshot_not_found,
)
from ._journal import BadJournal, Change, History, Journal
from ._owner import Owner, current_owner, owner_is_alive
from ._pages import RunPage, RunQuery, page_of

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ('FileStatePersistence',)

_T = TypeVar('_T')
_Item = dict[str, Any]


def _ts(value: datetime) -> str:
    """A time as pydantic writes it in JSON."""
    return value.isoformat().replace('+00:00', 'Z')


class FileStatePersistence(DurableStatePersistence[StateT, RunEndT]):
    """Stores one run's snapshots in a JSON file, in the format of pydantic-graph 1.x.

    Use one file per run, e.g. `FileStatePersistence(Path('runs') / f'{run_id}.json')`.
    """

    def __init__(self, json_file: str | PathLike[str], *, lock_timeout: float = 5.0) -> None:
        """Use `json_file` (created on the first write) for the run's snapshots.

        Args:
            json_file: The JSON file holding the run's snapshots.
            lock_timeout: How long a write waits, in seconds, while another live process holds the file.
        """
        self.json_file = Path(json_file)
        """The JSON file holding the run's snapshots; one file per run."""
        self.lock_timeout = lock_timeout
        """How long a write waits, in seconds, while another live process holds the file."""
        self._held_fd: int | None = None
        self._run_id: str | None = None
        """Set for a child run: its id below the run it belongs to (`'order-42/payment'`)."""
        self._journal = Journal(self.json_file, self._parse)

    def __repr__(self) -> str:
        return f'{type(self).__name__}(json_file={fspath(self.json_file)!r})'

    @property
    def run_id(self) -> str:
        """The run's id: the file name without its extension; for a child run, the id of the run it belongs to,
        `/` and the path of its file below that run's folder (`'order-42/payment'`)."""
        return self._run_id or self.json_file.stem

    def _child(self, name: str) -> Self:
        child = super()._child(name)
        # A child's name may hold a `/` (a fan-out's branch is `<fork snapshot id>/<branch>`).
        child.json_file.parent.mkdir(parents=True, exist_ok=True)
        return child

    def _related(self, run_id: str) -> Self:
        root = self.json_file.parents[self.run_id.count('/')]
        return self._in_folder(root, run_id)

    @classmethod
    def _in_folder(cls, folder: Path, run_id: str, lock_timeout: float = 5.0) -> Self:
        """The run `run_id` of the store in `folder`: `<run_id>.json` there; a child run's file lies in the
        folder of the run it belongs to (`order-42/payment.json`)."""
        persistence = cls(folder / f'{run_id}.json', lock_timeout=lock_timeout)
        if '/' in run_id:
            persistence._run_id = run_id
        return persistence

    async def _op_child_runs(self) -> list[RunInfo]:
        return await anyio.to_thread.run_sync(self._child_infos)

    def _child_infos(self) -> list[RunInfo]:
        folder = self.json_file.with_suffix('')
        root = self.json_file.parents[self.run_id.count('/')]
        names = [file.relative_to(folder).with_suffix('').as_posix() for file in folder.rglob('*.json')]
        found = [self._in_folder(root, f'{self.run_id}/{name}')._read_info() for name in names]
        return sorted((info for info in found if info is not None), key=lambda run: (run.created, run.run_id))

    @property
    def lock_file(self) -> Path:
        """The lock beside the JSON file; it records the process holding it."""
        return self.json_file.with_name(f'{self.json_file.name}.edgewise-lock')

    def _describe(self) -> str:
        return f'file {fspath(self.json_file)!r}'

    @staticmethod
    async def list_runs(path: str | PathLike[str]) -> list[RunInfo]:
        """The runs of the JSON files in the directory `path` (or of the one file `path`), oldest first.

        Raises:
            PersistenceError: one of the files is not a snapshot list.
        """
        location = Path(path)

        def list_files() -> list[RunInfo]:
            files = sorted(location.glob('*.json')) if location.is_dir() else [location]
            runs = []
            for file in files:
                persistence = FileStatePersistence[Any, Any](file)
                info = persistence._read_info()
                if info is not None:
                    runs.append(info)
                if location.is_dir():  # the child runs of a run lie in the folder named after its file
                    runs.extend(persistence._child_infos())
            return sorted(runs, key=lambda run: (run.created, run.run_id))

        return await anyio.to_thread.run_sync(list_files)

    @staticmethod
    async def list_runs_page(path: str | PathLike[str], query: RunQuery) -> RunPage:
        """A page of the top-level runs of the JSON files at `path`, newest first (see `RunQuery`); a directory of
        run files is read whole (each file is a run), so it suits stores of some thousands of runs."""
        return page_of(await FileStatePersistence.list_runs(path), query)

    # --- locking -------------------------------------------------------------------------------------

    def _try_lock(self, owner: Owner) -> int | None:
        """Take the lock without waiting: its descriptor, or `None` when a live process holds it."""
        if fcntl is None:  # pragma: no cover - Windows
            raise PersistenceError('FileStatePersistence needs POSIX file locks (fcntl); use SqliteStatePersistence.')
        fd = os.open(self.lock_file, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        os.ftruncate(fd, 0)
        os.pwrite(fd, owner.to_json().encode(), 0)
        return fd

    def _unlock(self, fd: int) -> None:
        os.ftruncate(fd, 0)
        os.close(fd)  # closing drops the flock

    def _lock_owner(self) -> Owner | None:
        try:
            return Owner.from_json(self.lock_file.read_text())
        except OSError:  # pragma: no cover - removed meanwhile
            return None

    async def _wait_for_lock(self, seconds: float) -> int | None:
        """Take the lock, polling for up to `seconds` seconds: its descriptor, or `None` if it stayed held."""
        owner = current_owner()
        deadline = monotonic() + seconds
        while (fd := self._try_lock(owner)) is None:
            if monotonic() > deadline:
                return None
            await anyio.sleep(0.005)
        return fd

    @contextlib.asynccontextmanager
    async def _lock(self, *, timeout: float = 1.0) -> AsyncIterator[None]:  # noqa: ASYNC109 - pydantic-graph's signature
        """Hold the file's lock for the block; `TimeoutError` if it stays held by another holder for `timeout` s.

        pydantic-graph 1.x's private locking helper, kept with its signature for code (and tests) that use it.
        """
        fd = await self._wait_for_lock(timeout)
        if fd is None:
            raise TimeoutError(str(run_in_progress(self.run_id, self._lock_owner())))
        try:
            yield
        finally:
            self._unlock(fd)

    async def _locked(self, operation: Callable[[], _T]) -> _T:
        """Run `operation` in a worker thread while holding the lock (already held during a claimed run)."""
        if self._closed:  # a write after `aclose()`, by a node that was running then
            raise self._closed_error()
        if self._held_fd is not None:
            return await anyio.to_thread.run_sync(operation)
        fd = await self._wait_for_lock(self.lock_timeout)
        if fd is None:
            raise run_in_progress(self.run_id, self._lock_owner())
        try:
            # A worker thread, once started, is waited for: the write completes even if this task is cancelled.
            return await anyio.to_thread.run_sync(operation)
        finally:
            self._unlock(fd)

    # --- reading and writing -------------------------------------------------------------------------

    def _read(self) -> History:
        try:
            return self._journal.read()
        except BadJournal as e:
            raise self._bad_file(f'its journal {fspath(self._journal.path)!r} cannot be read: {e.reason}') from None

    def _parse(self, content: bytes) -> list[_Item]:
        try:
            data = json.loads(content)
        except ValueError as e:
            raise self._bad_file(f'it is not valid JSON ({e})') from None
        if not isinstance(data, list):
            raise self._bad_file(f'it holds a JSON {type(data).__name__}, not a list of snapshots')
        for index, item in enumerate(data):
            if not (isinstance(item, dict) and item.get('kind') in ('node', 'end') and isinstance(item.get('id'), str)):
                raise self._bad_file(f'item {index} is not a snapshot (an object with "kind" and "id")')
        return data

    def _bad_file(self, reason: str) -> PersistenceError:
        return PersistenceError(
            f'{self._describe()} cannot be used for run {self.run_id!r}: {reason}. It was left untouched; '
            'give FileStatePersistence a file of its own.'
        )

    def _commit(self, history: History, changes: list[Change]) -> None:
        """Store `changes` to `history` (as just read): appended to the journal while the run is held (and the
        file exists), else by rewriting the file whole with them. Nothing changes if the write fails."""
        try:
            if self._held_fd is not None and history.items:
                self._journal.append(changes)
            else:
                updated = history.copy()
                updated.apply(changes)
                self._write(updated)
        except OSError as e:
            # The same error type as the SQL backends' failed writes; what was stored before is intact.
            raise PersistenceError(
                f'{self._describe()} could not be written for run {self.run_id!r}: {e}. The file was left as it '
                'was (every write is stored whole, or not at all).'
            ) from e

    def _write(self, history: History) -> None:
        """Replace the file atomically with `history` (fsynced temporary file renamed over it); the journal goes."""
        self._journal.write_base(history, self.json_file.with_name(f'.{self.json_file.name}.{os.getpid()}.tmp'))

    def _fold_journal(self) -> None:
        """Rewrite the file whole with its journal folded in, as the run is let go: a run at rest is one JSON file
        in pydantic-graph's format. If that write fails, nothing is lost: the file and its journal stay."""
        history = self._read()
        if self._journal.pending:
            with contextlib.suppress(OSError):
                self._write(history)

    def _item(self, snapshot: Snapshot[StateT, RunEndT]) -> _Item:
        # The JSON-ready dict straight away: `_write` encodes the whole list once.
        item: _Item = self._type_adapter().dump_python(snapshot, mode='json')
        return item

    def _find(self, history: History, snapshot_id: str) -> _Item:
        item = history.get(snapshot_id)
        if item is None:
            raise snapshot_not_found(snapshot_id)
        return item

    def _decode_item(
        self, item: _Item, adapter: pydantic.TypeAdapter[Snapshot[StateT, RunEndT]] | None = None
    ) -> Snapshot[StateT, RunEndT]:
        return self._decode(json.dumps(item), item['id'], adapter)

    # --- operations ----------------------------------------------------------------------------------

    async def _op_insert(
        self, snapshot: Snapshot[StateT, RunEndT], complete: Completion | None, if_new: bool, start: datetime | None
    ) -> bool:
        new_item = self._item(snapshot)
        if start is not None:
            new_item.update(status='running', start_ts=_ts(start))

        def insert() -> bool:
            history = self._read()
            if history.get(snapshot.id) is not None:
                if if_new:
                    return False
                raise duplicate_snapshot(self.run_id, self._describe(), snapshot.id)
            changes: list[Change] = [['put', new_item]]
            if complete is not None:
                self._find(history, complete.snapshot_id)
                fields = {'status': 'success', 'start_ts': _ts(complete.start_ts), 'duration': complete.duration}
                changes.append(['set', complete.snapshot_id, fields])
            self._commit(history, changes)
            return True

        return await self._locked(insert)

    async def _op_checkpoint(self, snapshot: NodeSnapshot[StateT, RunEndT]) -> None:
        new_item = self._item(snapshot)

        def checkpoint() -> None:
            history = self._read()
            item = history.get(snapshot.id)
            if (
                item is None
                or item['kind'] != 'node'
                or item.get('status', 'created') not in ('created', 'pending', 'running')
            ):
                raise self.checkpoint_missing(snapshot.id)
            keep: dict[str, Any] = {key: item[key] for key in ('status', 'start_ts', 'duration') if key in item}
            self._commit(history, [['put', {**new_item, **keep}]])

        await self._locked(checkpoint)

    async def _op_start(self, snapshot_id: str, start_ts: datetime) -> None:
        def start() -> None:
            history = self._read()
            item = self._find(history, snapshot_id)
            if item['kind'] != 'node':
                raise GraphRuntimeError(
                    f'Snapshot {snapshot_id!r} is the end of the run; only node snapshots can be run.'
                )
            GraphNodeStatusError.check(item.get('status', 'created'))
            self._commit(history, [['set', snapshot_id, {'status': 'running', 'start_ts': _ts(start_ts)}]])

        await self._locked(start)

    async def _op_finish(
        self, snapshot_id: str, status: EndStatus, start_ts: datetime | None, duration: float, error: NodeError | None
    ) -> None:
        def finish() -> None:
            history = self._read()
            self._find(history, snapshot_id)
            fields = {
                'status': status,
                'start_ts': None if start_ts is None else _ts(start_ts),
                'duration': duration,
                **({} if error is None else {'error': asdict(error)}),
            }
            self._commit(history, [['set', snapshot_id, fields]])

        await self._locked(finish)

    async def _op_load_next(self) -> NodeSnapshot[StateT, RunEndT] | None:
        def load_next() -> NodeSnapshot[StateT, RunEndT] | None:
            history = self._read()
            for item in history.items:
                if item['kind'] == 'node' and item.get('status') == 'created':
                    snapshot = self._decode_item(item)  # one that cannot be read is not marked: nothing changes
                    assert isinstance(snapshot, NodeSnapshot)
                    self._commit(history, [['set', item['id'], {'status': 'pending'}]])
                    snapshot.status = 'pending'
                    return snapshot
            return None

        return await self._locked(load_next)

    async def _op_load_all(
        self, adapter: pydantic.TypeAdapter[Snapshot[StateT, RunEndT]] | None
    ) -> list[Snapshot[StateT, RunEndT]]:
        def load_all() -> list[Snapshot[StateT, RunEndT]]:
            # A copy: a write of this object's run (from another task) may append to the list meanwhile.
            return [self._decode_item(item, adapter) for item in list(self._read().items)]

        # Writes replace the file atomically or append whole records to the journal, so reading needs no lock.
        return await anyio.to_thread.run_sync(load_all)

    async def _op_info(self) -> RunInfo | None:
        return await anyio.to_thread.run_sync(self._read_info)

    def _read_info(self) -> RunInfo | None:
        # The snapshots as stored, not validated: no graph is needed, and only a few fields are read.
        items = list(self._read().items)
        if not items:
            return None
        updated = datetime.fromtimestamp(self._journal.modified(), tz=timezone.utc)
        first, last = items[0], items[-1]
        created = first.get('start_ts' if first['kind'] == 'node' else 'ts')
        status = last.get('status') if last['kind'] == 'node' else None
        owner = self._lock_owner() if status in ('running', 'pending') else None
        try:
            created_ts = datetime.fromisoformat(created) if isinstance(created, str) else updated
        except ValueError:
            reason = f'its first snapshot has a start time that is not one: {str(created)[:40]!r}'
            raise self._bad_file(reason) from None
        return RunInfo(
            run_id=self.run_id,
            graph_name=None,
            status=run_status(last['kind'], status, owner is not None and owner_is_alive(owner)),
            created=created_ts,
            updated=updated,
            snapshot_count=len(items),
        )

    async def _op_claim(self, owner: Owner, keep: str | None) -> None:
        fd = self._try_lock(owner)
        if fd is None:
            raise run_in_progress(self.run_id, self._lock_owner())
        self._held_fd = fd

        def recover() -> None:
            # Every write happens under the lock, so a temporary file found while holding it was left by a
            # process that died mid-write (the file itself is whole: the rename never happened).
            prefix = f'.{self.json_file.name}.'
            for stale in self.json_file.parent.glob(f'{glob.escape(prefix)}*.tmp'):
                if stale.name[len(prefix) : -len('.tmp')].isdigit():  # `.<name>.<pid>.tmp`, this file's only
                    stale.unlink(missing_ok=True)
            # The previous holder is gone (the OS dropped its lock): the step it left unfinished runs again.
            history = self._read()
            last = history.items[-1] if history.items else None
            if last and last['kind'] == 'node' and last.get('status') in ('pending', 'running') and last['id'] != keep:
                self._commit(history, [['set', last['id'], {'status': 'created'}]])

        try:
            await anyio.to_thread.run_sync(recover)
        except BaseException:
            self._held_fd = None
            self._unlock(fd)
            raise

    async def _op_release(self, owner: Owner, unstarted: str | None) -> None:
        fd = self._held_fd
        try:
            if unstarted is not None:

                def reset() -> None:
                    history = self._read()
                    item = self._find(history, unstarted)
                    if item.get('status') in ('pending', 'running'):
                        self._commit(history, [['set', unstarted, {'status': 'created', 'start_ts': None}]])

                await anyio.to_thread.run_sync(reset)
            await anyio.to_thread.run_sync(self._fold_journal)
        finally:
            self._held_fd = None
            if fd is not None:  # pragma: no branch
                self._unlock(fd)

    async def _op_delete(self) -> bool:
        return await anyio.to_thread.run_sync(self._journal.remove)

    async def _op_fork(self, snapshot_id: str, run_id: str | None) -> Self:
        fork_id = run_id or f'{self.json_file.stem}-fork-{os.urandom(4).hex()}'
        forked = type(self)(self.json_file.with_name(f'{fork_id}.json'), lock_timeout=self.lock_timeout)

        def fork() -> None:
            history = self._read()
            item = self._find(history, snapshot_id)
            items = history.items[: history.index[snapshot_id] + 1]
            if item['kind'] == 'node':
                items[-1] = {**item, 'status': 'created', 'start_ts': None, 'duration': None}
            if forked.json_file.exists():
                raise PersistenceError(
                    f'Cannot fork run {self.run_id!r} into {fork_id!r}: {forked._describe()} already exists. '
                    'Choose another run id, or leave it out to get a new one.'
                )
            forked._commit(History([]), [['put', item] for item in items])

        await forked._locked(fork)
        return forked

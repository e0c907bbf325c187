"""`DBOSWorker`: a process that takes graph runs from DBOS queues, and finishes the runs of workers that died.

A worker's executor id is `edgewise-<id>`; it holds the liveness lock of that id (see `_liveness`)
from before DBOS launches until the process ends. Every `recovery_interval` seconds it lists the pending
workflows, and for each executor of another `edgewise-` id whose lock it can take (so that executor is
gone) it has DBOS hand that executor's pending workflows back to their queues, where any worker takes
them and resumes each from its last recorded step. Executors of other ids (processes that do not hold a
lock) are never taken over: DBOS recovers them when they restart with the same id.
"""

from __future__ import annotations as _annotations

import os
import secrets
import socket
import threading
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass
from types import TracebackType

import dbos as _dbos

from ._liveness import ExecutorLocks, executor_locks

__all__ = ('DBOSQueue', 'DBOSWorker', 'EXECUTOR_PREFIX')

EXECUTOR_PREFIX = 'edgewise-'
"""The prefix of the executor ids of `DBOSWorker`s, whose runs other workers recover when they die."""


@dataclass(frozen=True)
class DBOSQueue:
    """A DBOS queue of runs, with its concurrency limits; `DBOSWorker` registers it in the system database."""

    name: str
    """The queue's name."""
    _: KW_ONLY
    worker_concurrency: int | None = None
    """The most runs of this queue one worker process runs at once (`None`: no limit)."""
    global_concurrency: int | None = None
    """The most runs of this queue all workers together run at once (`None`: no limit)."""
    polling_interval: float = 1.0
    """How often, in seconds, a worker looks for runs to take from the queue."""


class DBOSWorker:
    """Launch DBOS in this process as a worker: take runs from queues, recover the runs of dead workers.

    Use it as a context manager (or `start()` / `stop()`); DBOS is one per process, so one worker at a time.
    Create every `DBOSGraph` (and register every other DBOS workflow) before starting it.
    """

    def __init__(
        self,
        config: _dbos.DBOSConfig,
        *,
        queues: Sequence[DBOSQueue] = (),
        recovery_interval: float = 5.0,
    ) -> None:
        """Prepare a worker.

        Args:
            config: DBOS's configuration: `name` and `system_database_url` at least (`postgresql://...` for
                workers on many machines, `sqlite:///runs.sqlite` for one machine). Its `executor_id`
                (else the `DBOS__VMID` variable, else `<host>-<pid>-<random>`) is prefixed with `edgewise-`.
            queues: The queues to register (their limits are stored in the system database).
            recovery_interval: How often, in seconds, to look for dead workers' runs.
        """
        given = config.get('executor_id') or os.environ.get('DBOS__VMID')
        if not given:
            given = f'{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}'
        executor_id = given if given.startswith(EXECUTOR_PREFIX) else f'{EXECUTOR_PREFIX}{given}'
        url = config.get('system_database_url')
        if not url:
            raise ValueError(
                "DBOSWorker needs config['system_database_url']: postgresql://... for workers on several "
                'machines, sqlite:///path.sqlite for one machine.'
            )
        self.config: _dbos.DBOSConfig = {**config, 'executor_id': executor_id}
        """The DBOS configuration the worker launches with."""
        self.executor_id = executor_id
        """This worker's DBOS executor id."""
        self.queues = tuple(queues)
        """The queues this worker registers."""
        self.recovery_interval = recovery_interval
        """How often, in seconds, the worker looks for dead workers' runs."""
        self._url: str = url
        self._locks: ExecutorLocks | None = None
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None
        self.recovered: list[str] = []
        """The executor ids whose runs this worker handed back to their queues."""

    def start(self) -> None:
        """Hold this worker's liveness lock, launch DBOS, register the queues and start watching for dead workers.

        Waits while a worker that is recovering this executor id holds its lock (only when an id is reused).
        """
        self._locks = executor_locks(self._url)
        try:
            self._locks.hold(self.executor_id)
            _dbos.DBOS(config=self.config)
            _dbos.DBOS.launch()
            for queue in self.queues:
                _dbos.DBOS.register_queue(
                    queue.name,
                    worker_concurrency=queue.worker_concurrency,
                    global_concurrency=queue.global_concurrency,
                    polling_interval_sec=queue.polling_interval,
                    on_conflict='always_update',
                )
        except BaseException:
            self._close()
            raise
        self._stop.clear()
        self._watcher = threading.Thread(target=self._watch, name='edgewise-dbos-recovery', daemon=True)
        self._watcher.start()

    def stop(self, *, workflow_completion_timeout: int = 0) -> None:
        """Stop watching, shut DBOS down and release the liveness lock.

        Runs still going are left pending; another worker (or this one, restarted) finishes them.

        Args:
            workflow_completion_timeout: Seconds DBOS waits for running workflows before shutting down.
        """
        self._stop.set()
        if self._watcher is not None:
            self._watcher.join()
            self._watcher = None
        try:
            _dbos.DBOS.destroy(workflow_completion_timeout_sec=workflow_completion_timeout)
        finally:
            self._close()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until `stop()` is called (from another thread) or `timeout` seconds pass; `True` if stopped."""
        return self._stop.wait(timeout)

    def recover_dead_workers(self) -> list[str]:
        """Hand the pending runs of every dead `edgewise-` executor back to their queues, once; return their ids."""
        assert self._locks is not None, 'the worker is not started'
        pending = _dbos.DBOS.list_workflows(status='PENDING', load_input=False, load_output=False)
        executors = sorted(
            {
                workflow.executor_id
                for workflow in pending
                if workflow.executor_id
                and workflow.executor_id != self.executor_id
                and workflow.executor_id.startswith(EXECUTOR_PREFIX)
            }
        )
        recovered: list[str] = []
        for executor_id in executors:
            if not self._locks.try_take(executor_id):
                continue  # alive
            try:
                _dbos.DBOS._recover_pending_workflows([executor_id])
            finally:
                self._locks.release(executor_id)
            recovered.append(executor_id)
        self.recovered.extend(recovered)
        return recovered

    def _watch(self) -> None:
        while not self._stop.wait(self.recovery_interval):
            try:
                self.recover_dead_workers()
            except Exception as e:  # pragma: no cover - a database hiccup; the next round tries again
                _dbos.DBOS.logger.warning(f'edgewise: looking for dead workers failed: {e!r}')

    def _close(self) -> None:
        if self._locks is not None:
            self._locks.close()
            self._locks = None

    def __enter__(self) -> DBOSWorker:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f'<DBOSWorker {self.executor_id!r}>'

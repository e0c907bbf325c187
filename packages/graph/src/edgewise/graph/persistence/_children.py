"""Child runs in a durable store: finding a run's child runs and its parent, and removing a run with its children.

A child run (a subgraph run, a branch of a fan-out) is stored under the run id `'<parent run id>/<name>'`
(a branch's name is `'<fork snapshot id>/<branch>'`, so a run id with `/` in it names a run below the run
before it). So the child runs of a run are the stored runs whose id starts with its id and `/`, and a run's
parent is the longest such prefix of its id that is a stored run.

The functions take a `DurableStatePersistence` (typed loosely: that class sits above this module).
"""

from __future__ import annotations as _annotations

from typing import Any

from ..exceptions import PersistenceError, RunInProgressError
from . import RunInfo
from .raw import RawSnapshot

__all__ = ('parent_run', 'delete_with_children', 'child_name', 'load_child_histories')


def child_name(run_id: str, child_id: str) -> str:
    """The name of the child run `child_id` below the run `run_id` (`'cart'`, `'Fork:a1/0'`, `'cart/Fork:b2/1'`)."""
    return child_id[len(run_id) + 1 :]


async def parent_run(persistence: Any) -> RunInfo | None:
    """The stored run that `persistence`'s run is a child run of, if any."""
    run_id: str = persistence.run_id
    prefix = run_id
    while '/' in prefix:
        prefix = prefix.rsplit('/', 1)[0]
        async with persistence._related(prefix) as parent:
            info: RunInfo | None = await parent.info()
        if info is not None:
            return info
    return None


async def delete_with_children(persistence: Any) -> bool:
    """Remove the run and then its child runs (see `DurableStatePersistence.delete`).

    The parent goes first: should the process die half-way, what is left are child runs without a parent
    (listed on their own, and removable), never a resumable run that lost the record of its children.
    """
    run_id: str = persistence.run_id
    parent = await parent_run(persistence)
    if parent is not None and parent.status not in ('finished', 'failed'):
        raise PersistenceError(
            f'Run {run_id!r} is a child run of run {parent.run_id!r}, which is {parent.status}: resuming '
            f'{parent.run_id!r} reads this run back, so it is not removed on its own. Remove {parent.run_id!r} '
            '(its child runs go with it), or wait until it has finished. Nothing was removed.'
        )
    async with persistence.claim_run():
        children: list[RunInfo] = await persistence._op_child_runs()
        live = [child.run_id for child in children if child.status == 'running']
        if live:
            raise RunInProgressError(
                f'Run {run_id!r} has child runs in progress elsewhere ({", ".join(repr(i) for i in live)}): a live '
                'process is advancing them. Wait for it to finish or stop it. Nothing was removed.'
            )
        deleted: bool = await persistence._op_delete()
        for child in sorted(children, key=lambda info: info.run_id.count('/')):
            async with persistence._related(child.run_id) as related, related.claim_run():
                await related._op_delete()
    return deleted or bool(children)


async def load_child_histories(persistence: Any) -> dict[str, list[RawSnapshot]]:
    """The histories of the run's child runs (see `DurableStatePersistence.load_child_histories`)."""
    run_id: str = persistence.run_id
    histories: dict[str, list[RawSnapshot]] = {}
    for info in await persistence._op_child_runs():
        async with persistence._related(info.run_id) as child:
            histories[child_name(run_id, info.run_id)] = await child.load_raw()
    return histories

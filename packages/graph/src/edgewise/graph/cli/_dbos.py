"""`edgewise runs list`, `runs show` and `edgewise mermaid --run` on DBOS stores: `--store dbos+postgresql://...` (or `dbos+sqlite:///...`).

The runs of `DBOSGraph`s live in DBOS's system database and are read through DBOS's own API
(`edgewise.graph.dbos.list_runs`, `load_history` and the steps of a run), so `dbos` is imported only for such a store.
"""

from __future__ import annotations as _annotations

from typing import TYPE_CHECKING, Any

from ..persistence.postgres import mask_dsn
from ._common import CommandError, echo, when
from ._format import table

if TYPE_CHECKING:
    from ..builder import Graph as BuilderGraph
    from ..graph import Graph
    from ..persistence import Snapshot

__all__ = ('is_dbos_store', 'list_dbos_runs', 'show_dbos_run', 'dbos_history', 'refuse_dbos_store')


def is_dbos_store(url: str) -> bool:
    """Whether `url` names a DBOS system database (`dbos+postgresql://...`, `dbos+sqlite:///...`)."""
    return url.lower().startswith('dbos+')


async def list_dbos_runs(url: str) -> int:
    """Print the DBOS-run graphs of the system database as a table, oldest first."""
    from ..dbos import list_runs

    runs = await list_runs(url)
    if not runs:
        echo(f'No runs in {mask_dsn(url)}.')
        return 0
    rows = [
        (run.run_id, run.graph_name or '-', run.status, when(run.created), when(run.updated), str(run.snapshot_count))
        for run in runs
    ]
    echo(table(('RUN ID', 'GRAPH', 'STATUS', 'STARTED (UTC)', 'UPDATED (UTC)', 'STEPS'), rows))
    return 0


async def dbos_history(
    url: str, run_id: str, graph: Graph[Any, Any, Any] | BuilderGraph[Any, Any, Any, Any]
) -> list[Snapshot[Any, Any]]:
    """The snapshots of a DBOS-run graph (classic or builder), for drawing its path."""
    from ..dbos import load_history

    try:
        return await load_history(url, run_id, graph)
    except LookupError:
        raise CommandError(
            f'No run {run_id!r} in {mask_dsn(url)} (`edgewise runs list --store URL` lists them).'
        ) from None


async def show_dbos_run(url: str, run_id: str) -> int:
    """Print a DBOS-run graph's status and its steps (one per node run), and its error if it failed."""
    from ..dbos._runs import run_steps

    try:
        info, error, steps = await run_steps(url, run_id)
    except LookupError:
        raise CommandError(
            f'No run {run_id!r} in {mask_dsn(url)} (`edgewise runs list --store URL` lists them).'
        ) from None
    echo(f'Run {info.run_id} of graph {info.graph_name}: {info.status}, started {when(info.created)} UTC')
    rows = [
        (str(i), node, status, when(started), '-' if took is None else f'{took:.3f}s')
        for i, (node, status, started, took) in enumerate(steps, 1)
    ]
    if rows:
        echo(table(('STEP', 'NODE', 'STATUS', 'STARTED (UTC)', 'DURATION'), rows))
    else:
        echo('No step has run yet.')
    if error is not None:
        echo(f'Error: {error}')
    return 0


def refuse_dbos_store(url: str, command: str) -> CommandError:
    """The error of a `runs` command that DBOS stores do not offer."""
    return CommandError(
        f'`edgewise runs {command}` does not work on DBOS stores ({mask_dsn(url)}): DBOS workers recover and '
        "finish their runs themselves, and DBOS's own API (`DBOS.fork_workflow`, `DBOS.cancel_workflow`) "
        'forks and cancels them. `runs list` and `runs show` read them.'
    )

"""`edgewise runs list` and `edgewise mermaid --run` on DBOS stores: `--store dbos+postgresql://...` (or `dbos+sqlite:///...`).

The runs of `DBOSGraph`s live in DBOS's system database and are read through DBOS's own API
(`edgewise.graph.dbos.list_runs` and `load_history`), so `dbos` is imported only for such a store.
"""

from __future__ import annotations as _annotations

from typing import TYPE_CHECKING, Any

from ..persistence.postgres import mask_dsn
from ._common import CommandError, echo, when
from ._format import table

if TYPE_CHECKING:
    from ..graph import Graph
    from ..persistence import Snapshot

__all__ = ('is_dbos_store', 'list_dbos_runs', 'dbos_history')


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


async def dbos_history(url: str, run_id: str, graph: Graph[Any, Any, Any]) -> list[Snapshot[Any, Any]]:
    """The snapshots of a DBOS-run graph, for drawing its path."""
    from ..dbos import load_history

    try:
        return await load_history(url, run_id, graph)
    except LookupError:
        raise CommandError(
            f'No run {run_id!r} in {mask_dsn(url)} (`edgewise runs list --store URL` lists them).'
        ) from None

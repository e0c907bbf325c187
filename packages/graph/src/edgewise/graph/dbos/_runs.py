"""Reading DBOS-run graphs through DBOS's own API (`list_workflows`, `list_workflow_steps`): listing and history.

A run's history is rebuilt from what DBOS recorded: the workflow's input is the first snapshot, and each
completed step's output the snapshot after it; a step's start and end times give its node's `start_ts`
and `duration`, and a step that raised marks its node `'error'`. A builder run's history is rebuilt the same way
(`builder_run_snapshots`): its routing is replayed over the recorded outputs of its steps, giving the
`BuilderProgress` snapshots a store would hold.
"""

from __future__ import annotations as _annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Any

import anyio
import dbos as _dbos
import pydantic

from ..builder import Graph as BuilderGraph
from ..builder._sequential import SequentialRun
from ..exceptions import PersistenceError
from ..graph import Graph
from ..persistence import (
    NodeSnapshot,
    RunInfo,
    RunStatus,
    Snapshot,
    build_snapshot_type_adapter,
    set_nodes_type_context,
)
from ..persistence.postgres import mask_dsn
from ._liveness import sqlite_path

__all__ = (
    'WORKFLOW_PREFIX',
    'builder_run_snapshots',
    'list_runs',
    'load_history',
    'run_snapshots',
    'run_steps',
    'system_database_url',
)

WORKFLOW_PREFIX = 'edgewise.graph/'
"""The prefix of the DBOS workflow names of `DBOSGraph`s: `edgewise.graph/<graph name>`."""

_STATUSES: dict[str, RunStatus] = {
    'PENDING': 'running',
    'ENQUEUED': 'waiting',
    'DELAYED': 'waiting',
    'SUCCESS': 'finished',
}


def system_database_url(url: str) -> str:
    """A DBOS system database URL from a store URL: `dbos+postgresql://...` or `dbos+sqlite:///...` (or without
    the `dbos+`)."""
    return url[5:] if url.lower().startswith('dbos+') else url


def _when(epoch_ms: int | None) -> datetime | None:
    return None if epoch_ms is None else datetime.fromtimestamp(epoch_ms / 1000, tz=timezone.utc)


@contextmanager
def _reading(url: str) -> Iterator[Any]:
    """A `DBOSClient` on the system database at `url`; what goes wrong reading it becomes a `PersistenceError`."""
    system_url = system_database_url(url)
    shown = mask_dsn(system_url)
    if system_url.startswith('sqlite') and not sqlite_path(system_url).exists():
        # Reading must not create an empty database.
        raise PersistenceError(f'No DBOS system database at {shown}: {str(sqlite_path(system_url))!r} does not exist.')
    try:
        client = _dbos.DBOSClient(system_database_url=system_url, retry_connection_errors=False)
    except Exception as e:
        raise PersistenceError(f'Cannot connect to the DBOS system database at {shown}: {_reason(e)}') from e
    try:
        yield client
    except (LookupError, PersistenceError, pydantic.ValidationError):
        raise
    except Exception as e:
        raise PersistenceError(
            f'Cannot read the DBOS system database at {shown} (is it one, made by a DBOS application?): {_reason(e)}'
        ) from e
    finally:
        client.destroy()


def _reason(error: Exception) -> str:
    # SQLAlchemy appends the statement and a link to its docs; the first line says what went wrong.
    return f'{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ""}'.rstrip(': ')


async def list_runs(url: str) -> list[RunInfo]:
    """The DBOS-run graphs stored in the system database at `url`, oldest first, read through `DBOSClient`.

    `url` is a DBOS system database URL, optionally as a store URL: `dbos+postgresql://user@host/db`,
    `dbos+sqlite:///runs.sqlite`. Statuses: a run being run by a worker is `'running'` (also while its dead
    worker's runs wait to be recovered), a queued one `'waiting'`, a successful one `'finished'`, and one
    that raised or was cancelled `'failed'`. `snapshot_count` is the first snapshot plus one per completed step.

    Raises:
        PersistenceError: the database does not exist, cannot be reached, or is not a DBOS system database.
    """
    return await anyio.to_thread.run_sync(_list_runs, url)


def _list_runs(url: str) -> list[RunInfo]:
    runs: list[RunInfo] = []
    with _reading(url) as client:
        for workflow in client.list_workflows(load_input=False, load_output=False):
            if not workflow.name.startswith(WORKFLOW_PREFIX):
                continue
            steps = client.list_workflow_steps(workflow.workflow_id)
            done = sum(1 for step in steps if step['completed_at_epoch_ms'] is not None and step['error'] is None)
            created = _when(workflow.created_at) or datetime.now(timezone.utc)
            runs.append(
                RunInfo(
                    run_id=workflow.workflow_id,
                    graph_name=workflow.name[len(WORKFLOW_PREFIX) :],
                    status=_STATUSES.get(str(workflow.status), 'failed'),
                    created=created,
                    updated=_when(workflow.updated_at) or created,
                    snapshot_count=1 + done,
                )
            )
    return runs


async def load_history(
    url: str, run_id: str, graph: Graph[Any, Any, Any] | BuilderGraph[Any, Any, Any, Any]
) -> list[Snapshot[Any, Any]]:
    """The snapshots of the DBOS-run graph `run_id`, oldest first, for `graph.mermaid_code(history=...)`.

    Args:
        url: The DBOS system database URL (or a `dbos+...` store URL).
        run_id: The run's id (its DBOS workflow id).
        graph: The graph that ran it (classic or builder), to read its nodes and state.

    Raises:
        LookupError: the database holds no run `run_id` of a DBOS graph.
        PersistenceError: the database cannot be reached or read.
    """
    if isinstance(graph, BuilderGraph):
        builder = graph

        def read_builder() -> list[Snapshot[Any, Any]]:
            with _reading(url) as client:
                return builder_run_snapshots(client, run_id, builder, None)

        return await anyio.to_thread.run_sync(read_builder)
    with set_nodes_type_context(graph.get_nodes()):
        adapter = build_snapshot_type_adapter(*graph.inferred_types)

    def read() -> list[Snapshot[Any, Any]]:
        with _reading(url) as client:
            return run_snapshots(client, run_id, adapter, None)

    return await anyio.to_thread.run_sync(read)


def _workflow_of(source: Any, run_id: str, workflow_name: str | None) -> Any:
    """The DBOS workflow of the graph run `run_id` (of the workflow `workflow_name`, when given), with its input.

    Raises:
        LookupError: no such run.
    """
    found = source.list_workflows(workflow_ids=[run_id], load_output=False)
    workflow = found[0] if found else None
    if (
        workflow is None
        or not workflow.name.startswith(WORKFLOW_PREFIX)
        or (workflow_name is not None and workflow.name != workflow_name)
        or not workflow.input
    ):
        raise LookupError(f'No DBOS graph run {run_id!r} in the system database.')
    return workflow


def builder_run_snapshots(
    source: Any, run_id: str, graph: BuilderGraph[Any, Any, Any, Any], workflow_name: str | None
) -> list[Snapshot[Any, Any]]:
    """A builder run's history from `source` (the `DBOS` class or a `DBOSClient`), as a store would hold it: for
    `graph.mermaid_code(history=...)` and `read_run_path`.

    Raises:
        LookupError: no such run (of the workflow `workflow_name`, when given; of any DBOS graph otherwise).
    """
    workflow = _workflow_of(source, run_id, workflow_name)
    outputs: list[str] = []
    failure: tuple[str, str] | None = None
    for step in source.list_workflow_steps(run_id):
        error = step['error']
        if error is not None:
            failure = _error_text(error)
            break
        if step['completed_at_epoch_ms'] is None or step['output'] is None:  # pragma: no cover - recorded at once
            break
        outputs.append(step['output'])
    replay = SequentialRun(graph, None)
    return replay.recorded_history(
        workflow.input['args'][0], outputs, failure=failure, running=workflow.status == 'PENDING'
    )


def _error_text(error: BaseException) -> tuple[str, str]:
    """An error DBOS recorded, as its type's name and its message."""
    if isinstance(error, _dbos.PortableWorkflowError):  # stored as the error type's name and its message
        return error.name, error.message
    return type(error).__name__, str(error)  # pragma: no cover - a run of a DBOS graph is a portable workflow


def run_snapshots(
    source: Any, run_id: str, adapter: pydantic.TypeAdapter[Snapshot[Any, Any]], workflow_name: str | None
) -> list[Snapshot[Any, Any]]:
    """A run's snapshots from `source` (the `DBOS` class or a `DBOSClient`); see the module's docstring.

    Raises:
        LookupError: no such run (of the workflow `workflow_name`, when given; of any DBOS graph otherwise).
    """
    workflow = _workflow_of(source, run_id, workflow_name)
    history: list[Snapshot[Any, Any]] = [adapter.validate_json(workflow.input['args'][0])]
    for step in source.list_workflow_steps(run_id):
        current = history[-1]
        if not isinstance(current, NodeSnapshot):  # pragma: no cover - no step follows the end
            break
        current.start_ts = _when(step['started_at_epoch_ms'])
        if step['error'] is not None:
            current.status = 'error'
            break
        if step['completed_at_epoch_ms'] is None or step['output'] is None:  # pragma: no cover - recorded at once
            break
        started, completed = step['started_at_epoch_ms'], step['completed_at_epoch_ms']
        current.duration = (completed - started) / 1000 if started is not None else None
        current.status = 'success'
        history.append(adapter.validate_json(step['output']))
    last = history[-1]
    if isinstance(last, NodeSnapshot) and last.status == 'created':
        if workflow.status == 'PENDING':
            last.status = 'running'
        elif workflow.status not in ('ENQUEUED', 'DELAYED'):
            last.status = 'error'
    return history


async def run_steps(
    url: str, run_id: str
) -> tuple[RunInfo, str | None, list[tuple[str, str, datetime | None, float | None]]]:
    """A DBOS-run graph's listing entry, its error (type and message, when it failed) and its steps, read through
    `DBOSClient`: `(node id, 'success' | 'error' | 'running', started, seconds taken)` for each step, in order.

    Raises:
        LookupError: the database holds no run `run_id` of a DBOS graph.
        PersistenceError: the database cannot be reached or read.
    """

    def read() -> tuple[RunInfo, str | None, list[tuple[str, str, datetime | None, float | None]]]:
        with _reading(url) as client:
            found = client.list_workflows(workflow_ids=[run_id], load_input=False)  # the output holds the error
            if not found or not found[0].name.startswith(WORKFLOW_PREFIX):
                raise LookupError(f'No DBOS graph run {run_id!r} in the system database.')
            workflow = found[0]
            steps: list[tuple[str, str, datetime | None, float | None]] = []
            for step in client.list_workflow_steps(run_id):
                started, completed = step['started_at_epoch_ms'], step['completed_at_epoch_ms']
                status = 'error' if step['error'] is not None else 'running' if completed is None else 'success'
                took = (completed - started) / 1000 if started is not None and completed is not None else None
                steps.append((step['function_name'], status, _when(started), took))
        created = _when(workflow.created_at) or datetime.now(timezone.utc)
        info = RunInfo(
            run_id=run_id,
            graph_name=workflow.name[len(WORKFLOW_PREFIX) :],
            status=_STATUSES.get(str(workflow.status), 'failed'),
            created=created,
            updated=_when(workflow.updated_at) or created,
            snapshot_count=1 + sum(1 for step in steps if step[1] == 'success'),
        )
        error = workflow.error
        text = None if error is None else '{}: {}'.format(*_error_text(error))
        return info, text, steps

    return await anyio.to_thread.run_sync(read)

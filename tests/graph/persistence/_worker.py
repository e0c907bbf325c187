"""A separate process that resumes one run: `python -m tests.graph.persistence._worker KIND LOCATION RUN_ID [GO_FILE]`.

Prints `ready` once its imports are done (and, with GO_FILE, once that file exists), then resumes the run
to its end. Exit codes: 0 finished, 3 nothing to resume, 4 the run is in progress elsewhere.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio

from edgewise.graph.exceptions import GraphRuntimeError, RunInProgressError
from edgewise.graph.persistence.file import FileStatePersistence
from edgewise.graph.persistence.postgres import PostgresStatePersistence
from edgewise.graph.persistence.sqlite import SqliteStatePersistence
from edgewise.graph.persistence.store import DurableStatePersistence

from ._workflow import cycle_graph


def open_run(kind: str, location: str, run_id: str) -> DurableStatePersistence[Any, Any]:
    if kind == 'file':
        return FileStatePersistence(location)
    if kind == 'sqlite':
        return SqliteStatePersistence(location, run_id)
    return PostgresStatePersistence(location, run_id)


async def resume(kind: str, location: str, run_id: str, go_file: str | None) -> int:
    persistence = open_run(kind, location, run_id)
    print('ready', flush=True)
    if go_file is not None:
        # Another process creates the file: there is no event to wait on across processes.
        while not await anyio.Path(go_file).exists():  # noqa: ASYNC110
            await anyio.sleep(0.001)
    try:
        async with cycle_graph.iter_from_persistence(persistence) as run:
            async for _ in run:
                pass
    except RunInProgressError as e:
        print(e, flush=True)
        return 4
    except GraphRuntimeError as e:
        print(e, flush=True)
        return 3
    finally:
        await persistence.aclose()
    assert run.result is not None
    print('finished', run.result.output, flush=True)
    return 0


def main(argv: list[str]) -> int:
    kind, location, run_id = argv[:3]
    go_file = argv[3] if len(argv) > 3 else None
    return anyio.run(resume, kind, location, run_id, go_file)


if __name__ == '__main__':
    raise SystemExit(main(sys.argv[1:]))

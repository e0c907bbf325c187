"""A process whose store stops accepting writes in the middle of a node:
`python -m tests.graph.persistence._store_fault_worker DB RUN_ID`.

The run `RUN_ID` in the SQLite file `DB` must be waiting at `Grow`. While `Grow` runs, the process forbids
itself to write any file (`RLIMIT_FSIZE` of 0, as a full disk would): storing the next snapshot fails, and so
does every write after it, releasing the run included. The process then prints `refused: <error>` and stays
alive until its standard input closes, so that a test can resume the run from another process meanwhile.
"""

from __future__ import annotations

import resource
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass

import anyio

from edgewise.graph import BaseNode, End, Graph, GraphRunContext
from edgewise.graph.exceptions import PersistenceError
from edgewise.graph.persistence.sqlite import SqliteStatePersistence

_forbid_writes = False
"""Set in the worker process only: a test process that resumes the run runs `Grow` normally."""

during_grow: list[Callable[[], object]] = []
"""What a test makes happen while `Grow` runs (in the test's own process)."""


@dataclass
class Grow(BaseNode[list[str], None, int]):
    async def run(self, ctx: GraphRunContext[list[str]]) -> Done:
        ctx.state.append('grow')
        while during_grow:
            during_grow.pop()()
        if _forbid_writes:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a refused write is an error, not a signal
            resource.setrlimit(resource.RLIMIT_FSIZE, (0, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
        return Done()


@dataclass
class Done(BaseNode[list[str], None, int]):
    async def run(self, ctx: GraphRunContext[list[str]]) -> End[int]:
        ctx.state.append('done')
        return End(len(ctx.state))


fault_graph = Graph(nodes=(Grow, Done), name='fault_graph')


async def main(db: str, run_id: str) -> None:
    global _forbid_writes
    _forbid_writes = True
    persistence = SqliteStatePersistence(db, run_id)
    try:
        async with fault_graph.iter_from_persistence(persistence) as run:
            async for _ in run:
                pass
    except PersistenceError as e:
        print(f'refused: {e}', flush=True)
    else:  # pragma: no cover - the fault did not happen
        print('finished', flush=True)
    await anyio.to_thread.run_sync(sys.stdin.read)


if __name__ == '__main__':
    anyio.run(main, sys.argv[1], sys.argv[2])

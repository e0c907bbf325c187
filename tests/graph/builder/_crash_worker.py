"""A process that runs (or resumes) a durable builder run: `python -m tests.graph.builder._crash_worker MODE KIND
LOCATION LOG`.

The graph maps `work` over 0..ITEMS-1 and sums the squares in a join. `work` logs `start i` and `end i` to LOG
(one `os.write` each, so a SIGKILL loses nothing written). In `start` mode the items from HALF up never finish
(they wait to be killed); in `resume` mode the run is resumed from the store and every item finishes; the output
is printed.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any

import anyio

from edgewise.graph.builder import GraphBuilder, StepContext, reduce_sum
from edgewise.graph.persistence.file import FileStatePersistence
from edgewise.graph.persistence.postgres import PostgresStatePersistence
from edgewise.graph.persistence.sqlite import SqliteStatePersistence
from edgewise.graph.persistence.store import DurableStatePersistence

ITEMS = 50
HALF = 25
RUN_ID = 'builder-crash'


@dataclass
class Done:
    finished: int = 0


def build(log: str, block: bool) -> Any:
    g = GraphBuilder(state_type=Done, input_type=list[int], output_type=int)

    def note(text: str) -> None:
        fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(fd, f'{text}\n'.encode())
        finally:
            os.close(fd)

    @g.step
    async def work(ctx: StepContext[Done, None, int]) -> int:
        note(f'start {ctx.inputs}')
        if block and ctx.inputs >= HALF:
            await anyio.sleep_forever()
        ctx.state.finished += 1
        note(f'end {ctx.inputs}')
        return ctx.inputs * ctx.inputs

    total = g.join(reduce_sum, initial=0, node_id='total')
    g.add(g.edge_from(g.start_node).map().to(work), g.edge_from(work).to(total), g.edge_from(total).to(g.end_node))
    return g.build()


def open_store(kind: str, location: str) -> DurableStatePersistence[Any, Any]:
    if kind == 'file':
        return FileStatePersistence(location)
    if kind == 'sqlite':
        return SqliteStatePersistence(location, RUN_ID)
    return PostgresStatePersistence(location, RUN_ID)


async def main(mode: str, kind: str, location: str, log: str) -> None:
    graph = build(log, block=mode == 'start')
    persistence = open_store(kind, location)
    try:
        if mode == 'start':
            print(await graph.run(state=Done(), inputs=list(range(ITEMS)), persistence=persistence), flush=True)
        else:
            async with graph.iter_from_persistence(persistence) as run:
                async for _ in run:
                    pass
            print(run.output, run.state.finished, flush=True)
    finally:
        await persistence.aclose()


if __name__ == '__main__':
    mode, kind, location, log = sys.argv[1:5]
    anyio.run(main, mode, kind, location, log)

"""A builder graph killed at a chosen point, and a process that starts or resumes it durably:
`python -m tests.graph.builder._crash_points MODE POINT KIND LOCATION LOG`.

The graph maps over 0..ITEMS-1. The step `square` squares each item; the decision `parity` sends even squares
straight to the join `total` (`reduce_sum`) and odd ones to the `BaseNode` `OddNode`, which hands them to it.
Every piece of user code logs to LOG with one `os.write` per line (a SIGKILL loses nothing written):
`square start n` / `square end n`, `decide v` (the decision's predicate), `node start v` / `node end v`.
The state counts squares started (before they may block) and finished (after).

POINT says where the `start` process stops for good, to be killed (nothing blocks in `resume` mode or when
POINT is `none`):

- `map`: every `square` of an item from HALF up, after logging its start (mid fan-out);
- `decision`: inside the predicate of the decision for KEY's square, after logging it; in a durable run,
  `square` of KEY first waits until every other item is reduced (so everything else is stored by then);
- `node`: inside `OddNode.run` for KEY's square, after logging its start.

The graph is also run on DBOS by tests/graph/dbos (there, POINT comes from `EDGEWISE_CRASH_POINT` and LOG from
`EDGEWISE_CRASH_LOG`, read when the code runs).
"""

from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass
from typing import Annotated, Any

import anyio

from edgewise.graph.builder import BaseNode, GraphBuilder, GraphRunContext, StepContext
from edgewise.graph.builder.join import JoinNode
from edgewise.graph.persistence.file import FileStatePersistence
from edgewise.graph.persistence.postgres import PostgresStatePersistence
from edgewise.graph.persistence.sqlite import SqliteStatePersistence
from edgewise.graph.persistence.store import DurableStatePersistence

ITEMS = 50
HALF = 25
KEY = 31  # odd: its square goes through the decision's second branch and `OddNode`
RUN_ID = 'builder-crash-points'
EXPECTED = sum(i * i for i in range(ITEMS))


@dataclass
class Counts:
    started: int = 0
    finished: int = 0


class Crash:
    """What lets `square` of KEY go on in a durable run killed in the decision (every other item reduced)."""

    reduced = 0
    others_reduced: anyio.Event | None = None


def point() -> str:
    return os.environ.get('EDGEWISE_CRASH_POINT', 'none')


def note(text: str) -> None:
    fd = os.open(os.environ['EDGEWISE_CRASH_LOG'], os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, f'{text}\n'.encode())
    finally:
        os.close(fd)


def block_for_good() -> None:
    """Stop this process's progress here, synchronously (the whole event loop with it), until it is killed."""
    threading.Event().wait()


def is_even(value: int) -> bool:
    note(f'decide {value}')
    if point() == 'decision' and value == KEY * KEY:
        block_for_good()
    return value % 2 == 0


def summed(current: int, inputs: int) -> int:
    Crash.reduced += 1
    if Crash.others_reduced is not None and Crash.reduced == ITEMS - 1:
        Crash.others_reduced.set()
    return current + inputs


g = GraphBuilder(state_type=Counts, input_type=list[int], output_type=int)


@g.step
async def square(ctx: StepContext[Counts, None, int]) -> int:
    n = ctx.inputs
    note(f'square start {n}')
    ctx.state.started += 1
    if point() == 'map' and n >= HALF:
        await anyio.sleep_forever()
    if n == KEY and Crash.others_reduced is not None:
        await Crash.others_reduced.wait()
    ctx.state.finished += 1
    note(f'square end {n}')
    return n * n


total = g.join(summed, initial=0, node_id='total')


@dataclass
class OddNode(BaseNode[Counts, None, Any]):
    """Odd squares go through a `BaseNode`, which hands them to the join."""

    value: int

    async def run(self, ctx: GraphRunContext[Counts, None]) -> Annotated[JoinNode[Counts, None], total]:
        note(f'node start {self.value}')
        if point() == 'node' and self.value == KEY * KEY:
            await anyio.sleep_forever()
        note(f'node end {self.value}')
        return total.as_node(self.value)


parity = (
    g.decision(node_id='parity')
    .branch(g.match(int, matches=is_even).to(total))
    .branch(g.match(int).transform(lambda ctx: OddNode(ctx.inputs)).to(OddNode))
)
g.add(
    g.edge_from(g.start_node).map().to(square),
    g.edge_from(square).to(parity),
    g.node(OddNode),
    g.edge_from(total).to(g.end_node),
)
graph = g.build()


def open_store(kind: str, location: str) -> DurableStatePersistence[Any, Any]:
    if kind == 'file':
        return FileStatePersistence(location)
    if kind == 'sqlite':
        return SqliteStatePersistence(location, RUN_ID)
    return PostgresStatePersistence(location, RUN_ID)


async def main(mode: str, crash_point: str, kind: str, location: str) -> None:
    os.environ['EDGEWISE_CRASH_POINT'] = crash_point if mode == 'start' else 'none'
    if point() == 'decision':
        Crash.others_reduced = anyio.Event()
    persistence = open_store(kind, location)
    try:
        if mode == 'start':
            output = await graph.run(state=Counts(), inputs=list(range(ITEMS)), persistence=persistence)
            print(output, flush=True)
        else:
            async with graph.iter_from_persistence(persistence) as run:
                async for _ in run:
                    pass
            print(run.output, run.state.started, run.state.finished, flush=True)
    finally:
        await persistence.aclose()


if __name__ == '__main__':
    mode, crash_point, kind, location, log = sys.argv[1:6]
    os.environ['EDGEWISE_CRASH_LOG'] = log
    anyio.run(main, mode, crash_point, kind, location)

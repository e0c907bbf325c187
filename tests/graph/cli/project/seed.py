"""Fill `runs.db` with runs in every state, with predictable snapshot ids: `python seed.py`."""

from __future__ import annotations

import contextlib
import itertools

import anyio
from flows import Doc, Draft, Explode, Tick, Ticks, failing_graph, review_graph, ticks_graph  # type: ignore[import-not-found,unused-ignore]

import edgewise.graph.nodes
from edgewise.graph.persistence.sqlite import SqliteStatePersistence

_counter = itertools.count(1)


def _snapshot_id(node_id: str) -> str:
    return f'{node_id}:{next(_counter):04d}'


edgewise.graph.nodes.generate_snapshot_id = _snapshot_id


async def main() -> None:
    done = SqliteStatePersistence('runs.db', 'run-done')
    await review_graph.run(Draft(), state=Doc(title='Notes'), persistence=done)

    partial = SqliteStatePersistence('runs.db', 'run-partial')
    async with review_graph.iter(Draft(), state=Doc(title='Plan'), persistence=partial) as run:
        node = run.next_node
        for _ in range(3):
            node = await run.next(node)

    failed = SqliteStatePersistence('runs.db', 'run-failed')
    with contextlib.suppress(RuntimeError):
        await failing_graph.run(Explode(), state=Ticks(), persistence=failed)

    ticks = SqliteStatePersistence('runs.db', 'run-ticks')
    await ticks_graph.initialize(Tick(), ticks, state=Ticks())
    for persistence in (done, partial, failed, ticks):
        persistence.close()


anyio.run(main)

"""`SimpleStatePersistence` and `FullStatePersistence`: history, statuses, JSON round trip, resuming a run."""

from __future__ import annotations

import json
from dataclasses import dataclass

import anyio

from edgewise.graph import BaseNode, End, FullStatePersistence, Graph, GraphRunContext, SimpleStatePersistence
from edgewise.graph.persistence import EndSnapshot, NodeSnapshot


@dataclass
class Steps:
    taken: int = 0


@dataclass
class Walk(BaseNode[Steps, None, int]):
    stride: int

    async def run(self, ctx: GraphRunContext[Steps]) -> Walk | Rest:
        ctx.state.taken += self.stride
        if ctx.state.taken >= 6:
            return Rest()
        return Walk(stride=self.stride + 1)


@dataclass
class Rest(BaseNode[Steps, None, int]):
    async def run(self, ctx: GraphRunContext[Steps]) -> End[int]:
        return End(ctx.state.taken)


walk_graph = Graph(nodes=(Walk, Rest))


async def main() -> None:
    full = FullStatePersistence()
    result = await walk_graph.run(Walk(stride=1), state=Steps(), persistence=full)
    print(result.output, result.persistence is full)
    for snapshot in full.history:
        print(type(snapshot).__name__, snapshot.kind, snapshot.state, snapshot.node, end=' ')
        if isinstance(snapshot, NodeSnapshot):
            timed = snapshot.start_ts is not None, snapshot.duration is not None
            print(snapshot.status, snapshot.id.split(':')[0], timed)
        else:
            assert isinstance(snapshot, EndSnapshot)
            print(snapshot.result, snapshot.id.split(':')[0])
    print(full.history[0])

    dumped = full.dump_json(indent=2)
    print(dumped.decode())
    print(sorted(json.loads(dumped)[0]), sorted(json.loads(dumped)[-1]))

    loaded = FullStatePersistence()
    loaded.set_graph_types(walk_graph)
    loaded.load_json(dumped)
    print(loaded.history == full.history)
    print([s.node for s in await loaded.load_all()])

    simple = SimpleStatePersistence()
    await walk_graph.run(Walk(stride=5), state=Steps(), persistence=simple)
    print(simple.last_snapshot)

    # stop after two steps, then resume from the persistence
    paused = FullStatePersistence()
    async with walk_graph.iter(Walk(stride=1), state=Steps(), persistence=paused) as run:
        await run.next()
        await run.next()
    print([(s.node, s.status) for s in paused.history if isinstance(s, NodeSnapshot)])
    async with walk_graph.iter_from_persistence(paused) as run:
        print('resumed at', run.next_node, run.state)
        async for node in run:
            print('  ', node)
    print(run.result)
    print([(type(s).__name__, getattr(s, 'status', None)) for s in paused.history])

    # initialize, then iter_from_persistence runs it
    fresh = FullStatePersistence()
    await walk_graph.initialize(Walk(stride=4), fresh, state=Steps(taken=1))
    print([(s.node, s.status, s.state) for s in fresh.history if isinstance(s, NodeSnapshot)])
    async with walk_graph.iter_from_persistence(fresh) as run:
        async for _ in run:
            pass
    print(run.result)

    # a finished run has nothing left to resume
    try:
        async with walk_graph.iter_from_persistence(fresh) as run:
            pass
    except Exception as error:
        print(type(error).__name__, isinstance(error, Exception))

    # deep_copy=False keeps references to the live state
    shallow = FullStatePersistence(deep_copy=False)
    state = Steps()
    await walk_graph.run(Walk(stride=3), state=state, persistence=shallow)
    print(all(s.state is state for s in shallow.history))
    print(all(s.state is not state for s in full.history))


anyio.run(main)

"""One step per invocation: `initialize`, then `iter_from_persistence` + `GraphRun.next()` on a fresh
`FileStatePersistence` each time, until the run ends; then the history, read back."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import anyio

from edgewise.graph import BaseNode, End, Graph, GraphRunContext
from edgewise.graph.persistence.file import FileStatePersistence


@dataclass
class Launch:
    seconds: int


@dataclass
class Tick(BaseNode[Launch, None, str]):
    async def run(self, ctx: GraphRunContext[Launch]) -> Tick | Liftoff:
        ctx.state.seconds -= 1
        return Liftoff() if ctx.state.seconds == 0 else Tick()


@dataclass
class Liftoff(BaseNode[Launch, None, str]):
    async def run(self, ctx: GraphRunContext[Launch]) -> End[str]:
        return End('liftoff')


launch_graph = Graph(nodes=(Tick, Liftoff))


async def one_step(path: Path) -> bool:
    persistence = FileStatePersistence(path)
    async with launch_graph.iter_from_persistence(persistence) as run:
        node = await run.next()
    print('step ->', node, run.state)
    return isinstance(node, End)


async def main() -> None:
    path = Path('launch.json')
    await launch_graph.initialize(Tick(), state=Launch(seconds=3), persistence=FileStatePersistence(path))
    while not await one_step(path):
        reader = FileStatePersistence(path)
        reader.set_graph_types(launch_graph)
        print('   statuses:', [getattr(s, 'status', 'end') for s in await reader.load_all()])
    reader = FileStatePersistence(path)
    reader.set_graph_types(launch_graph)
    for snapshot in await reader.load_all():
        print(snapshot.kind, snapshot.node, snapshot.state, getattr(snapshot, 'status', '-'))
    try:
        async with launch_graph.iter_from_persistence(reader):
            pass
    except Exception as error:
        print('after the end:', type(error).__name__)


anyio.run(main)

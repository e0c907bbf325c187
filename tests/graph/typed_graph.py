"""Static checks of the generics of `Graph`, `GraphRun`, `GraphRunResult` and `BaseNode` (mypy only; never run).

The name does not start with `test_`, so pytest does not collect it; `make typecheck` checks it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import assert_type

from edgewise.graph import (
    BaseNode,
    End,
    FullStatePersistence,
    Graph,
    GraphRun,
    GraphRunContext,
    GraphRunResult,
    NodeSnapshot,
    Snapshot,
)


@dataclass
class State:
    count: int


@dataclass
class Deps:
    limit: int


@dataclass
class Step(BaseNode[State, Deps, str]):
    async def run(self, ctx: GraphRunContext[State, Deps]) -> Step | End[str]:
        assert_type(ctx.state, State)
        assert_type(ctx.deps, Deps)
        if ctx.state.count >= ctx.deps.limit:
            return End('done')
        ctx.state.count += 1
        return Step()


@dataclass
class NoState(BaseNode[None, None, None]):
    async def run(self, ctx: GraphRunContext) -> End[None]:
        assert_type(ctx.state, None)
        assert_type(ctx.deps, None)
        return End(None)


typed_graph = Graph(nodes=(Step,))
assert_type(typed_graph, Graph[State, Deps, str])
assert_type(Graph(nodes=(NoState,)), Graph[None, None, None])
assert_type(typed_graph.inferred_types, tuple[type[State], type[str]])


async def run_it() -> None:
    result = await typed_graph.run(Step(), state=State(0), deps=Deps(3))
    assert_type(result, GraphRunResult[State, str])
    assert_type(result.output, str)
    assert_type(result.state, State)

    persistence = FullStatePersistence[State, str]()
    async with typed_graph.iter(Step(), state=State(0), deps=Deps(3), persistence=persistence) as run:
        assert_type(run, GraphRun[State, Deps, str])
        assert_type(run.next_node, BaseNode[State, Deps, str] | End[str])
        async for node in run:
            assert_type(node, BaseNode[State, Deps, str] | End[str])
        assert_type(await run.next(Step()), BaseNode[State, Deps, str] | End[str])
        assert_type(run.result, GraphRunResult[State, str] | None)
        assert_type(run.state, State)

    async with typed_graph.iter_from_persistence(persistence, deps=Deps(3)) as resumed:
        assert_type(resumed, GraphRun[State, Deps, str])

    history = await persistence.load_all()
    assert_type(history, list[Snapshot[State, str]])
    assert_type(await persistence.load_next(), NodeSnapshot[State, str] | None)


def run_it_sync() -> None:
    assert_type(typed_graph.run_sync(Step(), state=State(0), deps=Deps(1)), GraphRunResult[State, str])
    assert_type(End(3).data, int)

"""Fan-outs and streamed runs.

- a fan-out of 100 branches and a join (each branch squares its item, the join sums): Edgewise `Fork` against
  LangGraph's `Send` on the same work, both in memory, both async;
- a streamed run (`Graph.stream`, every event consumed) against a plain `Graph.run` of the same 3-node cycle,
  per transition.
"""

from __future__ import annotations

import importlib
import operator
from dataclasses import dataclass
from typing import Annotated, Any, TypedDict

from anyio.lowlevel import checkpoint

from benchmarks._harness import Case, Result, measure_async, report
from edgewise.graph import BaseNode, End, Fork, Graph, GraphRunContext

BRANCHES = 100
FANOUT_RUNS = 20
CYCLE = 5_000


# --- Edgewise fan-out ---------------------------------------------------------------------------------------


@dataclass
class Square(BaseNode[None, None, int]):
    item: int

    async def run(self, ctx: GraphRunContext) -> End[int]:
        return End(self.item * self.item)


@dataclass
class Total(BaseNode[None, None, int]):
    results: list[int]

    async def run(self, ctx: GraphRunContext) -> End[int]:
        return End(sum(self.results))


@dataclass
class Scatter(BaseNode[None, None, int]):
    async def run(self, ctx: GraphRunContext) -> Fork[Square, Total]:
        return Fork.map(Square, range(BRANCHES), join=Total)


edgewise_fanout = Graph(nodes=(Scatter, Square, Total), name='fanout')
EXPECTED = sum(i * i for i in range(BRANCHES))


def _edgewise_fanout() -> Any:
    async def run() -> None:
        for _ in range(FANOUT_RUNS):
            result = await edgewise_fanout.run(Scatter())
            assert result.output == EXPECTED

    return run


# --- LangGraph Send -----------------------------------------------------------------------------------------

_lg: Any = importlib.import_module('langgraph.graph')
Send: Any = importlib.import_module('langgraph.types').Send


class LgState(TypedDict):
    items: list[int]
    squares: Annotated[list[int], operator.add]
    total: int


class LgItem(TypedDict):
    item: int


async def lg_square(state: LgItem) -> dict[str, list[int]]:
    return {'squares': [state['item'] * state['item']]}


async def lg_total(state: LgState) -> dict[str, int]:
    return {'total': sum(state['squares'])}


def lg_scatter(state: LgState) -> list[Any]:
    return [Send('square', {'item': item}) for item in state['items']]


def _langgraph_fanout() -> Any:
    builder = _lg.StateGraph(LgState)
    builder.add_node('square', lg_square)
    builder.add_node('total', lg_total)
    builder.add_conditional_edges(_lg.START, lg_scatter, ['square'])
    builder.add_edge('square', 'total')
    builder.add_edge('total', _lg.END)
    graph = builder.compile()

    async def run() -> None:
        for _ in range(FANOUT_RUNS):
            out = await graph.ainvoke({'items': list(range(BRANCHES)), 'squares': [], 'total': 0})
            assert out['total'] == EXPECTED

    return run


# --- streamed against plain -----------------------------------------------------------------------------------


@dataclass
class Loop:
    remaining: int


@dataclass
class A(BaseNode[Loop, None, int]):
    async def run(self, ctx: GraphRunContext[Loop]) -> B | End[int]:
        ctx.state.remaining -= 1
        return End(0) if ctx.state.remaining <= 0 else B()


@dataclass
class B(BaseNode[Loop, None, int]):
    async def run(self, ctx: GraphRunContext[Loop]) -> C | End[int]:
        ctx.state.remaining -= 1
        return End(0) if ctx.state.remaining <= 0 else C()


@dataclass
class C(BaseNode[Loop, None, int]):
    async def run(self, ctx: GraphRunContext[Loop]) -> A | End[int]:
        ctx.state.remaining -= 1
        return End(0) if ctx.state.remaining <= 0 else A()


cycle = Graph(nodes=(A, B, C), name='cycle')


@dataclass
class Io(BaseNode[Loop, None, int]):
    """A node that waits on something, as a node doing I/O does: one checkpoint of the event loop."""

    async def run(self, ctx: GraphRunContext[Loop]) -> Io | End[int]:
        await checkpoint()
        ctx.state.remaining -= 1
        return End(0) if ctx.state.remaining <= 0 else Io()


io_cycle = Graph(nodes=(Io,), name='io_cycle')


def _plain(graph: Graph[Loop, None, int], start: BaseNode[Loop, None, int]) -> Any:
    async def run() -> None:
        result = await graph.run(start, state=Loop(CYCLE))
        assert result.state.remaining == 0

    return run


def _streamed(graph: Graph[Loop, None, int], start: BaseNode[Loop, None, int]) -> Any:
    async def run() -> None:
        count = 0
        async with graph.stream(start, state=Loop(CYCLE)) as events:
            async for _ in events:
                count += 1
        assert count == 2 * CYCLE + 1  # started and finished per step, and the end

    return run


def _target(result: Result, name: str, anchor: str, limit: float) -> None:
    ratio = result.ratio(name, anchor)
    verdict = 'ok' if ratio <= limit else 'MISSED'
    result.notes.append(f'{name} / {anchor} = {ratio:.3f}x (target <= {limit}x): {verdict}')


def bench_fanout() -> None:
    result = measure_async(
        f'fan-out of {BRANCHES} branches and a join, {FANOUT_RUNS} runs',
        'fan-out',
        [
            Case('edgewise Fork', _edgewise_fanout(), FANOUT_RUNS),
            Case('langgraph Send', _langgraph_fanout(), FANOUT_RUNS),
        ],
    )
    _target(result, 'edgewise Fork', 'langgraph Send', 0.2)
    print(report(result, anchor='langgraph Send'), flush=True)


def bench_stream() -> None:
    result = measure_async(
        f'3-node cycle, {CYCLE:,} transitions: streamed (every event read) vs plain run',
        'transition',
        [Case('plain run', _plain(cycle, A()), CYCLE), Case('streamed run', _streamed(cycle, A()), CYCLE)],
        repeats=7,
    )
    _target(result, 'streamed run', 'plain run', 1.3)
    print(report(result, anchor='plain run'), flush=True)
    print()
    result = measure_async(
        f'a node with one event-loop checkpoint, {CYCLE:,} transitions: streamed vs plain run',
        'transition',
        [Case('plain run', _plain(io_cycle, Io()), CYCLE), Case('streamed run', _streamed(io_cycle, Io()), CYCLE)],
        repeats=7,
    )
    _target(result, 'streamed run', 'plain run', 1.3)
    print(report(result, anchor='plain run'), flush=True)


def main() -> None:
    """Print the two tables."""
    bench_fanout()
    print()
    bench_stream()


if __name__ == '__main__':
    main()

# mypy: disable-error-code="import-not-found, untyped-decorator, misc, unused-ignore"
"""Builder graphs (`edgewise.graph.builder`) against pydantic-graph 2.x (the `bench2` group), issue 29's targets.

- a builder step in memory: a loop of three steps and a decision (`a -> b -> c -> decision -> a | end`), per
  step (target <= 0.2x of pydantic-graph 2.x);
- a `.map()` fan-out of 100 items into a step, joined with `reduce_sum`, per fan-out (target <= 0.3x);
- a durable builder step on SQLite (the same loop, its progress committed after every step) against a
  LangGraph `SqliteSaver` transition of the same three-node cycle (as in `bench_persistence`), per step
  (target <= 0.1x of LangGraph);
- Python memory per run in flight (tracemalloc): 1,000 runs of `start -> wait -> end`, all parked in `wait`
  (target <= 0.5x of pydantic-graph 2.x).

The same graph code builds both contenders: `edgewise.graph.builder` and `pydantic_graph` export the same
names.
"""

from __future__ import annotations

import gc
import importlib
import os
import sqlite3
import tempfile
import tracemalloc
from pathlib import Path
from typing import Any, TypedDict

import anyio

from benchmarks._harness import Case, Result, measure, report

CYCLES = 100
"""Loop iterations per run: 3 steps each."""
FAN_OUT = 100
DURABLE_CYCLES = 50
IN_FLIGHT = 1000
PACKAGES = {'pydantic-graph 2.x': 'pydantic_graph', 'edgewise builder': 'edgewise.graph.builder'}
EDGEWISE = 'edgewise builder'
ANCHOR = 'pydantic-graph 2.x'


def loop_graph(package: str, limit: int) -> Any:
    """`a -> b -> c -> decision`, back to `a` until the count reaches `limit`, then to the end."""
    module: Any = importlib.import_module(package)
    g = module.GraphBuilder(input_type=int, output_type=int)

    @g.step
    async def a(ctx: Any) -> int:
        return ctx.inputs + 1  # type: ignore[no-any-return]

    @g.step
    async def b(ctx: Any) -> int:
        return ctx.inputs  # type: ignore[no-any-return]

    @g.step
    async def c(ctx: Any) -> int:
        return ctx.inputs  # type: ignore[no-any-return]

    route = g.decision().branch(g.match(int, matches=lambda n: n < limit).to(a)).branch(g.match(int).to(g.end_node))
    g.add(g.edge_from(g.start_node).to(a), g.edge_from(a).to(b), g.edge_from(b).to(c), g.edge_from(c).to(route))
    return g.build()


def map_graph(package: str) -> Any:
    """`start -map-> square -> join(reduce_sum) -> end`."""
    module: Any = importlib.import_module(package)
    g = module.GraphBuilder(input_type=list[int], output_type=int)

    @g.step
    async def square(ctx: Any) -> int:
        return ctx.inputs * ctx.inputs  # type: ignore[no-any-return]

    total = g.join(module.reduce_sum, initial=0)
    g.add(g.edge_from(g.start_node).map().to(square), g.edge_from(square).to(total), g.edge_from(total).to(g.end_node))
    return g.build()


def loop_run(package: str) -> Any:
    graph = loop_graph(package, CYCLES)

    async def run() -> None:
        assert await graph.run(inputs=0) == CYCLES

    return run


def map_run(package: str) -> Any:
    graph = map_graph(package)
    items = list(range(FAN_OUT))
    expected = sum(i * i for i in items)

    async def run() -> None:
        assert await graph.run(inputs=items) == expected

    return run


# --- durable: Edgewise SQLite against LangGraph's SqliteSaver ----------------------------------------------


def edgewise_durable_run(db: Path) -> Any:
    from edgewise.graph.persistence.sqlite import SqliteStatePersistence

    graph = loop_graph('edgewise.graph.builder', DURABLE_CYCLES)

    async def run() -> None:
        persistence = SqliteStatePersistence(db)
        try:
            assert await graph.run(inputs=0, persistence=persistence) == DURABLE_CYCLES
        finally:
            persistence.close()

    return run


class LgState(TypedDict):
    n: int
    limit: int


def langgraph_run(db: Path) -> Any:
    saver: Any = importlib.import_module('langgraph.checkpoint.sqlite').SqliteSaver
    lg: Any = importlib.import_module('langgraph.graph')

    def route(state: LgState) -> str:
        return lg.END if state['n'] >= state['limit'] else 'a'  # type: ignore[no-any-return]

    builder = lg.StateGraph(LgState)
    builder.add_node('a', lambda state: {'n': state['n'] + 1})
    builder.add_node('b', lambda state: {})
    builder.add_node('c', lambda state: {})
    builder.add_edge(lg.START, 'a')
    builder.add_edge('a', 'b')
    builder.add_edge('b', 'c')
    builder.add_conditional_edges('c', route)

    def run() -> None:
        conn = sqlite3.connect(db, check_same_thread=False)
        try:
            graph = builder.compile(checkpointer=saver(conn))
            config: Any = {'configurable': {'thread_id': os.urandom(6).hex()}, 'recursion_limit': 100_000}
            assert graph.invoke({'n': 0, 'limit': DURABLE_CYCLES}, config)['n'] == DURABLE_CYCLES
        finally:
            conn.close()

    return run


# --- memory per run in flight ------------------------------------------------------------------------------


def memory_per_run(package: str) -> float:
    """Bytes of Python memory per run parked in a step, `IN_FLIGHT` runs at once."""
    module: Any = importlib.import_module(package)
    g = module.GraphBuilder(input_type=int, output_type=int)
    arrived = [0]
    events: dict[str, anyio.Event] = {}

    @g.step
    async def wait(ctx: Any) -> int:
        if 'release' not in events:
            return ctx.inputs  # type: ignore[no-any-return]  # the warm-up run
        arrived[0] += 1
        if arrived[0] == IN_FLIGHT:
            events['all_in'].set()
        await events['release'].wait()
        return ctx.inputs  # type: ignore[no-any-return]

    g.add(g.edge_from(g.start_node).to(wait), g.edge_from(wait).to(g.end_node))
    graph = g.build()
    in_flight = [0.0]

    async def main() -> None:
        await graph.run(inputs=0)  # warm caches (validators, names) outside the measure
        release = events['release'] = anyio.Event()
        all_in = events['all_in'] = anyio.Event()
        gc.collect()
        tracemalloc.start()
        baseline = tracemalloc.get_traced_memory()[0]
        async with anyio.create_task_group() as group:
            for i in range(IN_FLIGHT):
                group.start_soon(lambda i=i: graph.run(inputs=i))
            await all_in.wait()
            gc.collect()
            in_flight[0] = (tracemalloc.get_traced_memory()[0] - baseline) / IN_FLIGHT
            tracemalloc.stop()
            release.set()

    anyio.run(main)
    return in_flight[0]


def _cases(make: Any, units: int) -> list[Case]:
    return [Case(name, make(package), units, True) for name, package in PACKAGES.items()]


def _line(result: Result, name: str, anchor: str, target: float) -> str:
    ratio = result.ratio(name, anchor)
    return f'  => {name}: {ratio:.3f}x {anchor} (target <= {target}x): {"met" if ratio <= target else "MISSED"}'


def main() -> None:
    steps = measure('builder loop in memory (a -> b -> c -> decision)', 'step', _cases(loop_run, CYCLES * 3))
    print(report(steps, anchor=ANCHOR), flush=True)
    print(_line(steps, EDGEWISE, ANCHOR, 0.2), flush=True)

    fan_out = measure(f'.map() of {FAN_OUT} items into a step, joined with reduce_sum', 'fan-out', _cases(map_run, 1))
    print(report(fan_out, anchor=ANCHOR), flush=True)
    print(_line(fan_out, EDGEWISE, ANCHOR, 0.3), flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        durable = measure(
            'durable step on SQLite, committed before the next step',
            'step',
            [
                Case(
                    'edgewise builder SqliteStatePersistence',
                    edgewise_durable_run(directory / 'ew.db'),
                    DURABLE_CYCLES * 3,
                    True,
                ),
                Case('langgraph SqliteSaver', langgraph_run(directory / 'lg.db'), DURABLE_CYCLES * 3),
            ],
        )
    print(report(durable, anchor='langgraph SqliteSaver'), flush=True)
    print(_line(durable, 'edgewise builder SqliteStatePersistence', 'langgraph SqliteSaver', 0.1), flush=True)

    memory = Result(f'Python memory per run in flight ({IN_FLIGHT} runs parked in a step)', 'run')
    for name, package in PACKAGES.items():
        memory.per_unit[name] = memory_per_run(package) * 1e-6  # shown by `report` as time: print bytes below
    lines = [f'## {memory.title}']
    lines += [f'  {name:<44} {value * 1e6 / 1024:9.1f} KiB' for name, value in memory.per_unit.items()]
    print('\n'.join(lines), flush=True)
    print(_line(memory, EDGEWISE, ANCHOR, 0.5), flush=True)

"""Graph engine overhead: Edgewise against pydantic-graph 1.107.10 and a raw loop over the same nodes.

- a 3-node cycle with the default persistence (time per transition);
- the same cycle with `FullStatePersistence` at two history lengths (cost per transition must stay flat);
- memory: 1,000 runs in flight at once, each parked in `anyio.sleep` inside a node (RSS per run, each
  library measured in a fresh subprocess).

The node classes are defined once per library, with the same shape.
"""

from __future__ import annotations

import gc
import importlib
import statistics
import subprocess
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from benchmarks._harness import Case, Result, measure_async, report
from edgewise.graph import BaseNode, End, FullStatePersistence, Graph, GraphRunContext

with warnings.catch_warnings():
    # pydantic-graph 1.107 warns that its classic API is deprecated, on every import of it.
    warnings.simplefilter('ignore')
    _pg: Any = importlib.import_module('pydantic_graph')
    PgBaseNode: Any = _pg.BaseNode
    PgEnd: Any = _pg.End
    PgGraph: Any = _pg.Graph
    PgFullStatePersistence: Any = _pg.FullStatePersistence

CYCLE = 20_000
FULL_SHORT, FULL_LONG = 500, 5_000
IN_FLIGHT = 1_000
ROOT = Path(__file__).parent.parent


@dataclass
class Loop:
    """The state of a cycle run: how many transitions are left."""

    remaining: int


# --- Edgewise nodes --------------------------------------------------------------------------------------------


@dataclass
class EA(BaseNode[Loop, None, int]):
    async def run(self, ctx: GraphRunContext[Loop]) -> EB | End[int]:
        ctx.state.remaining -= 1
        return End(0) if ctx.state.remaining <= 0 else EB()


@dataclass
class EB(BaseNode[Loop, None, int]):
    async def run(self, ctx: GraphRunContext[Loop]) -> EC | End[int]:
        ctx.state.remaining -= 1
        return End(0) if ctx.state.remaining <= 0 else EC()


@dataclass
class EC(BaseNode[Loop, None, int]):
    async def run(self, ctx: GraphRunContext[Loop]) -> EA | End[int]:
        ctx.state.remaining -= 1
        return End(0) if ctx.state.remaining <= 0 else EA()


@dataclass
class Parking:
    """The state shared by the parked runs: how many reached the sleep, and an event once all did."""

    expected: int
    parked: int = 0
    all_parked: anyio.Event = field(default_factory=anyio.Event)

    def arrive(self) -> None:
        self.parked += 1
        if self.parked == self.expected:
            self.all_parked.set()


@dataclass
class EPark(BaseNode[Parking, None, int]):
    async def run(self, ctx: GraphRunContext[Parking]) -> End[int]:
        ctx.state.arrive()
        await anyio.sleep(3600)
        return End(0)  # pragma: no cover - cancelled while asleep


edgewise_cycle = Graph(nodes=(EA, EB, EC), name='cycle')
edgewise_park = Graph(nodes=(EPark,), name='park')

# --- pydantic-graph nodes (same shape) -------------------------------------------------------------------------


@dataclass
class PA(PgBaseNode):  # type: ignore[misc]
    async def run(self, ctx: Any) -> PB | PgEnd[int]:
        ctx.state.remaining -= 1
        return PgEnd(0) if ctx.state.remaining <= 0 else PB()


@dataclass
class PB(PgBaseNode):  # type: ignore[misc]
    async def run(self, ctx: Any) -> PC | PgEnd[int]:
        ctx.state.remaining -= 1
        return PgEnd(0) if ctx.state.remaining <= 0 else PC()


@dataclass
class PC(PgBaseNode):  # type: ignore[misc]
    async def run(self, ctx: Any) -> PA | PgEnd[int]:
        ctx.state.remaining -= 1
        return PgEnd(0) if ctx.state.remaining <= 0 else PA()


@dataclass
class PPark(PgBaseNode):  # type: ignore[misc]
    async def run(self, ctx: Any) -> PgEnd[int]:
        ctx.state.arrive()
        await anyio.sleep(3600)
        return PgEnd(0)  # pragma: no cover


pg_cycle = PgGraph(nodes=[PA, PB, PC], name='cycle')
pg_park = PgGraph(nodes=[PPark], name='park')

# --- timed cases -----------------------------------------------------------------------------------------------


def _edgewise(n: int, full: bool = False, runs: int = 1) -> Any:
    async def run() -> None:
        for _ in range(runs):
            persistence = FullStatePersistence[Loop, int]() if full else None
            result = await edgewise_cycle.run(EA(), state=Loop(n), persistence=persistence)
            assert result.state.remaining == 0

    return run


def _pydantic_graph(n: int, full: bool = False, runs: int = 1) -> Any:
    async def run() -> None:
        for _ in range(runs):
            persistence = PgFullStatePersistence() if full else None
            result = await pg_cycle.run(PA(), state=Loop(n), persistence=persistence)
            assert result.state.remaining == 0

    return run


def _raw(n: int) -> Any:
    async def run() -> None:
        ctx = GraphRunContext(state=Loop(n), deps=None)
        node: BaseNode[Loop, None, int] | End[int] = EA()
        while not isinstance(node, End):
            node = await node.run(ctx)
        assert ctx.state.remaining == 0

    return run


def _target(result: Result, name: str, anchor: str, limit: float, label: str) -> None:
    ratio = result.ratio(name, anchor)
    verdict = 'ok' if ratio <= limit else 'MISSED'
    result.notes.append(f'{name} / {anchor} = {ratio:.3f}x (target <= {limit}x{label}): {verdict}')


def bench_cycle() -> None:
    result = measure_async(
        f'3-node cycle, {CYCLE:,} transitions, default persistence',
        'transition',
        [
            Case('edgewise', _edgewise(CYCLE), CYCLE),
            Case('pydantic-graph 1.107.10', _pydantic_graph(CYCLE), CYCLE),
            Case('raw loop (await node.run)', _raw(CYCLE), CYCLE),
        ],
        repeats=7,
    )
    _target(result, 'edgewise', 'pydantic-graph 1.107.10', 0.2, '')
    _target(result, 'edgewise', 'raw loop (await node.run)', 10, '')
    print(report(result, anchor='pydantic-graph 1.107.10'), flush=True)


def bench_full_history() -> None:
    short_runs = FULL_LONG // FULL_SHORT
    result = measure_async(
        f'3-node cycle with FullStatePersistence, {FULL_SHORT:,} and {FULL_LONG:,} transitions',
        'transition',
        [
            Case(f'edgewise, {FULL_SHORT:,}', _edgewise(FULL_SHORT, full=True, runs=short_runs), FULL_LONG),
            Case(f'edgewise, {FULL_LONG:,}', _edgewise(FULL_LONG, full=True), FULL_LONG),
            Case(
                f'pydantic-graph 1.107.10, {FULL_SHORT:,}',
                _pydantic_graph(FULL_SHORT, full=True, runs=short_runs),
                FULL_LONG,
            ),
            Case(f'pydantic-graph 1.107.10, {FULL_LONG:,}', _pydantic_graph(FULL_LONG, full=True), FULL_LONG),
        ],
        repeats=7,
    )
    result.notes.append(f'each {FULL_SHORT:,}-transition sample is {short_runs} runs, so that samples take as long')
    _target(result, f'edgewise, {FULL_LONG:,}', f'edgewise, {FULL_SHORT:,}', 1.2, ', flat')
    for n in (FULL_SHORT, FULL_LONG):
        _target(result, f'edgewise, {n:,}', f'pydantic-graph 1.107.10, {n:,}', 0.2, '')
    print(report(result), flush=True)


# --- memory ----------------------------------------------------------------------------------------------------


def memory_child(library: str) -> None:
    """In a fresh process: start `IN_FLIGHT` runs that all park inside a node; print RSS bytes per run."""
    import psutil  # type: ignore[import-untyped]

    async def raw_run(state: Parking) -> None:
        await EPark().run(GraphRunContext(state=state, deps=None))

    def start(library: str) -> Any:
        if library == 'edgewise':
            return lambda state: edgewise_park.run(EPark(), state=state)
        if library == 'pydantic-graph':
            return lambda state: pg_park.run(PPark(), state=state)
        return raw_run

    async def park(launch: Any, runs: int) -> float:
        """Start `runs` runs, wait until all sleep inside their node, and return the RSS then."""
        parking = Parking(expected=runs)
        async with anyio.create_task_group() as tg:
            for _ in range(runs):
                tg.start_soon(launch, parking)
            await parking.all_parked.wait()
            gc.collect()
            rss = float(psutil.Process().memory_info().rss)
            tg.cancel_scope.cancel()
        return rss

    async def measure() -> float:
        launch = start(library)
        await park(launch, 1)  # first, so that lazily built things (type hints, caches) do not count
        gc.collect()
        before = float(psutil.Process().memory_info().rss)
        return (await park(launch, IN_FLIGHT) - before) / IN_FLIGHT

    print(anyio.run(measure))


def _memory_in_subprocess(library: str) -> float:
    code = f'from benchmarks.bench_graph import memory_child; memory_child({library!r})'
    done = subprocess.run([sys.executable, '-c', code], cwd=ROOT, capture_output=True, text=True, check=True)
    return float(done.stdout.strip())


def bench_memory(repeats: int = 5) -> None:
    libraries = ['edgewise', 'pydantic-graph', 'raw']
    samples: dict[str, list[float]] = {name: [] for name in libraries}
    for _ in range(repeats):
        for name in libraries:
            samples[name].append(_memory_in_subprocess(name))
    medians = {name: statistics.median(values) for name, values in samples.items()}
    print(f'## memory: {IN_FLIGHT:,} runs in flight, each parked in anyio.sleep inside a node  (RSS per run)')
    for name, value in medians.items():
        line = f'  {name:<44} {value / 1024:9.2f} KB'
        if name != 'pydantic-graph':
            line += f'   {value / medians["pydantic-graph"]:6.3f}x pydantic-graph'
        print(line)
    verdict = 'ok' if medians['edgewise'] <= 8 * 1024 else 'MISSED'
    print(f'  note: edgewise {medians["edgewise"] / 1024:.2f} KB per run (target <= 8 KB): {verdict}', flush=True)


def main() -> None:
    """Print the three tables."""
    bench_cycle()
    print()
    bench_full_history()
    print()
    bench_memory()


if __name__ == '__main__':
    main()

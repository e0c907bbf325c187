"""Diagrams and the `edgewise` command.

- `mermaid_code` of a generated 50-node graph (labelled edges, notes, start and highlighted nodes), Edgewise
  against pydantic-graph 1.107.10 (the same node classes, generated from one template for each library);
- `edgewise runs list` on a SQLite store of 10,000 runs: the whole command as a user runs it (a new process,
  interpreter start-up included), and the listing itself in this process.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
import types
import warnings
from pathlib import Path
from typing import Any

import anyio

from benchmarks._harness import Case, Result, measure, report
from edgewise.graph.persistence.sqlite import SqliteStatePersistence

NODES = 50
CALLS = 500
RUNS = 10_000


def _graph_source(package: str) -> str:
    """A module defining `graph`: 50 nodes, each going to the next, to one further back (labelled), or ending."""
    lines = [
        'from __future__ import annotations',
        'from typing import Annotated',
        f'from {package} import BaseNode, Edge, End, Graph, GraphRunContext',
    ]
    for i in range(NODES):
        nxt, back = (i + 1) % NODES, (i * 7 + 3) % NODES
        doc = (
            f'    """Step {i} of the pipeline.\n\n    It checks things."""\n    docstring_notes = True\n'
            if i % 5 == 0
            else ''
        )
        lines.append(
            f'class N{i}(BaseNode[None, None, int]):\n{doc}'
            f'    async def run(self, ctx: GraphRunContext) -> (\n'
            f'        N{nxt} | Annotated[N{back}, Edge(label="retry {i}")] | Annotated[End[int], Edge(label="done")]\n'
            f'    ):\n'
            f'        return End({i})\n'
        )
    lines.append(f'graph = Graph(nodes=[{", ".join(f"N{i}" for i in range(NODES))}], name="pipeline")')
    return '\n'.join(lines)


def _load(package: str) -> Any:
    module = types.ModuleType(f'_bench_mermaid_{package.replace(".", "_")}')
    sys.modules[module.__name__] = module
    with warnings.catch_warnings():
        # pydantic-graph 1.107 warns that its classic API is deprecated, on every import of it.
        warnings.simplefilter('ignore')
        exec(compile(_graph_source(package), module.__name__, 'exec'), module.__dict__)
    return module.graph


def _code_case(name: str, graph: Any) -> Case:
    def draw() -> None:
        for _ in range(CALLS):
            graph.mermaid_code(start_node=['N0', 'N25'], highlighted_nodes=['N3', 'N7', 'N42'], infer_name=False)

    return Case(name, draw, units=CALLS)


def bench_mermaid_code() -> Result:
    ours, theirs = _load('edgewise.graph'), _load('pydantic_graph')
    assert ours.mermaid_code(infer_name=False) == theirs.mermaid_code(infer_name=False)
    cases = [_code_case('pydantic-graph 1.107.10', theirs), _code_case('edgewise', ours)]
    result = measure(f'mermaid_code, {NODES}-node graph', 'diagram', cases, repeats=15)
    return result


async def _fill_store(path: Path) -> None:
    """A finished run of a one-node graph, and 9,999 forks of it (one transaction each, on one connection)."""
    module = types.ModuleType('_bench_runs')
    exec(
        compile(
            'from __future__ import annotations\n'
            'from dataclasses import dataclass\n'
            'from edgewise.graph import BaseNode, End, Graph, GraphRunContext\n'
            '@dataclass\n'
            'class Once(BaseNode[None, None, int]):\n'
            '    async def run(self, ctx: GraphRunContext) -> End[int]:\n'
            '        return End(1)\n'
            'once = Graph(nodes=[Once], name="once", auto_instrument=False)\n',
            module.__name__,
            'exec',
        ),
        module.__dict__,
    )
    sys.modules[module.__name__] = module
    persistence: SqliteStatePersistence[None, int] = SqliteStatePersistence(path, 'run-00000')
    await module.once.run(module.Once(), persistence=persistence)
    first = (await persistence.load_all())[0].id
    for i in range(1, RUNS):
        await persistence.fork(first, f'run-{i:05d}')
    persistence.close()


def bench_runs_list() -> Result:
    result = Result(f'edgewise runs list, SQLite store of {RUNS:,} runs', 'command')
    with tempfile.TemporaryDirectory(prefix='edgewise-bench-') as tmp:
        path = Path(tmp, 'runs.db')
        start = time.perf_counter()
        anyio.run(_fill_store, path)
        result.notes.append(f'store filled in {time.perf_counter() - start:.1f} s')
        command = [str(Path(sys.executable).with_name('edgewise')), 'runs', 'list', '--store', f'sqlite:///{path}']
        wall: list[float] = []
        for _ in range(5):
            start = time.perf_counter()
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            wall.append(time.perf_counter() - start)
        lines = done.stdout.count('\n')
        assert lines == RUNS + 1, f'expected {RUNS + 1} lines, got {lines}'
        startup: list[float] = []
        for _ in range(5):
            start = time.perf_counter()
            subprocess.run([command[0], '--help'], capture_output=True, check=True)
            startup.append(time.perf_counter() - start)
        result.per_unit['edgewise runs list (new process)'] = statistics.median(wall)
        result.per_unit['edgewise --help (start-up alone)'] = statistics.median(startup)
        in_process: list[float] = []
        for _ in range(5):
            start = time.perf_counter()
            anyio.run(SqliteStatePersistence.list_runs, path)
            in_process.append(time.perf_counter() - start)
        result.per_unit['list_runs() in process (query + rows)'] = statistics.median(in_process)
    return result


def main() -> None:
    print(report(bench_mermaid_code(), anchor='pydantic-graph 1.107.10'), flush=True)
    print(report(bench_runs_list()), flush=True)


if __name__ == '__main__':
    main()

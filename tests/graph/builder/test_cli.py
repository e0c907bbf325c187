"""`edgewise runs resume` drives stored builder runs, as it does classic ones."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ..cli.conftest import Edgewise

FLOW = """
import os

import anyio

from edgewise.graph.builder import GraphBuilder, StepContext, reduce_sum
from edgewise.graph.persistence.sqlite import SqliteStatePersistence

g = GraphBuilder(input_type=list[int], output_type=int)


@g.step
async def square(ctx: StepContext[None, None, int]) -> int:
    if ctx.inputs < 0 and not os.environ.get('FIXED'):
        raise ValueError('negative')
    return ctx.inputs * ctx.inputs


total = g.join(reduce_sum, initial=0)
g.add(g.edge_from(g.start_node).map().to(square), g.edge_from(square).to(total), g.edge_from(total).to(g.end_node))
graph = g.build()


async def start(run_id: str, items: list[int]) -> None:
    store = SqliteStatePersistence('runs.db', run_id)
    async with graph.iter(inputs=items, persistence=store) as run:
        async for event in run:
            if isinstance(event, list) and len(event) == len(items):
                break  # the map's tasks are stored, not run
    await store.aclose()
"""


def stored_run(tmp_path: Path, run_id: str, items: list[int]) -> None:
    (tmp_path / 'squares.py').write_text(FLOW)
    code = f'import anyio, squares; anyio.run(squares.start, {run_id!r}, {items!r})'
    subprocess.run([sys.executable, '-c', code], cwd=tmp_path, check=True, timeout=60)


def test_resume_runs_a_stored_builder_run_to_its_end(tmp_path: Path) -> None:
    stored_run(tmp_path, 'b1', [1, 2, 3])
    edgewise = Edgewise()
    stopped = edgewise(
        'runs', 'resume', 'b1', 'squares:graph', '--store', 'sqlite:///runs.db', '--max-steps', '1', cwd=tmp_path
    )
    assert stopped.code == 0, stopped.err
    assert stopped.out.splitlines()[-1] == 'Stopped after 1 steps: run b1 is resumable.'
    result = edgewise('runs', 'resume', 'b1', 'squares:graph', '--store', 'sqlite:///runs.db', cwd=tmp_path)
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[-2:] == [lines[-2].split(']')[0] + '] end: 14', 'Finished: result 14']
    assert any('next: __end__' in line for line in lines)


def test_a_step_that_raises_leaves_the_run_resumable_and_says_so(tmp_path: Path) -> None:
    stored_run(tmp_path, 'b2', [1, -1])
    edgewise = Edgewise()
    store = ('--store', 'sqlite:///runs.db')
    result = edgewise('runs', 'resume', 'b2', 'squares:graph', *store, cwd=tmp_path)
    assert result.code != 0
    assert (
        'A step raised ValueError: negative; run b2 stays resumable (a builder run whose step raised is not marked '
        'failed: its progress is stored as of before that step). Fix the cause, then `edgewise runs resume b2 '
        'squares:graph --store sqlite:///runs.db` runs the step again;'
    ) in result.err
    assert 'marked failed.' not in result.err
    listed = edgewise('runs', 'list', *store, cwd=tmp_path)
    assert listed.code == 0, listed.err
    assert [line.split()[:3] for line in listed.out.splitlines()[1:]] == [['b2', 'graph', 'waiting']]
    again = edgewise('runs', 'resume', 'b2', 'squares:graph', *store, cwd=tmp_path, env={'FIXED': '1'})
    assert again.code == 0, again.err
    assert again.out.splitlines()[-1] == 'Finished: result 2'


def test_fork_list_show_and_delete_work_on_builder_runs(tmp_path: Path) -> None:
    stored_run(tmp_path, 'b3', [1, 2, 3])
    edgewise = Edgewise()
    store = ('--store', 'sqlite:///runs.db')
    shown = edgewise('runs', 'show', 'b3', *store, cwd=tmp_path)
    assert shown.code == 0, shown.err
    snapshot_ids = [
        word for line in shown.out.splitlines() for word in line.split() if word.startswith('BuilderProgress:')
    ]
    assert len(snapshot_ids) == 3
    # Forked at the second step (the map about to fan out): the fork runs on from there to the same end.
    forked = edgewise('runs', 'fork', 'b3', snapshot_ids[1], *store, '--new-id', 'b3-fork', cwd=tmp_path)
    assert (forked.code, forked.out.strip()) == (0, 'b3-fork'), forked.err
    resumed = edgewise('runs', 'resume', 'b3-fork', 'squares:graph', *store, cwd=tmp_path)
    assert resumed.code == 0, resumed.err
    assert resumed.out.splitlines()[-1] == 'Finished: result 14'
    listed = edgewise('runs', 'list', *store, cwd=tmp_path)
    assert [line.split()[:3] for line in listed.out.splitlines()[1:]] == [
        ['b3', 'graph', 'waiting'],
        ['b3-fork', 'graph', 'finished'],
    ]
    deleted = edgewise('runs', 'delete', 'b3', *store, cwd=tmp_path)
    assert deleted.code == 0, deleted.err
    listed = edgewise('runs', 'list', *store, cwd=tmp_path)
    assert [line.split()[0] for line in listed.out.splitlines()[1:]] == ['b3-fork']


SQUARES = """\
---
title: graph
---
stateDiagram-v2
  state map <<fork>>
  square
  state reduce_sum <<join>>

  [*] --> map
  map --> square
  square --> reduce_sum
  reduce_sum --> [*]
"""


def test_mermaid_draws_a_builder_graph(tmp_path: Path) -> None:
    (tmp_path / 'squares.py').write_text(FLOW)
    assert Edgewise()('mermaid', 'squares:graph', cwd=tmp_path) == (0, SQUARES, '')


def test_mermaid_draws_the_path_of_a_stored_builder_run(tmp_path: Path) -> None:
    stored_run(tmp_path, 'p1', [1, 2, 3])
    edgewise = Edgewise()
    store = ('--store', 'sqlite:///runs.db')
    stopped = edgewise('mermaid', 'squares:graph', '--run', 'p1', *store, '--no-title', cwd=tmp_path)
    assert stopped.code == 0, stopped.err
    assert stopped.out == (
        SQUARES.split('---\n')[2].replace('map --> square', 'map --> square: 0/3 done')
        + '\nclassDef highlighted fill:#fdff32\nclass map highlighted\n'
        'classDef stopped fill:#7ec8ff,stroke:#1f6fb2,stroke-width:3px\nclass square stopped\n'
    )
    edgewise('runs', 'resume', 'p1', 'squares:graph', *store, cwd=tmp_path)
    done = edgewise('mermaid', 'squares:graph', '--run', 'p1', *store, cwd=tmp_path)
    assert done.out.split('\n\n', 2)[1:] == [
        '  [*] --> map\n  map --> square: 3/3 done\n  square --> reduce_sum\n  reduce_sum --> [*]',
        'classDef highlighted fill:#fdff32\nclass map highlighted\nclass square highlighted\n'
        'class reduce_sum highlighted\n',
    ]


def test_mermaid_marks_the_failed_step_of_a_builder_run(tmp_path: Path) -> None:
    stored_run(tmp_path, 'p2', [-1])
    edgewise = Edgewise()
    store = ('--store', 'sqlite:///runs.db')
    edgewise('runs', 'resume', 'p2', 'squares:graph', *store, cwd=tmp_path)
    failed = edgewise('mermaid', 'squares:graph', '--run', 'p2', *store, cwd=tmp_path)
    assert failed.code == 0, failed.err
    assert failed.out.split('\n\n', 2)[2] == (
        'classDef highlighted fill:#fdff32\nclass map highlighted\n'
        'classDef failed fill:#ff8a80,stroke:#c62828,stroke-width:3px\nclass square failed\n'
    )
    assert 'map --> square: 0/1 done' in failed.out


def test_mermaid_saves_an_image_of_a_builder_run_with_the_local_renderer(tmp_path: Path) -> None:
    stored_run(tmp_path, 'p3', [4, 5])
    mmdc = tmp_path / 'mmdc'
    mmdc.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{Path(__file__).parent.parent / "fake_mmdc.py"}" "$@"\n')
    mmdc.chmod(0o755)
    edgewise = Edgewise()
    args = ('--run', 'p3', '--store', 'sqlite:///runs.db', '--renderer', 'local', '--mmdc', str(mmdc))
    result = edgewise('mermaid', 'squares:graph', *args, '-o', 'p3.svg', cwd=tmp_path)
    assert result == (0, '', '')
    image = json.loads((tmp_path / 'p3.svg').read_text())
    code = edgewise('mermaid', 'squares:graph', '--run', 'p3', '--store', 'sqlite:///runs.db', cwd=tmp_path).out
    assert (image['format'], image['code'] + '\n') == ('svg', code)
    assert 'map --> square: 0/2 done' in code


def test_mermaid_refuses_what_does_not_fit_a_builder_graph(tmp_path: Path) -> None:
    stored_run(tmp_path, 'p4', [1])
    (tmp_path / 'classic.py').write_text(CLASSIC)
    edgewise = Edgewise()
    store = ('--store', 'sqlite:///runs.db')
    assert edgewise('mermaid', 'squares:graph', '--start', 'square', cwd=tmp_path) == (
        1,
        '',
        'edgewise: error: `start_node` applies to classic graphs; a builder graph starts at its start node and draws '
        'a stored run with `history` alone.\n',
    )
    classic = edgewise('mermaid', 'classic:graph', '--run', 'p4', *store, cwd=tmp_path)
    assert classic.code == 1
    assert 'Run history node "BuilderProgress" is not in the graph' in classic.err


CLASSIC = """
from edgewise.graph import BaseNode, End, Graph, GraphRunContext


class Only(BaseNode[None, None, int]):
    async def run(self, ctx: GraphRunContext) -> End[int]:
        return End(1)


graph = Graph(nodes=[Only])
"""

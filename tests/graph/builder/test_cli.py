"""`edgewise runs resume` drives stored builder runs, as it does classic ones."""

from __future__ import annotations

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


def test_a_step_that_raises_on_resume_is_reported(tmp_path: Path) -> None:
    stored_run(tmp_path, 'b2', [1, -1])
    result = Edgewise()('runs', 'resume', 'b2', 'squares:graph', '--store', 'sqlite:///runs.db', cwd=tmp_path)
    assert result.code != 0
    assert 'A step raised ValueError: negative; run b2 is marked failed.' in result.err


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

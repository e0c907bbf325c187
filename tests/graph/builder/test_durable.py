"""Durable builder runs: progress stored after every step, resumed after a SIGKILL in a fresh process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from edgewise.graph import End
from edgewise.graph.builder import GraphBuilder, GraphRuntimeError, StepContext, reduce_list_append
from edgewise.graph.builder._stored import BuilderProgress
from edgewise.graph.exceptions import PersistenceError
from edgewise.graph.persistence.in_mem import FullStatePersistence
from edgewise.graph.persistence.sqlite import SqliteStatePersistence

from ..persistence.conftest import postgres_schema
from ._crash_worker import HALF, ITEMS, RUN_ID, open_store

ROOT = Path(__file__).parents[3]

pytestmark = pytest.mark.anyio


def squares_graph() -> Any:
    g = GraphBuilder(input_type=list[int], output_type=list[int])

    @g.step
    async def square(ctx: StepContext[None, None, int]) -> int:
        return ctx.inputs * ctx.inputs

    collect = g.join(reduce_list_append, initial_factory=list[int])
    g.add(
        g.edge_from(g.start_node).map().to(square), g.edge_from(square).to(collect), g.edge_from(collect).to(g.end_node)
    )
    return g.build()


async def test_a_run_stores_its_progress_after_every_step_and_its_end() -> None:
    persistence = FullStatePersistence[None, list[int]]()
    output = await squares_graph().run(inputs=[1, 2, 3], persistence=persistence)
    assert sorted(output) == [1, 4, 9]
    history = persistence.history
    assert all(isinstance(s.node, BuilderProgress) for s in history[:-1])
    assert isinstance(history[-1].node, End)
    assert sorted(history[-1].node.data) == [1, 4, 9]
    assert {s.status for s in history[:-1] if isinstance(s.node, BuilderProgress)} == {'success'}
    first = history[0].node
    assert isinstance(first, BuilderProgress)
    assert [t['node'] for t in first.progress['tasks']] == ['__start__']


async def test_a_stored_run_is_resumed_from_where_it_was(tmp_path: Path) -> None:
    graph = squares_graph()
    store = SqliteStatePersistence(tmp_path / 'runs.db', 'r1')
    async with graph.iter(inputs=[1, 2, 3], persistence=store) as run:
        async for event in run:  # pragma: no branch
            if isinstance(event, list) and len(event) == 3:
                break  # the tasks of the map are stored, not yet run
    await store.aclose()
    store = SqliteStatePersistence(tmp_path / 'runs.db', 'r1')
    async with graph.iter_from_persistence(store) as resumed:
        async for _ in resumed:
            pass
    assert sorted(resumed.output or []) == [1, 4, 9]
    with pytest.raises(GraphRuntimeError, match="holds no builder run waiting to go on for run 'r1'"):
        async with graph.iter_from_persistence(store):
            pass  # pragma: no cover
    await store.aclose()


async def test_a_stored_run_that_no_longer_fits_the_graph_is_refused(tmp_path: Path) -> None:
    store = SqliteStatePersistence(tmp_path / 'runs.db', 'r1')
    async with squares_graph().iter(inputs=[1], persistence=store) as run:
        await run.next()
    await store.aclose()
    g = GraphBuilder(input_type=list[int], output_type=list[int])
    g.add(g.edge_from(g.start_node).to(g.end_node))
    store = SqliteStatePersistence(tmp_path / 'runs.db', 'r1')
    with pytest.raises(PersistenceError, match="node 'map', which this graph does not have"):
        async with g.build().iter_from_persistence(store):
            pass  # pragma: no cover
    await store.aclose()


# -- SIGKILL in the middle of a map fan-out


def worker(mode: str, kind: str, location: str, log: Path) -> subprocess.Popen[str]:
    args = [sys.executable, '-m', 'tests.graph.builder._crash_worker', mode, kind, location, str(log)]
    env = {**os.environ, 'PYTHONPATH': str(ROOT), 'LOGFIRE_IGNORE_NO_CONFIG': '1'}
    return subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


async def reduced_so_far(kind: str, location: str) -> int | None:
    store = open_store(kind, location)
    try:
        history = await store.load_raw()
    except PersistenceError:  # pragma: no cover - the store is still being created
        return None
    finally:
        await store.aclose()
    progress = history[-1].node.fields.get('progress') if history and history[-1].kind == 'node' else None
    joins = (progress or {}).get('joins') or [{'current': None}]
    current = joins[0]['current']
    return current if isinstance(current, int) else None


def started_all_from(log: Path, first: int) -> bool:
    """Whether the log shows every item from `first` on started (they block there, to be killed)."""
    lines = set(log.read_text().splitlines()) if log.exists() else set()
    return all(f'start {i}' in lines for i in range(first, ITEMS))


@pytest.fixture(params=['file', 'sqlite', 'postgres'])
def store_location(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    kind = str(request.param)
    if kind == 'postgres':
        with postgres_schema() as dsn:
            yield kind, dsn
    else:
        yield kind, str(tmp_path / ('run.json' if kind == 'file' else 'runs.db'))


# One backend is enough for the parent: the worker processes run asyncio, and the parent only polls the store.
@pytest.mark.parametrize('anyio_backend', ['asyncio'])
async def test_a_run_killed_mid_map_through_a_decision_and_a_base_node_resumes_exactly(
    store_location: tuple[str, str], tmp_path: Path
) -> None:
    kind, location = store_location
    log = tmp_path / 'effects.log'
    partial = sum(i * i for i in range(HALF))
    first = worker('start', kind, location, log)
    try:
        # Bounded by construction: the first half finishes and is reduced, the rest starts and waits to be killed.
        with anyio.fail_after(300):
            while not (started_all_from(log, HALF) and await reduced_so_far(kind, location) == partial):
                assert first.poll() is None, first.stderr.read() if first.stderr else ''
                await anyio.sleep(0.05)
    finally:
        first.send_signal(signal.SIGKILL)
        first.communicate()  # waits for it, and closes its pipes
    second = worker('resume', kind, location, log)
    out, err = second.communicate(timeout=120)
    assert second.returncode == 0, err
    output, finished = out.split()
    assert int(output) == sum(i * i for i in range(ITEMS))
    assert int(finished) == ITEMS  # the state kept the finished steps' changes, and each step counted once
    counts = Counter(log.read_text().splitlines())
    assert all(counts[f'start {i}'] == 1 and counts[f'end {i}'] == 1 for i in range(HALF))
    assert all(counts[f'start {i}'] == 2 and counts[f'end {i}'] == 1 for i in range(HALF, ITEMS))
    assert RUN_ID


async def test_a_run_is_resumed_by_one_process_at_a_time(tmp_path: Path) -> None:
    from edgewise.graph.exceptions import RunInProgressError

    graph = squares_graph()
    store = SqliteStatePersistence(tmp_path / 'runs.db', 'r1')
    async with graph.iter(inputs=[1, 2], persistence=store) as run:
        await run.next()
    await store.aclose()
    first, second = (SqliteStatePersistence(tmp_path / 'runs.db', 'r1') for _ in range(2))
    async with graph.iter_from_persistence(first) as resumed:
        with pytest.raises(RunInProgressError):
            async with graph.iter_from_persistence(second):
                pass  # pragma: no cover
        async for _ in resumed:
            pass
    assert sorted(resumed.output or []) == [1, 4]
    await first.aclose()
    await second.aclose()


async def test_a_stored_builder_run_can_be_forked_at_any_step(tmp_path: Path) -> None:
    graph = squares_graph()
    store = SqliteStatePersistence(tmp_path / 'runs.db', 'r1')
    assert sorted(await graph.run(inputs=[1, 2, 3], persistence=store)) == [1, 4, 9]
    history = await store.load_all()
    middle = history[len(history) // 2]
    forked = await store.fork(middle.id, 'r1-again')
    async with graph.iter_from_persistence(forked) as again:
        async for _ in again:
            pass
    assert sorted(again.output or []) == [1, 4, 9]
    assert (await store.info()) is not None
    await forked.aclose()
    await store.aclose()


async def test_a_run_stored_at_a_released_join_resumes_from_it(tmp_path: Path) -> None:
    graph = squares_graph()
    store = SqliteStatePersistence(tmp_path / 'runs.db', 'r1')
    async with graph.iter(inputs=[1, 2], persistence=store) as run:
        async for event in run:  # pragma: no branch
            if isinstance(event, list) and [t.node_id for t in event] == ['__end__']:
                break  # the join has released its value towards the end
    await store.aclose()
    store = SqliteStatePersistence(tmp_path / 'runs.db', 'r1')
    async with graph.iter_from_persistence(store) as resumed:
        assert [t.node_id for t in resumed.next_task] == ['__end__']
        async for _ in resumed:
            pass
    assert sorted(resumed.output or []) == [1, 4]
    await store.aclose()

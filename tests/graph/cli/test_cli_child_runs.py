"""`edgewise runs ...` on runs with child runs (a subgraph run, the branches of a fan-out), in every durable store:
listed under their parent, shown by it, removed with it."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import pytest
from inline_snapshot import snapshot
from tests.graph.persistence._nested import Checkout, Order, order_graph
from tests.graph.persistence.conftest import postgres_dsn

from edgewise.graph.persistence.store import persistence_from_url

if TYPE_CHECKING:
    from tests.graph.cli.conftest import Edgewise


def _normal(text: str) -> str:
    text = re.sub(r'\d{4}-\d\d-\d\d \d\d:\d\d:\d\d', 'TIME', text)
    text = re.sub(r'\b\d+(\.\d+)? (us|ms|s)\b', 'DUR', text)
    return re.sub(r'(?<=\S) {2,}', '  ', text)


@pytest.fixture(params=['file', 'sqlite', 'postgres'])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A store URL of each durable kind, empty."""
    if request.param == 'file':
        (tmp_path / 'runs').mkdir()
        yield (tmp_path / 'runs').as_uri()
    elif request.param == 'sqlite':
        yield 'sqlite:///runs.db'
    else:
        import psycopg

        dsn = postgres_dsn()
        schema = f'edgewise_cli_{os.urandom(6).hex()}'
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA {schema}')
        try:
            yield f'{dsn}{"&" if "?" in dsn else "?"}options=-csearch_path%3D{schema}'
        finally:
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA {schema} CASCADE')


@pytest.fixture
def seeded(store: str, tmp_path: Path, snapshot_ids: None, monkeypatch: pytest.MonkeyPatch) -> str:
    """`order-1` finished, with its cart subgraph run and three branches (branch 1 failed, collected by the
    join); `order-2` waiting at `Scatter`, its cart subgraph run finished."""
    monkeypatch.chdir(tmp_path)

    async def seed() -> None:
        async with persistence_from_url(store, 'order-1') as persistence:
            state = Order(items=['tea', 'broken', 'cup'])
            await order_graph.run(Checkout(), state=state, persistence=persistence)
        async with (
            persistence_from_url(store, 'order-2') as persistence,
            order_graph.iter(Checkout(), state=Order(items=['pen']), persistence=persistence) as run,
        ):
            await run.next()

    anyio.run(seed)
    return store


def _ids(edgewise: Edgewise, store: str, cwd: Path) -> list[str]:
    listing = edgewise('runs', 'list', '--store', store, cwd=cwd)
    return [line.split()[0] for line in listing.out.splitlines()[1:]]


def test_list_shows_child_runs_under_their_parent(edgewise: Edgewise, seeded: str, tmp_path: Path) -> None:
    result = edgewise('runs', 'list', '--store', seeded, cwd=tmp_path)
    assert result.code == 0, result.err
    rows = [line.split('  TIME')[0] for line in _normal(result.out).splitlines()[1:]]
    assert [re.sub(r'  (order_graph|cart_graph|-)  ', '  ', row) for row in rows] == [
        'order-1  finished',
        '  order-1/cart  finished',
        '  order-1/Fork:6/0  finished',
        '  order-1/Fork:6/1  failed',
        '  order-1/Fork:6/2  finished',
        'order-2  waiting',
        '  order-2/cart  finished',
    ]


def test_show_lists_the_subgraph_run_and_the_branches(edgewise: Edgewise, seeded: str, tmp_path: Path) -> None:
    result = edgewise('runs', 'show', 'order-1', '--store', seeded, cwd=tmp_path)
    assert result.code == 0, result.err
    out = _normal(result.out).replace(seeded, 'STORE')
    out = re.sub(r'  (order_graph|cart_graph|-)  (?=finished|failed)', '  GRAPH  ', out)
    assert out == snapshot("""\
Run order-1 in STORE: finished, 5 snapshots

STEP  NODE  STATUS  STARTED (UTC)  DURATION  SNAPSHOT ID
1  Checkout  success  TIME  DUR  Checkout:1
      state: cart={'items': []}, items=['tea', 'broken', 'cup']
2  Scatter  success  TIME  DUR  Scatter:5
      state: cart={'items': ['tea', 'broken', 'cup']}, items=['tea', 'broken', 'cup']
3  Fork(3 branches -> Ship)  success  TIME  DUR  Fork:6
4  Ship(results=['box of tea', {'branch': 1, 'node_id': 'Pack', '...)  success  TIME  DUR  Ship:12
end  End('box of tea, failed, box of cup')  -  TIME  -  end:13

Child runs (4; `edgewise runs show CHILD_RUN_ID` shows one):
RUN ID  KIND  GRAPH  STATUS  STEPS
order-1/cart  subgraph run  GRAPH  finished  3
order-1/Fork:6/0  branch 0 of step 3  GRAPH  finished  2
order-1/Fork:6/1  branch 1 of step 3  GRAPH  failed  1
order-1/Fork:6/2  branch 2 of step 3  GRAPH  finished  2

Result: 'box of tea, failed, box of cup'
Failed child runs: order-1/Fork:6/1; `edgewise runs show CHILD_RUN_ID --store STORE` shows where each failed.
""")


def test_show_of_a_child_run_names_its_parent(edgewise: Edgewise, seeded: str, tmp_path: Path) -> None:
    result = edgewise('runs', 'show', 'order-1/Fork:6/1', '--store', seeded, cwd=tmp_path)
    assert result.code == 0, result.err
    lines = _normal(result.out).replace(seeded, 'STORE').splitlines()
    assert lines[0] == 'Run order-1/Fork:6/1 in STORE: failed, 1 snapshots; a child run of order-1'
    assert 'Failed: node Pack (step 1) raised ValueError: cannot pack a broken item' in lines
    assert re.match(r'To run it again: `edgewise runs fork order-1/Fork:6/1 Pack:\d+ --store STORE` forks', lines[-1])


def test_delete_removes_the_child_runs_and_says_so(edgewise: Edgewise, seeded: str, tmp_path: Path) -> None:
    result = edgewise('runs', 'delete', 'order-1', '--store', seeded, cwd=tmp_path)
    assert result == (0, 'Deleted run order-1 and its 4 child runs.\n', '')
    assert _ids(edgewise, seeded, tmp_path) == ['order-2', 'order-2/cart']


def test_a_child_run_of_a_waiting_run_is_not_deleted_alone(edgewise: Edgewise, seeded: str, tmp_path: Path) -> None:
    result = edgewise('runs', 'delete', 'order-1/cart', 'order-2/cart', '--store', seeded, cwd=tmp_path)
    assert result == (
        1,
        '',
        'edgewise: error: Run order-2/cart is a child run of run order-2, which is waiting and reads it back when '
        'resumed; delete order-2 (its child runs go with it). Nothing was removed.\n',
    )
    assert len(_ids(edgewise, seeded, tmp_path)) == 7


def test_a_run_and_its_child_run_named_together(edgewise: Edgewise, seeded: str, tmp_path: Path) -> None:
    result = edgewise('runs', 'delete', 'order-2/cart', 'order-2', '--store', seeded, cwd=tmp_path)
    assert result == (0, 'Deleted run order-2 and its 1 child run.\n', '')
    assert _ids(edgewise, seeded, tmp_path)[-1] == 'order-1/Fork:6/2'


def test_prune_removes_finished_runs_with_their_child_runs(edgewise: Edgewise, seeded: str, tmp_path: Path) -> None:
    result = edgewise('runs', 'prune', '--store', seeded, '--finished-before', '0m', cwd=tmp_path)
    assert result.code == 0, result.err
    assert _normal(result.out).splitlines()[1:] == [
        'order-1  order_graph  finished  TIME' if 'order_graph' in result.out else 'order-1  -  finished  TIME',
        'Deleted 1 run (with 4 child runs) finished before TIME UTC.',
    ]
    assert _ids(edgewise, seeded, tmp_path) == ['order-2', 'order-2/cart']


def test_mermaid_draws_the_path_through_the_child_runs(edgewise: Edgewise, seeded: str, tmp_path: Path) -> None:
    root = str(Path(__file__).parents[3])
    target = 'tests.graph.persistence._nested:order_graph'
    result = edgewise('mermaid', target, '--run', 'order-1', '--store', seeded, cwd=tmp_path, env={'PYTHONPATH': root})
    assert result.code == 0, result.err
    assert result.out.split('\n\n', 1)[1] == snapshot("""\
classDef highlighted fill:#fdff32
class Checkout highlighted
class Scatter highlighted
class Ship highlighted
class AddItems highlighted
class CountItems highlighted
classDef failed fill:#ff8a80,stroke:#c62828,stroke-width:3px
class Pack failed
""")


def test_a_child_run_of_a_branch_is_nested_under_it(edgewise: Edgewise, store: str, tmp_path: Path) -> None:
    _seed(store, tmp_path, 'order-3', ['gift', 'tea'])
    listing = edgewise('runs', 'list', '--store', store, cwd=tmp_path)
    ids = [re.sub(r'(?<=\S) .*', '', line) for line in listing.out.splitlines()[1:]]
    fork = ids[2].strip().split('/')[1]
    assert ids == [
        'order-3',
        '  order-3/cart',
        f'  order-3/{fork}/0',
        f'    order-3/{fork}/0/wrap',
        f'  order-3/{fork}/1',
    ]
    shown = _normal(edgewise('runs', 'show', 'order-3', '--store', store, cwd=tmp_path).out)
    assert f'\n  order-3/{fork}/0/wrap  subgraph run  ' in shown
    pruned = edgewise('runs', 'prune', '--store', store, '--finished-before', '0m', cwd=tmp_path)
    assert _normal(pruned.out).splitlines()[-1] == 'Deleted 1 run (with 4 child runs) finished before TIME UTC.'
    assert _ids(edgewise, store, tmp_path) == []


def _seed(store: str, cwd: Path, run_id: str, items: list[str]) -> None:
    """Store a finished run of the order graph (relative SQLite paths are relative to `cwd`)."""
    url = store.replace('sqlite:///', f'sqlite:///{cwd}/') if store.startswith('sqlite:///') else store

    async def seed() -> None:
        async with persistence_from_url(url, run_id) as persistence:
            await order_graph.run(Checkout(), state=Order(items=items), persistence=persistence)

    anyio.run(seed)

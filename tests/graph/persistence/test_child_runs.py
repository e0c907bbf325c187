"""Child runs in durable stores: a run lists its child runs and a child its parent; removing a run removes its
child runs, and a child run is not removed on its own while the run above it may resume."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

import anyio
import pytest

from edgewise.graph import BaseNode, End, Graph, GraphRunContext
from edgewise.graph.exceptions import PersistenceError, RunInProgressError
from edgewise.graph.persistence.store import DurableStatePersistence

from ._nested import Checkout, Order, order_graph
from .conftest import Store
from .test_delete import _listed

pytestmark = pytest.mark.anyio


async def _fork_id(persistence: DurableStatePersistence[Any, Any]) -> str:
    history = await persistence.load_raw()
    return next(s.id for s in history if s.kind == 'node' and s.node.node_id == 'Fork')


async def test_a_run_lists_its_subgraph_runs_and_branches(durable: Store) -> None:
    persistence = durable('order-1')
    await order_graph.run(Checkout(), state=Order(items=['tea', 'cup']), persistence=persistence)
    fork_id = await _fork_id(persistence)
    children = await durable('order-1').child_runs()
    assert sorted((c.run_id, c.status, c.snapshot_count) for c in children) == [
        (f'order-1/{fork_id}/0', 'finished', 2),
        (f'order-1/{fork_id}/1', 'finished', 2),
        ('order-1/cart', 'finished', 3),
    ]
    assert await durable(f'order-1/{fork_id}/1').child_runs() == []


async def test_a_child_run_knows_its_parent(durable: Store) -> None:
    persistence = durable('order-2')
    await order_graph.run(Checkout(), state=Order(items=['tea']), persistence=persistence)
    fork_id = await _fork_id(persistence)
    branch = durable(f'order-2/{fork_id}/0')
    assert branch.run_id == f'order-2/{fork_id}/0'
    parent = await branch.parent_run()
    assert parent is not None
    assert (parent.run_id, parent.status) == ('order-2', 'finished')
    assert await durable('order-2').parent_run() is None
    assert await durable('elsewhere/x').parent_run() is None


async def test_the_store_lists_child_runs_with_the_others(durable: Store) -> None:
    persistence = durable('order-3')
    await order_graph.run(Checkout(), state=Order(items=['tea']), persistence=persistence)
    fork_id = await _fork_id(persistence)
    assert sorted(await _listed(persistence)) == ['order-3', f'order-3/{fork_id}/0', 'order-3/cart']


async def test_deleting_a_run_deletes_its_child_runs(durable: Store) -> None:
    kept = durable('kept')
    await order_graph.run(Checkout(), state=Order(items=['a']), persistence=kept)
    gone = durable('gone')
    await order_graph.run(Checkout(), state=Order(items=['a', 'b']), persistence=gone)

    assert await durable('gone').delete() is True
    assert await durable('gone').child_runs() == []
    assert await durable('gone/cart').info() is None
    kept_fork = await _fork_id(kept)
    assert sorted(await _listed(kept)) == ['kept', f'kept/{kept_fork}/0', 'kept/cart']


async def test_a_child_run_of_a_run_that_may_resume_is_not_deleted_alone(durable: Store) -> None:
    persistence = durable('order-4')
    async with order_graph.iter(Checkout(), state=Order(items=['tea']), persistence=persistence) as run:
        await run.next()  # Checkout, with its subgraph run: the run waits at Scatter
    with pytest.raises(
        PersistenceError, match=r"^Run 'order-4/cart' is a child run of run 'order-4', which is waiting"
    ):
        await durable('order-4/cart').delete()
    assert (await durable('order-4/cart').info()) is not None


async def test_a_child_run_of_a_finished_run_may_be_deleted_alone(durable: Store) -> None:
    persistence = durable('order-5')
    await order_graph.run(Checkout(), state=Order(items=['tea']), persistence=persistence)
    assert await durable('order-5/cart').delete() is True
    assert await durable('order-5/cart').info() is None
    assert (await durable('order-5').info()) is not None


async def test_deleting_one_branch_of_a_finished_run_leaves_its_siblings(durable: Store) -> None:
    persistence = durable('order-6')
    await order_graph.run(Checkout(), state=Order(items=['a', 'b']), persistence=persistence)
    fork_id = await _fork_id(persistence)
    assert await durable(f'order-6/{fork_id}/0').delete() is True
    assert sorted(c.run_id for c in await durable('order-6').child_runs()) == [f'order-6/{fork_id}/1', 'order-6/cart']


@dataclass
class Hold(BaseNode[None, anyio.Event, str]):
    async def run(self, ctx: GraphRunContext[None, anyio.Event]) -> End[str]:
        ctx.deps.set()
        await anyio.sleep_forever()
        raise AssertionError('unreachable')  # pragma: no cover


async def test_a_run_whose_child_run_a_live_task_advances_is_not_deleted(durable: Store) -> None:
    await order_graph.run(Checkout(), state=Order(items=['tea']), persistence=durable('order-7'))
    running = anyio.Event()
    async with anyio.create_task_group() as tg:
        # A run stored as a child run of `order-7` (as a subgraph run would be), advanced by this process.
        tg.start_soon(partial(Graph(nodes=(Hold,)).run, Hold(), deps=running, persistence=durable('order-7/extra')))
        await running.wait()
        with pytest.raises(
            RunInProgressError, match=r"^Run 'order-7' has child runs in progress elsewhere \('order-7/extra'\)"
        ):
            await durable('order-7').delete()
        tg.cancel_scope.cancel()
    assert (await durable('order-7').info()) is not None
    assert len(await durable('order-7').child_runs()) == 3

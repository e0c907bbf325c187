"""Edgewise end to end: an order workflow run by two workers that share its persisted history.

Worker 1 starts the run and is stopped part-way; worker 2, which could be another process, loads the
history from the SQLite file `runs.db` in the working directory and finishes the run. Every step is
printed, then the whole history.

`make run` runs it (`python -m examples.graph.flagship`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import anyio

from edgewise.graph import BaseNode, Edge, End, Graph, GraphRunContext, NodeSnapshot
from edgewise.graph.persistence.sqlite import SqliteStatePersistence

# --- the workflow ----------------------------------------------------------------------------------------------


@dataclass
class Order:
    """The state of the run: persisted with every step."""

    order_id: str
    items: dict[str, int]
    """Quantity of each product ordered."""
    total_cents: int = 0
    charge_attempts: int = 0
    events: list[str] = field(default_factory=list)
    """What happened, one line per step."""


@dataclass
class Receipt:
    """The output of the run."""

    order_id: str
    status: str
    total_cents: int
    tracking: str | None = None


@dataclass
class Shop:
    """The run's dependencies: services a worker brings along; never persisted."""

    prices: dict[str, int]
    stock: dict[str, int]

    def charge(self, cents: int, attempt: int) -> bool:
        """A pretend payment service that declines the first attempt of every charge."""
        return attempt > 1


@dataclass
class ReceiveOrder(BaseNode[Order, Shop, Receipt]):
    """Price the order."""

    async def run(self, ctx: GraphRunContext[Order, Shop]) -> ReserveStock:
        order = ctx.state
        order.total_cents = sum(ctx.deps.prices[item] * n for item, n in order.items.items())
        order.events.append(f'priced {sum(order.items.values())} items at {order.total_cents} cents')
        return ReserveStock()


@dataclass
class ReserveStock(BaseNode[Order, Shop, Receipt]):
    """Take the items out of stock, or give up if there are not enough."""

    async def run(
        self, ctx: GraphRunContext[Order, Shop]
    ) -> Annotated[ChargeCard, Edge('reserved')] | Annotated[End[Receipt], Edge('out of stock')]:
        order, stock = ctx.state, ctx.deps.stock
        missing = [item for item, n in order.items.items() if stock.get(item, 0) < n]
        if missing:
            order.events.append(f'out of stock: {", ".join(missing)}')
            return End(Receipt(order.order_id, 'cancelled: out of stock', order.total_cents))
        for item, n in order.items.items():
            stock[item] -= n
        order.events.append('reserved ' + ', '.join(f'{n} {item}' for item, n in order.items.items()))
        return ChargeCard()


@dataclass
class ChargeCard(BaseNode[Order, Shop, Receipt]):
    """Charge the customer; retry a declined charge up to three times."""

    async def run(
        self, ctx: GraphRunContext[Order, Shop]
    ) -> (
        Annotated[Ship, Edge('paid')]
        | Annotated[ChargeCard, Edge('declined, retry')]
        | Annotated[End[Receipt], Edge('payment failed')]
    ):
        order = ctx.state
        order.charge_attempts += 1
        if ctx.deps.charge(order.total_cents, order.charge_attempts):
            order.events.append(f'charged {order.total_cents} cents (attempt {order.charge_attempts})')
            return Ship()
        order.events.append(f'card declined (attempt {order.charge_attempts})')
        if order.charge_attempts == 3:
            return End(Receipt(order.order_id, 'cancelled: payment failed', order.total_cents))
        return ChargeCard()


@dataclass
class Ship(BaseNode[Order, Shop, Receipt]):
    """Hand the parcel to the carrier."""

    async def run(self, ctx: GraphRunContext[Order, Shop]) -> End[Receipt]:
        tracking = f'TRK-{ctx.state.order_id}'
        ctx.state.events.append(f'shipped, tracking {tracking}')
        return End(Receipt(ctx.state.order_id, 'shipped', ctx.state.total_cents, tracking))


order_workflow = Graph(nodes=(ReceiveOrder, ReserveStock, ChargeCard, Ship))

# --- where the history lives -----------------------------------------------------------------------------------
# Two functions, so that switching to another persistence backend touches nothing else.


async def open_history(path: Path, run_id: str) -> SqliteStatePersistence[Order, Receipt]:
    """The run's history in the database at `path`, as the last worker left it (empty for a new run)."""
    persistence = SqliteStatePersistence[Order, Receipt](path, run_id)
    persistence.set_graph_types(order_workflow)
    return persistence


async def close_history(persistence: SqliteStatePersistence[Order, Receipt]) -> None:
    """Done with the history: every step was committed as it ran."""
    persistence.close()


# --- the workers -----------------------------------------------------------------------------------------------


def new_shop() -> Shop:
    """Each worker builds its own dependencies."""
    return Shop(prices={'mug': 850, 'tea': 420}, stock={'mug': 10, 'tea': 3})


async def work(name: str, path: Path, run_id: str, *, max_nodes: int | None = None) -> Receipt | None:
    """Advance the run stored at `path` by up to `max_nodes` nodes; return the receipt if it ended."""
    persistence = await open_history(path, run_id)
    async with order_workflow.iter_from_persistence(persistence, deps=new_shop()) as run:
        ran = 0
        while not isinstance(run.next_node, End) and (max_nodes is None or ran < max_nodes):
            node = run.next_node
            next_node = await run.next()
            ran += 1
            print(f'  {name}: {node.get_node_id():<12} -> {_label(next_node):<12} {run.state.events[-1]}')
        result = run.result
    await close_history(persistence)
    return result.output if result is not None else None


def _label(node: BaseNode[Order, Shop, Receipt] | End[Receipt]) -> str:
    return 'End' if isinstance(node, End) else node.get_node_id()


async def fulfil(path: Path) -> Receipt | None:
    """Start an order, stop worker 1 after three nodes, let worker 2 finish it; print what happened."""
    print('order A-1001: 2 mugs and 1 tea')
    run_id = f'order-A-1001-{os.urandom(4).hex()}'  # the file keeps the runs of earlier invocations too
    persistence = await open_history(path, run_id)
    await order_workflow.initialize(ReceiveOrder(), persistence, state=Order('A-1001', {'mug': 2, 'tea': 1}))
    await close_history(persistence)

    await work('worker 1', path, run_id, max_nodes=3)
    persistence = await open_history(path, run_id)
    print(f'worker 1 stops; {len(await persistence.load_all())} snapshots saved to {path.name}')
    receipt = await work('worker 2', path, run_id)
    print(f'receipt: {receipt}')

    print('history:')
    for i, snapshot in enumerate(await persistence.load_all(), 1):
        status = snapshot.status if isinstance(snapshot, NodeSnapshot) else 'end'
        print(
            f'  {i}. {_label(snapshot.node):<12} {status:<8} charge attempts so far: {snapshot.state.charge_attempts}'
        )
    await close_history(persistence)
    return receipt


def main() -> None:
    """Run the flagship example, storing the run in `runs.db` in the working directory."""
    print('Edgewise: an order workflow, persisted after every step and finished by a second worker.\n')
    anyio.run(fulfil, Path('runs.db'))


if __name__ == '__main__':
    main()

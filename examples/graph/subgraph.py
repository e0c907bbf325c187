"""A subgraph: an order workflow whose `Pay` step runs a payment graph, stored as a child run.

`Pay` calls `ctx.run_subgraph(payment, ...)` with the order's wallet (a part of the order's state) as the
payment run's state; the payment's `End` value becomes `Pay`'s result. With a SQLite persistence the
payment is stored as the run `order-42/payment`, beside its parent `order-42`: a crash inside the payment
resumes inside it. The diagram draws the payment graph inside `Pay`.

Run it with `python -m examples.graph.subgraph`.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from edgewise.graph import BaseNode, End, Graph, GraphRunContext
from edgewise.graph.events import NodeStartedEvent
from edgewise.graph.persistence.sqlite import SqliteStatePersistence


@dataclass
class Wallet:
    """The payment graph's state."""

    balance: int
    charges: list[int] = field(default_factory=list)


@dataclass
class Order:
    """The order workflow's state; its wallet is handed to the payment run."""

    item: str
    price: int
    wallet: Wallet
    shipped: bool = False


@dataclass
class Authorize(BaseNode[Wallet, None, str]):
    """Check that the wallet covers the amount."""

    amount: int

    async def run(self, ctx: GraphRunContext[Wallet]) -> Capture | End[str]:
        if ctx.state.balance < self.amount:
            return End('declined')
        return Capture(self.amount)


@dataclass
class Capture(BaseNode[Wallet, None, str]):
    """Take the money."""

    amount: int

    async def run(self, ctx: GraphRunContext[Wallet]) -> End[str]:
        ctx.state.balance -= self.amount
        ctx.state.charges.append(self.amount)
        return End('paid')


payment = Graph(nodes=(Authorize, Capture), name='payment')


@dataclass
class Pay(BaseNode[Order, None, str]):
    """Run the payment graph on the order's wallet."""

    subgraphs = (payment,)

    async def run(self, ctx: GraphRunContext[Order]) -> Ship | End[str]:
        outcome = await ctx.run_subgraph(payment, Authorize(ctx.state.price), name='payment', state=ctx.state.wallet)
        return Ship() if outcome == 'paid' else End(f'{ctx.state.item}: payment {outcome}')


@dataclass
class Ship(BaseNode[Order, None, str]):
    """Send the item."""

    async def run(self, ctx: GraphRunContext[Order]) -> End[str]:
        ctx.state.shipped = True
        return End(f'{ctx.state.item}: shipped, {ctx.state.wallet.balance} left in the wallet')


orders = Graph(nodes=(Pay, Ship), name='orders')


async def order(directory: Path) -> None:
    database = directory / 'runs.db'
    async with SqliteStatePersistence(database, 'order-42') as persistence:
        async with orders.stream(Pay(), state=Order('teapot', 30, Wallet(100)), persistence=persistence) as events:
            async for event in events:
                if isinstance(event, NodeStartedEvent):
                    print(f'  {"/".join(event.path) or "order"}: {event.node.get_node_id()}')
        assert events.end is not None
        print(events.end.output)
    for run in await SqliteStatePersistence.list_runs(database):
        print(f'stored run {run.run_id}: {run.status}, {run.snapshot_count} snapshots')


def main() -> None:
    """Print the diagram, then run an order with its payment."""
    print(orders.mermaid_code(start_node=Pay))
    with tempfile.TemporaryDirectory() as directory:
        anyio.run(order, Path(directory))


if __name__ == '__main__':
    main()

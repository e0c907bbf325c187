"""A vending machine: labelled edges, state (the credit) and deps (the machine and the customer).

Run it with `python -m examples.graph.vending_machine`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import anyio

from edgewise.graph import BaseNode, Edge, End, Graph, GraphRunContext


@dataclass
class Machine:
    """The machine's price list and stock: a dependency, never persisted."""

    prices: dict[str, int]
    """Price of each product, in cents."""
    stock: dict[str, int]
    """How many of each product are left."""


@dataclass
class Customer:
    """What the customer does: the coins they insert, in order, and what they want."""

    coins: list[int]
    """Coins, in cents, in the order they are inserted."""
    wants: str
    """The product they pick."""


@dataclass
class Deps:
    """Everything the nodes need that is not state."""

    machine: Machine
    customer: Customer


@dataclass
class Sale:
    """The state of one sale."""

    credit: int = 0
    """Cents inserted and not yet spent."""
    coins_taken: int = 0
    """How many of the customer's coins the machine has taken."""


@dataclass
class InsertCoin(BaseNode[Sale, Deps, str]):
    """Take the customer's next coin."""

    async def run(self, ctx: GraphRunContext[Sale, Deps]) -> SelectProduct | Annotated[End[str], Edge('walk away')]:
        coins = ctx.deps.customer.coins
        if ctx.state.coins_taken == len(coins):
            return End(f'customer walked away; returned {ctx.state.credit} cents')
        coin = coins[ctx.state.coins_taken]
        ctx.state.coins_taken += 1
        ctx.state.credit += coin
        print(f'  coin {coin:>3} -> credit {ctx.state.credit}')
        return SelectProduct(ctx.deps.customer.wants)


@dataclass
class SelectProduct(BaseNode[Sale, Deps, str]):
    """Check the chosen product against the stock and the credit."""

    product: str

    async def run(
        self, ctx: GraphRunContext[Sale, Deps]
    ) -> (
        Annotated[Dispense, Edge('enough credit')]
        | Annotated[InsertCoin, Edge('need more')]
        | Annotated[End[str], Edge('sold out')]
    ):
        machine = ctx.deps.machine
        if machine.stock.get(self.product, 0) == 0:
            return End(f'{self.product} is sold out; returned {ctx.state.credit} cents')
        if ctx.state.credit < machine.prices[self.product]:
            print(f'  {self.product} costs {machine.prices[self.product]}: need more')
            return InsertCoin()
        return Dispense(self.product)


@dataclass
class Dispense(BaseNode[Sale, Deps, str]):
    """Drop the product and give the change."""

    product: str

    async def run(self, ctx: GraphRunContext[Sale, Deps]) -> Annotated[End[str], Edge('give change')]:
        machine = ctx.deps.machine
        machine.stock[self.product] -= 1
        change = ctx.state.credit - machine.prices[self.product]
        ctx.state.credit = 0
        return End(f'dispensed {self.product}, change {change} cents')


vending_machine = Graph(nodes=(InsertCoin, SelectProduct, Dispense))


async def sell(machine: Machine, customer: Customer) -> str:
    """One customer at the machine; prints what happens."""
    print(f'customer wants {customer.wants}, has coins {customer.coins}')
    result = await vending_machine.run(InsertCoin(), state=Sale(), deps=Deps(machine, customer))
    print(f'  -> {result.output}')
    return result.output


async def serve_customers() -> None:
    """Three customers: one buys, one runs out of coins, one finds the product sold out."""
    machine = Machine(prices={'tea': 120, 'crisps': 90}, stock={'tea': 1, 'crisps': 5})
    await sell(machine, Customer(coins=[100, 50], wants='tea'))
    await sell(machine, Customer(coins=[50, 20], wants='crisps'))
    await sell(machine, Customer(coins=[200], wants='tea'))
    print(f'stock left: {machine.stock}')


def main() -> None:
    """Serve three customers."""
    anyio.run(serve_customers)


if __name__ == '__main__':
    main()

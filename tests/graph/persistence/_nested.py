"""A workflow with child runs of both kinds, for the tests of child runs in stores and in the `edgewise` command.

`Checkout` runs the `cart` graph as the subgraph run `cart`; `Scatter` fans out one `Pack` branch per item of
the cart (joined by `Ship`). An item named `'broken'` makes its branch fail (`on_error='collect'`: the join
gets a `BranchFailure`); one named `'crash'` stops the process there (`Crash`); one named `'gift'` runs the
`cart` graph as the subgraph run `wrap` inside its branch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from edgewise.graph import BaseNode, End, Graph, GraphRunContext
from edgewise.graph.fork import BranchFailure, Fork


class Crash(BaseException):
    """Stands for the process dying: not an `Exception`, so the interrupted steps go back to 'created'."""


@dataclass
class Cart:
    items: list[str] = field(default_factory=list)


@dataclass
class Order:
    cart: Cart = field(default_factory=Cart)
    items: list[str] = field(default_factory=list)
    """What to put in the cart."""


@dataclass
class AddItems(BaseNode[Cart, None, int]):
    items: list[str]

    async def run(self, ctx: GraphRunContext[Cart]) -> CountItems:
        ctx.state.items.extend(self.items)
        return CountItems()


@dataclass
class CountItems(BaseNode[Cart, None, int]):
    async def run(self, ctx: GraphRunContext[Cart]) -> End[int]:
        return End(len(ctx.state.items))


cart_graph = Graph(nodes=(AddItems, CountItems), name='cart_graph')


@dataclass
class Checkout(BaseNode[Order, None, str]):
    subgraphs = (cart_graph,)

    async def run(self, ctx: GraphRunContext[Order]) -> Scatter:
        await ctx.run_subgraph(cart_graph, AddItems(ctx.state.items), name='cart', state=ctx.state.cart)
        return Scatter()


@dataclass
class Scatter(BaseNode[Order, None, str]):
    async def run(self, ctx: GraphRunContext[Order]) -> Fork[Pack, Ship]:
        return Fork.map(Pack, ctx.state.cart.items, join=Ship, on_error='collect')


@dataclass
class Pack(BaseNode[Order, None, Any]):
    item: str

    async def run(self, ctx: GraphRunContext[Order]) -> End[str]:
        if self.item == 'broken':
            raise ValueError('cannot pack a broken item')
        if self.item == 'crash':
            raise Crash
        if self.item == 'gift':  # a subgraph run inside a branch: a child run of the branch's run
            count = await ctx.run_subgraph(cart_graph, AddItems(['ribbon']), name='wrap', state=Cart())
            return End(f'gift wrapped with {count} ribbon')
        return End(f'box of {self.item}')


@dataclass
class Ship(BaseNode[Order, None, str]):
    results: list[str | BranchFailure]

    async def run(self, ctx: GraphRunContext[Order]) -> End[str]:
        return End(', '.join(r if isinstance(r, str) else 'failed' for r in self.results))


order_graph = Graph(nodes=(Checkout, Scatter, Pack, Ship), name='order_graph')

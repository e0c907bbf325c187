"""Subgraphs: a node runs another graph as one step with `ctx.run_subgraph`; drawn as a composite state."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from edgewise.graph import BaseNode, End, FullStatePersistence, Graph, GraphRunContext, GraphRuntimeError
from edgewise.graph.events import CustomEvent, NodeStartedEvent, RunEndEvent

pytestmark = pytest.mark.anyio


@dataclass
class Cart:
    items: list[str] = field(default_factory=list)


@dataclass
class Order:
    cart: Cart = field(default_factory=Cart)
    receipt: str = ''


@dataclass
class AddItem(BaseNode[Cart, None, int]):
    item: str

    async def run(self, ctx: GraphRunContext[Cart]) -> Count:
        ctx.state.items.append(self.item)
        await ctx.emit(f'added {self.item}')
        return Count()


@dataclass
class Count(BaseNode[Cart, None, int]):
    async def run(self, ctx: GraphRunContext[Cart]) -> End[int]:
        return End(len(ctx.state.items))


cart_graph = Graph(nodes=(AddItem, Count), name='cart')


@dataclass
class Checkout(BaseNode[Order, None, str]):
    subgraphs = (cart_graph,)

    async def run(self, ctx: GraphRunContext[Order]) -> Receipt:
        count = await ctx.run_subgraph(cart_graph, AddItem('tea'), name='cart', state=ctx.state.cart)
        return Receipt(count)


@dataclass
class Receipt(BaseNode[Order, None, str]):
    count: int

    async def run(self, ctx: GraphRunContext[Order]) -> End[str]:
        return End(f'{self.count} item(s): {ctx.state.cart.items}')


shop = Graph(nodes=(Checkout, Receipt), name='shop')


async def test_subgraph_end_value_is_the_node_result_and_part_of_the_state_is_shared() -> None:
    state = Order(cart=Cart(['milk']))
    result = await shop.run(Checkout(), state=state)
    assert result.output == "2 item(s): ['milk', 'tea']"
    assert state.cart.items == ['milk', 'tea']


@dataclass
class Isolated(BaseNode[Order, None, str]):
    async def run(self, ctx: GraphRunContext[Order]) -> End[str]:
        count = await ctx.run_subgraph(cart_graph, AddItem('tea'), name='own', state=Cart())
        return End(f'{count} in its own cart, {len(ctx.state.cart.items)} in the order')


async def test_subgraph_with_its_own_state() -> None:
    result = await Graph(nodes=(Isolated,)).run(Isolated(), state=Order())
    assert result.output == '1 in its own cart, 0 in the order'


async def test_subgraph_events_carry_its_name_in_their_path() -> None:
    async with shop.stream(Checkout(), state=Order()) as events:
        seen = [event async for event in events]
    started = [(e.node.get_node_id(), e.path) for e in seen if isinstance(e, NodeStartedEvent)]
    assert started == [('Checkout', ()), ('AddItem', ('cart',)), ('Count', ('cart',)), ('Receipt', ())]
    assert [e for e in seen if isinstance(e, CustomEvent)] == [
        CustomEvent(data='added tea', node_id='AddItem', path=('cart',))
    ]
    assert isinstance(seen[-1], RunEndEvent)


@dataclass
class Twice(BaseNode[None, None, int]):
    async def run(self, ctx: GraphRunContext) -> End[int]:
        await ctx.run_subgraph(cart_graph, AddItem('a'), name='same', state=Cart())
        return End(await ctx.run_subgraph(cart_graph, AddItem('b'), name='same', state=Cart()))


async def test_a_child_name_used_twice_is_refused() -> None:
    with pytest.raises(GraphRuntimeError, match="Subgraph run name 'same' was used twice"):
        await Graph(nodes=(Twice,)).run(Twice())


async def test_subgraph_errors_propagate_unchanged() -> None:
    @dataclass
    class Fails(BaseNode[None, None, int]):
        async def run(self, ctx: GraphRunContext) -> End[int]:
            raise KeyError('out of stock')

    @dataclass
    class Outer(BaseNode[None, None, int]):
        async def run(self, ctx: GraphRunContext) -> End[int]:
            return End(await ctx.run_subgraph(Graph(nodes=(Fails,)), Fails(), name='inner'))

    persistence = FullStatePersistence[None, int]()
    with pytest.raises(KeyError, match='out of stock'):
        await Graph(nodes=(Outer,)).run(Outer(), persistence=persistence)
    assert [s.status for s in persistence.history if s.kind == 'node'] == ['error']


async def test_run_subgraph_needs_a_run_context() -> None:
    with pytest.raises(GraphRuntimeError, match='was not made by a graph run'):
        await GraphRunContext(state=None, deps=None).run_subgraph(cart_graph, AddItem('x'), name='x')


def test_mermaid_draws_a_subgraph_as_a_composite_state() -> None:
    assert shop.mermaid_code(start_node=Checkout) == '\n'.join(
        [
            '---',
            'title: shop',
            '---',
            'stateDiagram-v2',
            '  [*] --> Checkout',
            '  state Checkout {',
            '    AddItem --> Count',
            '    Count --> [*]',
            '  }',
            '  Checkout --> Receipt',
            '  Receipt --> [*]',
        ]
    )

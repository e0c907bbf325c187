"""Deps, labelled edges, docstring notes in diagrams, and the errors of setup and runtime."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import anyio

from edgewise.graph import (
    BaseNode,
    Edge,
    End,
    FullStatePersistence,
    Graph,
    GraphRunContext,
    GraphRuntimeError,
    GraphSetupError,
)
from edgewise.graph.exceptions import GraphNodeStatusError


@dataclass
class Prices:
    table: dict[str, float]


@dataclass
class Machine:
    credit: float = 0.0
    chosen: str | None = None


@dataclass
class Insert(BaseNode[Machine, Prices]):
    """Take a coin."""

    coin: float

    async def run(self, ctx: GraphRunContext[Machine, Prices]) -> Choose:
        ctx.state.credit += self.coin
        return Choose()


@dataclass
class Choose(BaseNode[Machine, Prices]):
    docstring_notes = True

    async def run(
        self, ctx: GraphRunContext[Machine, Prices]
    ) -> Annotated[Dispense, Edge(label='enough credit')] | Annotated[Insert, Edge(label='more coins')]:
        ctx.state.chosen = 'tea'
        if ctx.state.credit >= ctx.deps.table['tea']:
            return Dispense()
        return Insert(coin=0.5)


@dataclass
class Dispense(BaseNode[Machine, Prices, float]):
    """Hand over the product and the change."""

    docstring_notes = True

    async def run(self, ctx: GraphRunContext[Machine, Prices]) -> Annotated[End[float], Edge(label='change')]:
        assert ctx.state.chosen is not None
        return End(round(ctx.state.credit - ctx.deps.table[ctx.state.chosen], 2))


vending = Graph(nodes=(Insert, Choose, Dispense), name='vending')


@dataclass
class Rogue(BaseNode[None, None, None]):
    async def run(self, ctx: GraphRunContext) -> End[None]:
        return 42  # type: ignore[return-value]


@dataclass
class Outsider(BaseNode[None, None, None]):
    async def run(self, ctx: GraphRunContext) -> End[None]:
        return End(None)  # pragma: no cover


@dataclass
class Stranger(BaseNode[None, None, None]):
    async def run(self, ctx: GraphRunContext) -> Outsider:
        return Outsider()  # pragma: no cover


@dataclass
class Boom(BaseNode[None, None, None]):
    async def run(self, ctx: GraphRunContext) -> End[None]:
        raise ValueError('boom inside the node')


def show(error: BaseException) -> None:
    print(type(error).__mro__[1].__name__ if type(error).__name__ not in NAMES else type(error).__name__, '|', error)


NAMES = {'GraphSetupError', 'GraphRuntimeError', 'GraphNodeStatusError', 'ValueError', 'LookupError'}


async def main() -> None:
    result = await vending.run(Insert(coin=1.0), state=Machine(), deps=Prices(table={'tea': 1.8}))
    print(result.output, result.state)
    print(Choose.get_node_id(), Dispense.get_note(), Insert.get_note(), Choose.get_note())

    async with vending.iter(Insert(coin=2.0), state=Machine(), deps=Prices(table={'tea': 1.8})) as run:
        async for node in run:
            print(' ', node)

    try:
        await Graph(nodes=[Rogue]).run(Rogue())
    except GraphRuntimeError as error:
        print('non-node return:', isinstance(error, RuntimeError), error.message.startswith('Invalid node return type'))

    boom_history = FullStatePersistence()
    try:
        await Graph(nodes=[Boom]).run(Boom(), persistence=boom_history)
    except ValueError as error:
        show(error)
    print([getattr(s, 'status', None) for s in boom_history.history])

    try:
        async with vending.iter(Insert(coin=1.0), state=Machine(), deps=Prices(table={'tea': 1.0})) as run:
            await run.next(Outsider())  # type: ignore[arg-type]
    except GraphRuntimeError as error:
        show(error)

    history = FullStatePersistence()
    await vending.run(Insert(coin=2.0), state=Machine(), deps=Prices(table={'tea': 1.0}), persistence=history)
    try:
        async with history.record_run(history.history[0].id):
            pass
    except GraphNodeStatusError as error:
        show(error)
    try:
        async with history.record_run('nope'):
            pass
    except LookupError as error:
        show(error)


anyio.run(main)

print(vending.mermaid_code())
print(vending.mermaid_code(edge_labels=False, notes=False, title='no labels'))

try:
    Graph(nodes=(Insert, Choose, Dispense, Insert))
except GraphSetupError as error:
    print('duplicate:', isinstance(error, TypeError))
try:
    Graph(nodes=[Stranger])
except GraphSetupError as error:
    show(error)

"""Fan-outs and subgraphs in durable stores: each branch (each subgraph run) is a child run; an interrupted
fan-out resumes only the branches that had not finished, an interrupted subgraph resumes inside itself."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest

from edgewise.graph import BaseNode, End, Graph, GraphRunContext
from edgewise.graph.fork import BranchFailure, Fork

from .conftest import Store, run_id_of

pytestmark = pytest.mark.anyio


class Crash(BaseException):
    """Stands for the process dying: not an `Exception`, so the interrupted steps go back to 'created'."""


@dataclass
class Plan:
    """The run's state: the items done, merged from the branches."""

    done: list[int] = field(default_factory=list)


@dataclass
class Deps:
    """Counts node runs; `crash` makes branch 2 crash once branches 0 and 1 have finished (and 3 waits)."""

    crash: bool = False
    runs: Counter[str] = field(default_factory=Counter)
    finished: dict[int, anyio.Event] = field(default_factory=lambda: {0: anyio.Event(), 1: anyio.Event()})
    store: Any = None
    """The run's persistence, where `Risky` waits to see its sibling branches' outcomes stored before it crashes."""


@dataclass
class Item(BaseNode[Plan, Deps, str]):
    index: int

    async def run(self, ctx: GraphRunContext[Plan, Deps]) -> Square:
        ctx.deps.runs[f'Item{self.index}'] += 1
        if ctx.deps.crash and self.index == 2:
            await ctx.deps.finished[0].wait()
            await ctx.deps.finished[1].wait()
            raise Crash
        if ctx.deps.crash and self.index == 3:
            await anyio.sleep_forever()  # cancelled by the crash, mid-node
        return Square(self.index)


@dataclass
class Square(BaseNode[Plan, Deps, Any]):
    index: int

    async def run(self, ctx: GraphRunContext[Plan, Deps]) -> End[int]:
        ctx.deps.runs[f'Square{self.index}'] += 1
        ctx.state.done.append(self.index)
        if self.index in ctx.deps.finished:
            ctx.deps.finished[self.index].set()
        return End(self.index * self.index)


@dataclass
class Total(BaseNode[Plan, Deps, str]):
    results: list[int]

    async def run(self, ctx: GraphRunContext[Plan, Deps]) -> End[str]:
        return End(f'total {sum(self.results)} of {self.results}')


@dataclass
class Scatter(BaseNode[Plan, Deps, str]):
    async def run(self, ctx: GraphRunContext[Plan, Deps]) -> Fork[Item, Total]:
        return Fork.map(Item, range(4), join=Total)


def merge(state: Plan, branch: Plan) -> None:
    state.done.extend(branch.done)


scatter = Graph(nodes=(Scatter, Item, Square, Total), state_reducer=merge)


async def test_interrupted_fan_out_resumes_only_unfinished_branches(durable: Store) -> None:
    persistence = durable('order-7')
    deps = Deps(crash=True)
    with pytest.raises(BaseExceptionGroup) as raised:
        await scatter.run(Scatter(), state=Plan(), deps=deps, persistence=persistence)
    assert raised.group_contains(Crash)
    assert deps.runs == Counter({'Item0': 1, 'Square0': 1, 'Item1': 1, 'Square1': 1, 'Item2': 1, 'Item3': 1})

    resumed = durable.reopen(persistence)
    deps = Deps()
    async with scatter.iter_from_persistence(resumed, deps=deps) as run:
        async for _ in run:
            pass
    assert run.result is not None
    assert run.result.output == 'total 14 of [0, 1, 4, 9]'
    assert run.result.state == Plan(done=[0, 1, 2, 3])
    # Branches 0 and 1 had finished: their results were read back, not computed again.
    assert deps.runs == Counter({'Item2': 1, 'Square2': 1, 'Item3': 1, 'Square3': 1})


async def test_each_branch_is_a_child_run(durable: Store) -> None:
    persistence = durable('order-8')
    await scatter.run(Scatter(), state=Plan(), deps=Deps(), persistence=persistence)
    history = await persistence.load_all()
    fork_id = history[1].id
    assert history[1].node.get_node_id() == 'Fork'
    branch = durable.track(persistence.child(f'{fork_id}/3'))
    assert run_id_of(branch) == f'order-8/{fork_id}/3'
    raw = await branch.load_raw()
    assert [(s.kind, s.node.node_id if s.kind == 'node' else s.node.data) for s in raw] == [
        ('node', 'Item'),
        ('node', 'Square'),
        ('end', 9),
    ]


# --- subgraphs --------------------------------------------------------------------------------------------


@dataclass
class Wallet:
    balance: int


@dataclass
class Order:
    total: int
    wallet: Wallet = field(default_factory=lambda: Wallet(10))
    receipt: str = ''


@dataclass
class Charge(BaseNode[Wallet, Deps, str]):
    amount: int

    async def run(self, ctx: GraphRunContext[Wallet, Deps]) -> Confirm:
        ctx.deps.runs['Charge'] += 1
        ctx.state.balance -= self.amount
        return Confirm()


@dataclass
class Confirm(BaseNode[Wallet, Deps, str]):
    async def run(self, ctx: GraphRunContext[Wallet, Deps]) -> End[str]:
        ctx.deps.runs['Confirm'] += 1
        if ctx.deps.crash:
            raise Crash
        return End(f'paid, {ctx.state.balance} left')


payment = Graph(nodes=(Charge, Confirm), name='payment')


@dataclass
class Pay(BaseNode[Order, Deps, str]):
    subgraphs = (payment,)

    async def run(self, ctx: GraphRunContext[Order, Deps]) -> End[str]:
        ctx.deps.runs['Pay'] += 1
        receipt = await ctx.run_subgraph(payment, Charge(ctx.state.total), name='payment', state=ctx.state.wallet)
        return End(receipt)


shop = Graph(nodes=(Pay,), name='shop')


async def test_a_crash_inside_a_subgraph_resumes_inside_it(durable: Store) -> None:
    persistence = durable('order-42')
    with pytest.raises(Crash):
        await shop.run(Pay(), state=Order(total=3), deps=Deps(crash=True), persistence=persistence)
    child = durable.track(persistence.child('payment'))
    assert run_id_of(child) == 'order-42/payment'
    child.set_graph_types(payment)
    assert [(s.node, s.status) for s in await child.load_all()] == [(Charge(3), 'success'), (Confirm(), 'created')]

    deps = Deps()
    async with shop.iter_from_persistence(durable.reopen(persistence), deps=deps) as run:
        async for _ in run:
            pass
    assert run.result is not None
    assert run.result.output == 'paid, 7 left'
    # The charge ran once: the child run resumed at `Confirm`.
    assert deps.runs == Counter({'Pay': 1, 'Confirm': 1})


def _names(snapshots: list[Any]) -> list[str]:
    return [s.node.get_node_id() if s.kind == 'node' else 'end' for s in snapshots]


@dataclass
class Risky(BaseNode[None, Deps, Any]):
    index: int

    async def run(self, ctx: GraphRunContext[None, Deps]) -> End[int]:
        ctx.deps.runs[f'Risky{self.index}'] += 1
        if self.index == 1:
            raise ValueError('bad item')
        if ctx.deps.crash and self.index == 2:
            await ctx.deps.finished[0].wait()
            for _ in range(6000):  # the store is read until it holds them (a bound, not a timing assumption)
                if await _siblings_stored(ctx.deps.store):
                    raise Crash
                await anyio.sleep(0.01)
            raise AssertionError('branches 0 and 1 were never stored')  # pragma: no cover
        if self.index == 0:
            ctx.deps.finished[0].set()
        return End(self.index)


async def _siblings_stored(store: Any) -> bool:
    """Whether the store holds branch 0's end and branch 1's failure (each branch's write ends after its node)."""
    last = {name.rsplit('/', 1)[-1]: history[-1] for name, history in (await store.load_child_histories()).items()}
    return '0' in last and last['0'].kind == 'end' and '1' in last and last['1'].status == 'error'


@dataclass
class Outcomes(BaseNode[None, Deps, str]):
    results: list[int | BranchFailure]

    async def run(self, ctx: GraphRunContext[None, Deps]) -> End[str]:
        return End(repr(self.results))


@dataclass
class Spread(BaseNode[None, Deps, str]):
    async def run(self, ctx: GraphRunContext[None, Deps]) -> Fork[Risky, Outcomes]:
        return Fork.map(Risky, range(3), join=Outcomes, on_error='collect')


spread = Graph(nodes=(Spread, Risky, Outcomes))


async def test_a_branch_that_failed_before_the_crash_stays_failed(durable: Store) -> None:
    persistence = durable('order-9')
    with pytest.raises(BaseExceptionGroup):
        await spread.run(Spread(), deps=Deps(crash=True, store=persistence), persistence=persistence)
    deps = Deps()
    async with spread.iter_from_persistence(durable.reopen(persistence), deps=deps) as run:
        nodes = [node async for node in run]
    join = nodes[1]
    assert isinstance(join, Outcomes)
    first, failure, last = join.results
    assert (first, last) == (0, 2)
    assert isinstance(failure, BranchFailure)
    assert (failure.branch, failure.node_id) == (1, 'Risky')
    assert 'failed in an earlier attempt' in failure.error
    # Branch 0 had finished and branch 1 had failed: only branch 2 ran again.
    assert deps.runs == Counter({'Risky2': 1})

"""A streamed run in each durable store: a consumer that leaves cancels the run, which stays resumable, also in
the middle of a fan-out (only the branches that had not finished run again)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest

from edgewise.graph import BaseNode, End, Graph, GraphRunContext
from edgewise.graph.events import CustomEvent, NodeStartedEvent, RunEndEvent
from edgewise.graph.fork import Fork

from .conftest import Store

pytestmark = pytest.mark.anyio


@dataclass
class Tally:
    done: list[int] = field(default_factory=list)


@dataclass
class Deps:
    """`hold_last`: the branch that runs last waits forever (until the consumer leaves); `runs` counts node runs."""

    hold_last: bool = False
    held: int | None = None
    runs: Counter[str] = field(default_factory=Counter)


@dataclass
class Spread(BaseNode[Tally, Deps, str]):
    async def run(self, ctx: GraphRunContext[Tally, Deps]) -> Fork[Work, Gather]:
        ctx.deps.runs['Spread'] += 1
        # One branch at a time: the others have ended (and stored their end) when the last one starts.
        return Fork.map(Work, range(3), join=Gather, max_concurrency=1)


@dataclass
class Work(BaseNode[Tally, Deps, Any]):
    item: int

    async def run(self, ctx: GraphRunContext[Tally, Deps]) -> End[int]:
        ctx.deps.runs[f'Work{self.item}'] += 1
        if ctx.deps.hold_last and sum(ctx.deps.runs.values()) == 4:  # `Spread` and the two others ran
            ctx.deps.held = self.item
            await ctx.emit('holding')
            await anyio.sleep_forever()
        ctx.state.done.append(self.item)
        return End(self.item * 10)


@dataclass
class Gather(BaseNode[Tally, Deps, str]):
    results: list[int]

    async def run(self, ctx: GraphRunContext[Tally, Deps]) -> End[str]:
        ctx.deps.runs['Gather'] += 1
        return End(f'{self.results} {sorted(ctx.state.done)}')


def merge(state: Tally, branch: Tally) -> None:
    state.done.extend(item for item in branch.done if item not in state.done)


spread = Graph(nodes=(Spread, Work, Gather), state_reducer=merge, name='spread')


async def test_leaving_mid_fan_out_cancels_it_and_the_run_resumes_the_unfinished_branches(durable: Store) -> None:
    persistence = durable('streamed-1')
    deps = Deps(hold_last=True)
    async with spread.stream(Spread(), state=Tally(), deps=deps, persistence=persistence) as events:
        async for event in events:
            if isinstance(event, CustomEvent):
                assert event.data == 'holding'
                break
    assert deps.runs == Counter({'Spread': 1, 'Work0': 1, 'Work1': 1, 'Work2': 1})
    held = deps.held
    info = await durable.reopen(persistence).info()
    assert info is not None
    assert info.status == 'waiting'

    deps = Deps()
    async with spread.stream_from_persistence(durable.reopen(persistence), deps=deps) as events:
        seen = [event async for event in events]
    end = seen[-1]
    assert isinstance(end, RunEndEvent)
    assert end.output == '[0, 10, 20] [0, 1, 2]'
    assert deps.runs == Counter({f'Work{held}': 1, 'Gather': 1})
    started = [(e.node.get_node_id(), len(e.path)) for e in seen if isinstance(e, NodeStartedEvent)]
    assert started == [('Fork', 0), ('Work', 2), ('Gather', 0)]


async def test_leaving_between_steps_leaves_the_next_node_to_run(durable: Store) -> None:
    persistence = durable('streamed-2')
    deps = Deps()
    async with spread.stream(Spread(), state=Tally(), deps=deps, persistence=persistence, buffer_size=1) as events:
        async for event in events:
            if isinstance(event, NodeStartedEvent) and event.node.get_node_id() == 'Fork':
                break
    assert deps.runs['Gather'] == 0
    async with spread.iter_from_persistence(durable.reopen(persistence), deps=Deps()) as run:
        async for _ in run:
            pass
    assert run.result is not None
    assert run.result.output == '[0, 10, 20] [0, 1, 2]'

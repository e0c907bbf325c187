"""A small graph shared by the run, iteration and persistence tests: count up to a target, then stop."""

from __future__ import annotations

from dataclasses import dataclass, field

from edgewise.graph import BaseNode, End, Graph, GraphRunContext


@dataclass
class Counter:
    count: int = 0
    seen: list[str] = field(default_factory=list)


@dataclass
class Deps:
    target: int


@dataclass
class Increment(BaseNode[Counter, Deps, int]):
    by: int = 1

    async def run(self, ctx: GraphRunContext[Counter, Deps]) -> Check:
        ctx.state.count += self.by
        ctx.state.seen.append('Increment')
        return Check()


@dataclass
class Check(BaseNode[Counter, Deps, int]):
    async def run(self, ctx: GraphRunContext[Counter, Deps]) -> Increment | End[int]:
        ctx.state.seen.append('Check')
        if ctx.state.count >= ctx.deps.target:
            return End(ctx.state.count)
        return Increment()


counting_graph = Graph(nodes=(Increment, Check))

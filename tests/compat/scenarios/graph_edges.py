"""Edges from return hints: unions, `Union[...]`, aliases, bare `BaseNode`, nodes defined inside functions,
graph name inference on `run`, `get_node_id` overrides, and `End` without data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

import anyio

from edgewise.graph import BaseNode, End, Graph, GraphRunContext


@dataclass
class Hop(BaseNode[list[str], None, None]):
    async def run(self, ctx: GraphRunContext[list[str]]) -> Union[Skip, Stop]:  # noqa: UP007
        ctx.state.append('hop')
        return Skip() if len(ctx.state) < 3 else Stop()


@dataclass
class Skip(BaseNode[list[str], None, None]):
    async def run(self, ctx: GraphRunContext[list[str]]) -> BaseNode[list[str], None, None]:
        ctx.state.append('skip')
        return Hop()


@dataclass
class Stop(BaseNode[list[str], None, None]):
    @classmethod
    def get_node_id(cls) -> str:
        return 'the_stop'

    async def run(self, ctx: GraphRunContext[list[str]]) -> End[None]:
        return End(None)


hop_graph = Graph(nodes=(Hop, Skip, Stop))


def make_local_graph() -> Graph[None, None, int]:
    @dataclass
    class Inner(BaseNode[None, None, int]):
        n: int

        async def run(self, ctx: GraphRunContext) -> Inner | End[int]:
            return Inner(self.n - 1) if self.n else End(42)

    return Graph(nodes=(Inner,), name='local')


async def main() -> None:
    print(hop_graph.name)
    trail: list[str] = []
    result = await hop_graph.run(Hop(), state=trail)
    print(hop_graph.name, result.output, trail)
    print(sorted(hop_graph.node_defs), Stop.get_node_id())
    print(hop_graph.mermaid_code(start_node=Hop))

    local = make_local_graph()
    print(local.name, sorted(local.node_defs))
    first = next(iter(local.node_defs.values())).node
    local_result = await local.run(first(n=2))  # type: ignore[call-arg]
    print(local_result.output)
    print(local.mermaid_code())


anyio.run(main)

"""A traffic light: Green -> Yellow -> Red -> End, one node per light.

Run it with `python -m examples.graph.traffic_light`.
"""

from __future__ import annotations

from dataclasses import dataclass

import anyio

from edgewise.graph import BaseNode, End, Graph, GraphRunContext


@dataclass
class Green(BaseNode[None, None, str]):
    """Cars go."""

    async def run(self, ctx: GraphRunContext) -> Yellow:
        return Yellow()


@dataclass
class Yellow(BaseNode[None, None, str]):
    """Cars slow down."""

    async def run(self, ctx: GraphRunContext) -> Red:
        return Red()


@dataclass
class Red(BaseNode[None, None, str]):
    """Cars stop; the cycle ends here."""

    async def run(self, ctx: GraphRunContext) -> End[str]:
        return End('cycle complete')


traffic_light = Graph(nodes=(Green, Yellow, Red))


async def cycle() -> str:
    """Step through one cycle, printing each light as it comes on."""
    async with traffic_light.iter(Green()) as run:
        async for node in run:
            if isinstance(node, End):
                print(f'end: {node.data}')
            else:
                print(f'{node.get_node_id():<6} {type(node).__doc__}')
    assert run.result is not None
    return run.result.output


def main() -> None:
    """Run one cycle of the traffic light."""
    anyio.run(cycle)


if __name__ == '__main__':
    main()

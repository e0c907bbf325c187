"""A count-down: one node that loops on itself, with the count kept in the run's state.

Run it with `python -m examples.graph.countdown`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import anyio

from edgewise.graph import BaseNode, End, Graph, GraphRunContext


@dataclass
class CountdownState:
    """What the run remembers between steps."""

    remaining: int
    """Seconds left before liftoff."""
    calls: list[str] = field(default_factory=list)
    """What was said so far."""


@dataclass
class Tick(BaseNode[CountdownState, None, str]):
    """Say the number, then count down by one."""

    async def run(self, ctx: GraphRunContext[CountdownState]) -> Tick | Liftoff:
        ctx.state.calls.append(str(ctx.state.remaining))
        ctx.state.remaining -= 1
        return Liftoff() if ctx.state.remaining == 0 else Tick()


@dataclass
class Liftoff(BaseNode[CountdownState, None, str]):
    """The end of the count-down."""

    async def run(self, ctx: GraphRunContext[CountdownState]) -> End[str]:
        ctx.state.calls.append('liftoff!')
        return End(' '.join(ctx.state.calls))


countdown = Graph(nodes=(Tick, Liftoff))


async def count_from(start: int) -> str:
    """Count down from `start`, printing the state after each step."""
    state = CountdownState(remaining=start)
    async with countdown.iter(Tick(), state=state) as run:
        async for node in run:
            if not isinstance(node, End):
                print(f'next: {node.get_node_id():<7} remaining={state.remaining}')
    assert run.result is not None
    print(f'said: {run.result.output}')
    return run.result.output


def main() -> None:
    """Count down from 3."""
    anyio.run(count_from, 3)


if __name__ == '__main__':
    main()

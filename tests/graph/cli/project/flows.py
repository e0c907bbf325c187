"""Graphs the CLI tests point `edgewise` at (the tests copy this directory and run the command in it)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import anyio

from edgewise.graph import BaseNode, Edge, End, Graph, GraphRunContext


@dataclass
class Doc:
    title: str
    revisions: int = 0
    comments: list[str] = field(default_factory=list)


@dataclass
class Draft(BaseNode[Doc, None, str]):
    async def run(self, ctx: GraphRunContext[Doc]) -> Review:
        return Review()


@dataclass
class Review(BaseNode[Doc, None, str]):
    """Approve, or send back with a comment."""

    docstring_notes = True

    async def run(
        self, ctx: GraphRunContext[Doc]
    ) -> Annotated[Publish, Edge(label='approve')] | Annotated[Revise, Edge(label='request changes')]:
        if ctx.state.revisions < 2:
            return Revise(comment=f'round {ctx.state.revisions + 1}')
        return Publish()


@dataclass
class Revise(BaseNode[Doc, None, str]):
    comment: str

    async def run(self, ctx: GraphRunContext[Doc]) -> Review:
        ctx.state.revisions += 1
        ctx.state.comments.append(self.comment)
        return Review()


@dataclass
class Publish(BaseNode[Doc, None, str]):
    async def run(self, ctx: GraphRunContext[Doc]) -> Annotated[End[str], Edge(label='published')]:
        return End(f'{ctx.state.title} r{ctx.state.revisions}')


review_graph = Graph[Doc, None, str](nodes=[Draft, Review, Revise, Publish], auto_instrument=False)


@dataclass
class Ticks:
    count: int = 0


@dataclass
class Tick(BaseNode[Ticks, None, int]):
    async def run(self, ctx: GraphRunContext[Ticks]) -> Tick | End[int]:
        await anyio.sleep(float(os.environ.get('TICK_SECONDS', '0')))
        if 'TICK_BLOCK_DIR' in os.environ:  # blocking work, as a sync call in a node would do
            directory = Path(os.environ['TICK_BLOCK_DIR'])
            (directory / f'entered-{ctx.state.count}').touch()
            while not (directory / 'release').exists():
                time.sleep(0.01)  # noqa: ASYNC251
        if 'TICK_SAYS' in os.environ:
            print(os.environ['TICK_SAYS'], end=os.environ.get('TICK_SAYS_END', '\n'))
        ctx.state.count += 1
        return Tick() if ctx.state.count < 3 else End(ctx.state.count)


ticks_graph = Graph(nodes=[Tick], auto_instrument=False)


@dataclass
class Explode(BaseNode[Ticks, None, int]):
    async def run(self, ctx: GraphRunContext[Ticks]) -> End[int]:
        raise RuntimeError('boom')


failing_graph = Graph(nodes=[Explode], auto_instrument=False)

not_a_graph = 42

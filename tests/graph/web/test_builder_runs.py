"""The run page of a stored builder run draws its path: with the graph given (`--app`), the whole graph with its
marks and the items of its `.map()`; without it, the nodes and edges the run took."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest

from edgewise.graph.builder import GraphBuilder, StepContext, reduce_sum
from edgewise.graph.persistence.store import persistence_from_url

pytestmark = pytest.mark.anyio

g = GraphBuilder(input_type=list[int], output_type=int)


@g.step
async def square(ctx: StepContext[None, None, int]) -> int:
    if ctx.inputs < 0:
        raise ValueError('negative')
    return ctx.inputs * ctx.inputs


total = g.join(reduce_sum, initial=0, node_id='total')
g.add(g.edge_from(g.start_node).map().to(square), g.edge_from(square).to(total), g.edge_from(total).to(g.end_node))
squares = g.build()
squares.name = 'squares'


async def seed(url: str) -> None:
    """`done` (finished), `half` (stopped at its map's branches), `broken` (a branch raised)."""
    async with persistence_from_url(url, 'done') as persistence:
        await squares.run(inputs=[1, 2], persistence=persistence)
    async with (
        persistence_from_url(url, 'half') as persistence,
        squares.iter(inputs=[1, 2, 3], persistence=persistence) as run,
    ):
        async for event in run:
            if isinstance(event, list) and len(event) == 3:
                break
    async with persistence_from_url(url, 'broken') as persistence:
        with pytest.raises(ValueError, match='negative'):
            await squares.run(inputs=[-1], persistence=persistence)


def marks(page: str) -> dict[str, str]:
    return dict(re.findall(r'data-node="([^"]+)" data-mark="(\w*)"', html.unescape(page)))


def labels(page: str) -> list[str]:
    return re.findall(r'<text class="edge-label"[^>]*>([^<]*)</text>', page)


async def test_a_builder_run_is_drawn_on_its_graph(inspect: Any, sqlite_url: str) -> None:
    await seed(sqlite_url)
    inspector = inspect([sqlite_url], apps=[squares])

    half = (await inspector.get('/run', params={'store': 0, 'id': 'half'})).text
    assert marks(half) == {'[*]': 'done', 'map': 'done', 'square': 'waiting', 'total': '', 'End': ''}
    assert labels(half) == ['0/3 done']
    assert '<button class="resume">resume</button>' in half

    done = (await inspector.get('/run', params={'store': 0, 'id': 'done'})).text
    assert marks(done) == {'[*]': 'done', 'map': 'done', 'square': 'done', 'total': 'done', 'End': 'done'}
    assert labels(done) == ['2/2 done']
    assert len(re.findall('class="edge taken"', done)) == 4

    broken = (await inspector.get('/run', params={'store': 0, 'id': 'broken'})).text
    assert marks(broken)['square'] == 'failed'


async def test_a_builder_run_without_its_graph_is_drawn_from_what_it_took(inspect: Any, sqlite_url: str) -> None:
    await seed(sqlite_url)

    page = (await inspect([sqlite_url]).get('/run', params={'store': 0, 'id': 'half'})).text

    assert marks(page) == {'[*]': 'done', 'map': 'done', 'square': 'waiting'}
    assert len(re.findall('class="edge taken"', page)) == 2

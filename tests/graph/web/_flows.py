"""Workflows and stores the inspector's tests look at."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field

from edgewise.graph import BaseNode, End, Graph, GraphRunContext
from edgewise.graph.persistence.store import persistence_from_url


@dataclass
class Log:
    seen: list[str] = field(default_factory=list)


@dataclass
class Fetch(BaseNode[Log, None, int]):
    async def run(self, ctx: GraphRunContext[Log]) -> Parse:
        ctx.state.seen.append('fetch')
        return Parse()


@dataclass
class Parse(BaseNode[Log, None, int]):
    async def run(self, ctx: GraphRunContext[Log]) -> Store:
        ctx.state.seen.append('parse')
        return Store()


@dataclass
class Store(BaseNode[Log, None, int]):
    async def run(self, ctx: GraphRunContext[Log]) -> End[int]:
        ctx.state.seen.append('store')
        return End(len(ctx.state.seen))


@dataclass
class Explode(BaseNode[Log, None, int]):
    async def run(self, ctx: GraphRunContext[Log]) -> Fetch:
        raise RuntimeError('the disk is full')


@dataclass
class Check(BaseNode[Log, None, int]):
    async def run(self, ctx: GraphRunContext[Log]) -> Explode:
        ctx.state.seen.append('check')
        return Explode()


pipeline = Graph[Log, None, int](nodes=[Fetch, Parse, Store], name='pipeline', auto_instrument=False)
failing = Graph[Log, None, int](nodes=[Check, Explode, Fetch, Parse, Store], name='failing', auto_instrument=False)


async def seed(url: str) -> None:
    """`done` (finished), `half` (waiting at Store), `broken` (failed at Explode) in the store at `url`."""
    async with persistence_from_url(url, 'done') as persistence:
        await pipeline.run(Fetch(), state=Log(), persistence=persistence)
    async with (
        persistence_from_url(url, 'half') as persistence,
        pipeline.iter(Fetch(), state=Log(), persistence=persistence) as run,
    ):
        node = run.next_node
        for _ in range(2):
            node = await run.next(node)  # type: ignore[arg-type]
    async with persistence_from_url(url, 'broken') as persistence:
        with contextlib.suppress(RuntimeError):
            await failing.run(Check(), state=Log(), persistence=persistence)


@contextlib.contextmanager
def postgres_store_url() -> Iterator[str]:
    """A PostgreSQL store URL whose tables live in a new schema, dropped afterwards (skips without a server)."""
    import os

    import psycopg

    from ..persistence.conftest import postgres_dsn

    dsn = postgres_dsn()
    schema = f'edgewise_ui_{os.urandom(6).hex()}'
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA {schema}')
    try:
        yield f'{dsn}{"&" if "?" in dsn else "?"}options=-csearch_path%3D{schema}'
    finally:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA {schema} CASCADE')

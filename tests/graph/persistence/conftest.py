"""Backends for the persistence contract suite: memory, file, SQLite and PostgreSQL.

PostgreSQL comes from `EDGEWISE_TEST_POSTGRES_DSN` (skipped without it, unless
`EDGEWISE_REQUIRE_SERVICES=1`); each test gets a schema of its own (through the DSN's `search_path`), so
parallel test sessions sharing the server never see each other's runs.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from edgewise.graph import BaseStatePersistence, FullStatePersistence
from edgewise.graph.persistence.postgres import PostgresStatePersistence
from edgewise.graph.persistence.sqlite import SqliteStatePersistence
from edgewise.graph.persistence.store import DurableStatePersistence, persistence_from_url

DURABLE = ['file', 'sqlite', 'postgres']


def postgres_dsn() -> str:
    """The test server's DSN; skips the test when there is none (fails it under EDGEWISE_REQUIRE_SERVICES=1)."""
    dsn = os.environ.get('EDGEWISE_TEST_POSTGRES_DSN')
    if not dsn:
        if os.environ.get('EDGEWISE_REQUIRE_SERVICES') == '1':
            pytest.fail('EDGEWISE_TEST_POSTGRES_DSN is not set, and EDGEWISE_REQUIRE_SERVICES=1 requires PostgreSQL')
        pytest.skip('EDGEWISE_TEST_POSTGRES_DSN is not set')
    return dsn


@contextmanager
def postgres_schema() -> Iterator[str]:
    """A DSN whose tables live in a new schema, dropped afterwards."""
    import psycopg
    from psycopg.conninfo import make_conninfo

    dsn = postgres_dsn()
    schema = f'edgewise_test_{os.urandom(6).hex()}'
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA {schema}')
    try:
        yield make_conninfo(dsn, options=f'-csearch_path={schema}')
    finally:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA {schema} CASCADE')


@contextmanager
def postgres_schema_url() -> Iterator[str]:
    """`postgres_schema` as a store URL (`postgresql://...?options=-csearch_path%3D...`), for `edgewise` commands
    and `persistence_from_url`."""
    import psycopg

    dsn = postgres_dsn()
    schema = f'edgewise_test_{os.urandom(6).hex()}'
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA {schema}')
    try:
        yield f'{dsn}{"&" if "?" in dsn else "?"}options=-csearch_path%3D{schema}'
    finally:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA {schema} CASCADE')


@dataclass
class Store:
    """One store of one backend; `open(run_id)` gives a new persistence object for a run in it."""

    kind: str
    open: Callable[[str | None], BaseStatePersistence[Any, Any]]
    opened: list[BaseStatePersistence[Any, Any]] = field(default_factory=list)

    def __call__(self, run_id: str | None = None) -> Any:
        persistence = self.open(run_id)
        self.opened.append(persistence)
        return persistence

    def track(self, persistence: Any) -> Any:
        """Close `persistence` (e.g. a fork) with the others at the end of the test."""
        self.opened.append(persistence)
        return persistence

    def reopen(self, persistence: BaseStatePersistence[Any, Any]) -> Any:
        """A new object for the same run (the same object for memory, which has no other)."""
        if self.kind == 'memory':
            return persistence
        return self(run_id_of(persistence))


def make_store(kind: str, tmp_path: Path, dsn: str = '') -> Store:
    if kind == 'memory':
        return Store(kind, lambda run_id: FullStatePersistence())
    if kind == 'file':
        # As the `edgewise` command opens runs: a child run's id (`order-42/payment`) names a file in a folder.
        return Store(kind, lambda run_id: persistence_from_url(tmp_path.as_uri(), run_id or os.urandom(6).hex()))
    if kind == 'sqlite':
        return Store(kind, lambda run_id: SqliteStatePersistence(tmp_path / 'runs.db', run_id))
    return Store(kind, lambda run_id: PostgresStatePersistence(dsn, run_id))


async def close_all(store: Store) -> None:
    for persistence in store.opened:
        if isinstance(persistence, DurableStatePersistence):
            await persistence.aclose()


@asynccontextmanager
async def opened_store(kind: str, tmp_path: Path) -> AsyncIterator[Store]:
    with postgres_schema() if kind == 'postgres' else nullcontext('') as dsn:
        made = make_store(kind, tmp_path, dsn)
        try:
            yield made
        finally:
            await close_all(made)


@pytest.fixture(params=['memory', *DURABLE])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    """Each backend."""
    async with opened_store(request.param, tmp_path) as made:
        yield made


@pytest.fixture(params=DURABLE)
async def durable(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    """Each backend that stores runs outside the process."""
    async with opened_store(request.param, tmp_path) as made:
        yield made


def run_id_of(persistence: BaseStatePersistence[Any, Any]) -> str:
    assert isinstance(persistence, DurableStatePersistence)
    return persistence.run_id

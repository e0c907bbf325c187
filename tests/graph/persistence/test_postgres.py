"""PostgreSQL specifics: passwords never shown, explicit setup, listing runs, connection errors."""

from __future__ import annotations

import pytest

from edgewise.graph.exceptions import PersistenceError
from edgewise.graph.persistence.postgres import PostgresStatePersistence, mask_dsn

from ._workflow import Start, Tally, cycle_graph
from .conftest import postgres_schema

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ('dsn', 'masked'),
    [
        ('postgresql://app:s3cret@db:5432/runs', 'postgresql://app:***@db:5432/runs'),
        ('postgresql://app@db/runs', 'postgresql://app@db/runs'),
        ('host=db user=app password=s3cret dbname=runs', 'host=db user=app password=*** dbname=runs'),
        ("host=db password='s3 cret' dbname=runs", 'host=db password=*** dbname=runs'),
    ],
)
def test_passwords_are_masked(dsn: str, masked: str) -> None:
    assert mask_dsn(dsn) == masked
    persistence = PostgresStatePersistence(dsn, 'r')
    assert 's3' not in repr(persistence)
    assert persistence.dsn == masked


async def test_a_connection_failure_names_the_database_without_its_password() -> None:
    persistence = PostgresStatePersistence('postgresql://app:s3cret@127.0.0.1:1/runs', 'r')

    with pytest.raises(PersistenceError) as caught:
        await persistence.setup()
    assert caught.value.message.startswith(
        "PostgreSQL database 'postgresql://app:***@127.0.0.1:1/runs' failed for run 'r': "
    )
    assert 's3cret' not in str(caught.value)


async def test_setup_creates_the_tables_and_list_runs_lists_runs() -> None:
    with postgres_schema() as dsn:
        async with PostgresStatePersistence(dsn, 'first') as persistence:
            await persistence.setup()
            assert await PostgresStatePersistence.list_runs(dsn) == []
            await cycle_graph.run(Start(), state=Tally(target=1), persistence=persistence)

        [run] = await PostgresStatePersistence.list_runs(dsn)
        assert (run.run_id, run.graph_name, run.status, run.snapshot_count) == ('first', 'cycle_graph', 'finished', 4)


async def test_a_database_with_a_newer_schema_is_refused() -> None:
    import psycopg

    with postgres_schema() as dsn:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute('CREATE TABLE edgewise_schema_version (version INTEGER NOT NULL)')
            conn.execute('INSERT INTO edgewise_schema_version VALUES (99)')
        persistence = PostgresStatePersistence(dsn, 'r')
        with pytest.raises(PersistenceError, match='holds an Edgewise schema of version 99, newer than'):
            await persistence.setup()


async def test_a_database_error_is_reported_as_a_persistence_error() -> None:
    import psycopg

    with postgres_schema() as dsn:
        async with PostgresStatePersistence(dsn, 'r') as persistence:
            await cycle_graph.initialize(Start(), persistence, state=Tally())
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute('DROP TABLE edgewise_snapshots')
            with pytest.raises(PersistenceError, match='relation "edgewise_snapshots" does not exist'):
                await persistence.load_all()


async def test_runs_with_one_id_in_two_schemas_are_held_independently() -> None:
    # Advisory locks are database-wide: the key must include the schema, or two stores sharing a database
    # would refuse each other's runs.
    with postgres_schema() as first_dsn, postgres_schema() as second_dsn:
        first = PostgresStatePersistence(first_dsn, 'same-id')
        second = PostgresStatePersistence(second_dsn, 'same-id')
        try:
            await cycle_graph.initialize(Start(), first, state=Tally(target=1))
            await cycle_graph.initialize(Start(), second, state=Tally(target=1))
            async with cycle_graph.iter_from_persistence(first) as first_run:
                async with cycle_graph.iter_from_persistence(second) as second_run:
                    assert [type(n).__name__ async for n in second_run][-1] == 'End'
                assert [type(n).__name__ async for n in first_run][-1] == 'End'
        finally:
            await first.aclose()
            await second.aclose()

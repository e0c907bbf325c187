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

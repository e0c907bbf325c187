"""Store URLs: the persistence and the run list they open."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgewise.graph.exceptions import PersistenceError
from edgewise.graph.persistence.file import FileStatePersistence
from edgewise.graph.persistence.postgres import PostgresStatePersistence
from edgewise.graph.persistence.sqlite import SqliteStatePersistence
from edgewise.graph.persistence.store import list_runs, persistence_from_url

from ._workflow import Start, Tally, cycle_graph

pytestmark = pytest.mark.anyio


def test_sqlite_urls_take_relative_and_absolute_paths() -> None:
    relative = persistence_from_url('sqlite:///runs.db', 'r1')
    absolute = persistence_from_url('sqlite:////var/lib/runs.db')

    assert isinstance(relative, SqliteStatePersistence)
    assert (relative.path, relative.run_id) == (Path('runs.db'), 'r1')
    assert isinstance(absolute, SqliteStatePersistence)
    assert absolute.path == Path('/var/lib/runs.db')


def test_postgres_urls_keep_the_whole_dsn() -> None:
    persistence = persistence_from_url('postgresql://app:pw@db/runs', 'r1')
    assert isinstance(persistence, PostgresStatePersistence)
    assert repr(persistence) == "PostgresStatePersistence(dsn='postgresql://app:***@db/runs', run_id='r1')"
    assert isinstance(persistence_from_url('postgres://db/runs'), PostgresStatePersistence)


def test_file_urls_name_the_run_file_or_its_directory() -> None:
    one = persistence_from_url('file:///runs/r1.json')
    in_dir = persistence_from_url('file:///runs', 'r2')
    relative = persistence_from_url('file:runs/r3.json')

    assert isinstance(one, FileStatePersistence)
    assert isinstance(in_dir, FileStatePersistence)
    assert isinstance(relative, FileStatePersistence)
    assert (one.json_file, in_dir.json_file, relative.json_file) == (
        Path('/runs/r1.json'),
        Path('/runs/r2.json'),
        Path('runs/r3.json'),
    )


@pytest.mark.parametrize(
    ('url', 'message'),
    [
        ('mysql://u:pw@db/x', r"Unsupported store URL 'mysql://u:\*\*\*@db/x'"),
        ('runs.db', "Unsupported store URL 'runs.db'"),
        ('sqlite://runs.db', 'three slashes'),
    ],
)
def test_unknown_urls_are_refused(url: str, message: str) -> None:
    with pytest.raises(PersistenceError, match=message):
        persistence_from_url(url)


async def test_list_runs_reads_a_sqlite_store(tmp_path: Path) -> None:
    url = f'sqlite:///{tmp_path}/runs.db'
    await cycle_graph.run(Start(), state=Tally(target=1), persistence=persistence_from_url(url, 'r1'))

    [run] = await list_runs(url)
    assert (run.run_id, run.status) == ('r1', 'finished')


async def test_list_runs_of_a_file_url_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PersistenceError, match='Listing runs needs a SQLite or PostgreSQL store'):
        await list_runs(f'file://{tmp_path}/r1.json')


async def test_list_runs_reads_a_postgres_store() -> None:
    from psycopg.conninfo import conninfo_to_dict

    from .conftest import postgres_dsn, postgres_schema

    base = postgres_dsn()
    with postgres_schema() as dsn:
        schema = str(conninfo_to_dict(dsn)['options']).split('=')[1]
        url = f'{base}{"&" if "?" in base else "?"}options=-csearch_path%3D{schema}'
        persistence = persistence_from_url(url, 'r1')
        assert isinstance(persistence, PostgresStatePersistence)
        async with persistence:
            await cycle_graph.run(Start(), state=Tally(target=1), persistence=persistence)
        [run] = await list_runs(url)
    assert (run.run_id, run.status) == ('r1', 'finished')

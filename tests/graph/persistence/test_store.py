"""Store URLs: the persistence and the run list they open."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgewise.graph.exceptions import PersistenceError
from edgewise.graph.persistence.file import FileStatePersistence
from edgewise.graph.persistence.postgres import PostgresStatePersistence
from edgewise.graph.persistence.sqlite import SqliteStatePersistence
from edgewise.graph.persistence.store import StoreURL, list_runs, parse_store_url, persistence_from_url

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


def test_schemes_are_case_insensitive_and_paths_percent_decoded() -> None:
    assert parse_store_url('SQLite:///my%20runs.db') == StoreURL('sqlite', 'my runs.db', 'SQLite:///my%20runs.db')
    assert parse_store_url('FILE://localhost/runs/r1.json').location == '/runs/r1.json'
    assert parse_store_url('Postgres://db/runs').kind == 'postgresql'


@pytest.mark.parametrize(
    ('url', 'message'),
    [
        ('mysql://u:pw@db/x', r"Unsupported store URL 'mysql://u:\*\*\*@db/x'"),
        ('runs.db', "Unsupported store URL 'runs.db': for the SQLite file 'runs.db', write sqlite:///runs.db"),
        ('/var/runs.sqlite', 'write sqlite:////var/runs.sqlite'),
        ('sqlite://runs.db', 'three slashes'),
        ('sqlite:///', 'names no database file'),
        ('file://server/runs/r1.json', "names a file on host 'server'"),
        ('file:', 'names no file'),
    ],
)
def test_unknown_urls_are_refused(url: str, message: str) -> None:
    with pytest.raises(PersistenceError, match=message):
        persistence_from_url(url)


def test_a_file_url_names_the_run_it_holds() -> None:
    assert parse_store_url('file:///runs/r1.json').run_file == 'r1'
    assert parse_store_url('file:///runs').run_file is None
    assert persistence_from_url('file:///runs/r1.json', 'r1').run_id == 'r1'
    with pytest.raises(PersistenceError, match=r"No run 'r2' in 'file:///runs/r1\.json': that file holds run 'r1'"):
        persistence_from_url('file:///runs/r1.json', 'r2')
    with pytest.raises(PersistenceError, match='is a directory of runs: give the run id'):
        persistence_from_url('file:///runs')


async def test_list_runs_reads_a_sqlite_store(tmp_path: Path) -> None:
    url = f'sqlite:///{tmp_path}/runs.db'
    await cycle_graph.run(Start(), state=Tally(target=1), persistence=persistence_from_url(url, 'r1'))

    [run] = await list_runs(url)
    assert (run.run_id, run.status) == ('r1', 'finished')


async def test_list_runs_reads_a_directory_of_run_files_or_one_file(tmp_path: Path) -> None:
    runs = tmp_path / 'runs'
    assert await list_runs(f'file://{runs}') == []  # nothing there yet: no runs, and nothing created
    assert not runs.exists()
    runs.mkdir()
    await cycle_graph.run(Start(), state=Tally(target=1), persistence=persistence_from_url(f'file://{runs}', 'r1'))
    await cycle_graph.initialize(Start(), persistence_from_url(f'file://{runs}', 'r2'), state=Tally())

    listed = await list_runs(f'file://{runs}')
    [one] = await list_runs(f'file://{runs}/r2.json')

    assert [(r.run_id, r.graph_name, r.status, r.snapshot_count) for r in listed] == [
        ('r1', None, 'finished', 4),
        ('r2', None, 'waiting', 1),
    ]
    assert one == listed[1]
    (runs / 'notes.json').write_text('{"not": "a run"}')
    with pytest.raises(PersistenceError, match=r"notes\.json' cannot be used for run 'notes'"):
        await list_runs(f'file://{runs}')


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


def test_the_repr_of_a_postgres_url_never_shows_its_password() -> None:
    parsed = parse_store_url('postgresql://edgewise:s3cret-pw@db.example:5432/runs')

    assert 's3cret-pw' not in repr(parsed)
    assert repr(parsed) == "StoreURL(kind='postgresql', url='postgresql://edgewise:***@db.example:5432/runs')"

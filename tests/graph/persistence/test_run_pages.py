"""`list_runs_page`: pages of top-level runs, newest first, filtered in the store, with their child runs."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from edgewise.graph.exceptions import PersistenceError
from edgewise.graph.persistence import RunInfo
from edgewise.graph.persistence._pages import page_of
from edgewise.graph.persistence.store import RunQuery, list_runs_page

from ..web._flows import postgres_store_url, seed

pytestmark = pytest.mark.anyio


@pytest.fixture(params=['sqlite', 'postgres', 'file'])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == 'sqlite':
        yield f'sqlite:///{tmp_path / "runs.db"}'
    elif request.param == 'file':
        (tmp_path / 'runs').mkdir()
        yield f'file://{tmp_path / "runs"}'
    else:
        with postgres_store_url() as dsn:
            yield dsn


async def test_pages_newest_first_with_filters(store_url: str) -> None:
    await seed(store_url)

    first = await list_runs_page(store_url, RunQuery(limit=2))
    rest = await list_runs_page(store_url, RunQuery(limit=2, after=first.next_after))

    assert [r.run_id for r in first.runs] == ['broken', 'half']
    assert first.next_after == (first.runs[1].created, 'half')
    assert ([r.run_id for r in rest.runs], rest.next_after) == (['done'], None)
    by_status = {
        status: [r.run_id for r in (await list_runs_page(store_url, RunQuery(status=status))).runs]
        for status in ('finished', 'failed', 'waiting', 'running')
    }
    assert by_status == {'finished': ['done'], 'failed': ['broken'], 'waiting': ['half'], 'running': []}
    assert [r.run_id for r in (await list_runs_page(store_url, RunQuery(search='ha'))).runs] == ['half']


async def test_graph_name_filter_and_an_empty_store(tmp_path: Path) -> None:
    url = f'sqlite:///{tmp_path / "runs.db"}'
    assert (await list_runs_page(url)).runs == []
    await seed(url)

    page = await list_runs_page(url, RunQuery(graph_name='failing'))

    assert [r.run_id for r in page.runs] == ['broken']


async def test_a_status_filter_reads_on_until_the_page_is_full(tmp_path: Path) -> None:
    url = f'sqlite:///{tmp_path / "runs.db"}'
    await seed(url)
    await seed_more(url)

    page = await list_runs_page(url, RunQuery(limit=1, status='waiting'))
    second = await list_runs_page(url, RunQuery(limit=1, status='waiting', after=page.next_after))

    assert [r.run_id for r in page.runs] == ['half2']
    assert ([r.run_id for r in second.runs], second.next_after) == (['half'], None)


async def seed_more(url: str) -> None:
    from edgewise.graph.persistence.store import persistence_from_url

    from ..web._flows import Fetch, Log, pipeline

    for run_id in ('done2', 'done3'):
        async with persistence_from_url(url, run_id) as persistence:
            await pipeline.run(Fetch(), state=Log(), persistence=persistence)
    async with persistence_from_url(url, 'half2') as persistence:
        await pipeline.initialize(Fetch(), persistence, state=Log())
    for run_id in ('done4', 'done5'):
        async with persistence_from_url(url, run_id) as persistence:
            await pipeline.run(Fetch(), state=Log(), persistence=persistence)


def _info(run_id: str, minute: int) -> RunInfo:
    at = datetime(2026, 1, 1, tzinfo=timezone.utc) + timedelta(minutes=minute)
    return RunInfo(run_id=run_id, graph_name='g', status='finished', created=at, updated=at, snapshot_count=1)


def test_child_runs_come_with_their_top_level_run() -> None:
    runs = [_info('a', 1), _info('a/x', 2), _info('a/x/y', 3), _info('b', 4), _info('c/z', 5)]

    page = page_of(runs, RunQuery(limit=1, after=(runs[3].created, 'b')))

    assert [r.run_id for r in page.runs] == ['a']
    assert {k: [r.run_id for r in v] for k, v in page.children.items()} == {'a': ['a/x', 'a/x/y']}


async def test_sql_child_runs_come_with_their_page(tmp_path: Path) -> None:
    from edgewise.graph.persistence.sqlite import SqliteStatePersistence

    from ..web._flows import Fetch, Log, pipeline

    path = tmp_path / 'runs.db'
    async with SqliteStatePersistence(path, 'top') as parent:
        await pipeline.run(Fetch(), state=Log(), persistence=parent)
        async with parent.child('branch') as child:
            await pipeline.run(Fetch(), state=Log(), persistence=child)

    page = await list_runs_page(f'sqlite:///{path}')

    assert [r.run_id for r in page.runs] == ['top']
    assert [r.run_id for r in page.children['top']] == ['top/branch']


@pytest.mark.parametrize(
    ('kwargs', 'message'),
    [({'limit': 0}, 'at least one run'), ({'status': 'lost'}, "Unknown run status 'lost'")],
)
def test_bad_queries(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(PersistenceError, match=message):
        RunQuery(**kwargs)

"""The inspector's pages and actions, against a real SQLite file and the real PostgreSQL server."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from edgewise.graph.persistence.store import persistence_from_url

from ._flows import Log, failing, pipeline, seed

pytestmark = pytest.mark.anyio


async def _history(url: str, run_id: str) -> list[Any]:
    async with persistence_from_url(url, run_id) as persistence:
        return await persistence.load_raw()


def _rows(html: str) -> list[tuple[str, str]]:
    return re.findall(r'<tr class="run" data-run="([^"]+)" data-status="([^"]+)"', html)


async def test_the_runs_of_two_stores(inspect: Any, sqlite_url: str, postgres_url: str) -> None:
    await seed(sqlite_url)
    secret_url = postgres_url.replace('postgresql://postgres@', 'postgresql://postgres:hunter2@')
    await seed(secret_url)

    page = await inspect([sqlite_url, secret_url]).get('/')

    assert page.status_code == 200
    assert _rows(page.text) == [('broken', 'failed'), ('half', 'waiting'), ('done', 'finished')] * 2
    assert 'hunter2' not in page.text
    assert 'postgres:***@' in page.text


async def test_filters_and_pages(inspect: Any, store_url: str) -> None:
    await seed(store_url)
    app = inspect([store_url])

    assert _rows((await app.get('/?status=failed')).text) == [('broken', 'failed')]
    assert _rows((await app.get('/?name=pipeline')).text) == [('half', 'waiting'), ('done', 'finished')]
    assert _rows((await app.get('/?q=do')).text) == [('done', 'finished')]
    bad = await app.get('/?status=lost')
    assert (bad.status_code, 'Unknown status' in bad.text) == (400, True)
    cursor = await app.get('/?after0=yesterday')
    assert (cursor.status_code, 'not a page cursor' in cursor.text) == (400, True)


async def test_next_page_link(inspect: Any, sqlite_url: str) -> None:
    from edgewise.graph.web._app import build_app, make_inspector

    await seed(sqlite_url)
    inspector = make_inspector([sqlite_url])
    inspector.page_size = 2
    import httpx

    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=build_app(inspector)), base_url='http://localhost'
    ) as c:
        first = await c.get('/')
        link = re.search(r'<a class="more" href="([^"]+)"', first.text)
        assert link is not None
        second = await c.get(link.group(1).replace('&amp;', '&'))
    assert _rows(first.text) == [('broken', 'failed'), ('half', 'waiting')]
    assert _rows(second.text) == [('done', 'finished')]


async def test_a_failed_run_shows_its_end_and_the_failed_node(inspect: Any, store_url: str) -> None:
    await seed(store_url)

    page = await inspect([store_url]).get('/run', params={'store': 0, 'id': 'broken'})

    assert page.status_code == 200
    assert 'Failed: node Explode (step 2) raised' in page.text
    assert re.findall(r'data-node="(\w+)" data-mark="(\w*)"', page.text) == [('Check', 'done'), ('Explode', 'failed')]
    assert 'fork from here' in page.text


async def test_the_graph_of_an_app_is_drawn_whole_with_the_path(inspect: Any, sqlite_url: str) -> None:
    await seed(sqlite_url)

    page = await inspect([sqlite_url], apps=[pipeline, failing]).get('/run', params={'store': 0, 'id': 'half'})

    marks = dict(re.findall(r'data-node="(\w+)" data-mark="(\w*)"', page.text))
    assert marks == {'Fetch': 'done', 'Parse': 'done', 'Store': 'waiting', 'End': ''}
    assert '<button class="resume">resume</button>' in page.text


async def test_the_state_tree_and_diff(inspect: Any, sqlite_url: str) -> None:
    await seed(sqlite_url)

    app = inspect([sqlite_url])
    page = await app.get('/run', params={'store': 0, 'id': 'done'})
    first = await app.get('/api/step', params={'store': 0, 'id': 'done', 'step': 1})
    third = await app.get('/api/step', params={'store': 0, 'id': 'done', 'step': 3})

    # The page holds the steps' summaries only; a step's state and diff come when it is opened.
    assert '<span class="key">' not in page.text
    assert '<details id="step-3" data-step="3">' in page.text
    assert 'Result: 3' in page.text
    assert first.status_code == 200
    assert '<li>no change</li>' in first.text
    assert '<span class="key">[0]</span>: <span class="value">&quot;fetch&quot;</span>' in third.text
    assert '<code>+ seen[1]</code> &quot;parse&quot;' in third.text
    assert third.headers['x-frame-options'] == 'DENY'


@pytest.mark.parametrize(
    ('query', 'status', 'message'),
    [
        ('store=0&id=nope&step=1', 404, "No run 'nope'"),
        ('store=0&id=done&step=0', 404, "No step '0' in run 'done': its steps are numbered 1 to 4."),
        ('store=0&id=done&step=5', 404, "No step '5'"),
        ('store=0&id=done&step=x', 404, "No step 'x'"),
        ('store=0&id=done', 404, "No step ''"),
        ('store=3&id=done&step=1', 404, "No store '3'"),
        ('store=0&id=..&step=1', 400, 'is not a run id'),
    ],
)
async def test_unknown_steps(inspect: Any, sqlite_url: str, query: str, status: int, message: str) -> None:
    await seed(sqlite_url)

    answer = await inspect([sqlite_url]).get(f'/api/step?{query}')

    assert (answer.status_code, message in html.unescape(answer.text)) == (status, True)


async def test_a_step_of_a_missing_store_file(inspect: Any, tmp_path: Path) -> None:
    answer = await inspect([f'sqlite:///{tmp_path / "none.db"}']).get('/api/step?store=0&id=x&step=1')

    assert (answer.status_code, 'does not exist' in answer.text) == (404, True)


async def test_a_step_escapes_the_stored_state(inspect: Any, sqlite_url: str) -> None:
    async with persistence_from_url(sqlite_url, 'xss') as persistence:
        await pipeline.run(pipeline.node_defs['Fetch'].node(), state=Log(seen=['<img src=x onerror=alert(1)>']),
                           persistence=persistence)  # fmt: skip

    answer = await inspect([sqlite_url]).get('/api/step', params={'store': 0, 'id': 'xss', 'step': 2})

    assert '<img' not in answer.text
    assert '&lt;img src=x onerror=alert(1)&gt;' in answer.text


async def test_a_step_follows_the_host_and_token_rules(inspect: Any, sqlite_url: str) -> None:
    await seed(sqlite_url)
    app = inspect([sqlite_url], token='s3cret')
    url = '/api/step?store=0&id=done&step=2'

    foreign = await app.get(url, headers={'host': 'evil.example:8642'})
    refused = await app.get(url)
    given = await app.get(url, headers={'x-edgewise-token': 's3cret'})

    assert (foreign.status_code, refused.status_code, given.status_code) == (400, 401, 200)
    assert '+ seen[0]' in given.text


async def test_two_inspectors_on_two_ports_keep_their_own_token_cookie(inspect: Any, sqlite_url: str) -> None:
    await seed(sqlite_url)
    first = inspect([sqlite_url], token='one')
    second = inspect([sqlite_url], token='two')
    # One browser: the cookies of 127.0.0.1 are shared by all its ports.
    second.client.cookies = first.client.cookies
    second.client.base_url = httpx.URL('http://127.0.0.1:8643')

    logged_in_first = await first.get('/?token=one')
    logged_in_second = await second.get('/?token=two')
    both = (await first.get('/'), await second.get('/'))

    assert 'edgewise_ui_token_8642=' in logged_in_first.headers['set-cookie']
    assert 'edgewise_ui_token_8643=' in logged_in_second.headers['set-cookie']
    assert [page.status_code for page in both] == [200, 200]


async def test_live_updates_answer_no_change_cheaply(inspect: Any, sqlite_url: str) -> None:
    await seed(sqlite_url)
    app = inspect([sqlite_url])

    partial = await app.get('/run', params={'store': 0, 'id': 'half', 'partial': 1})
    version = partial.headers['x-edgewise-version']
    same = await app.get('/run', params={'store': 0, 'id': 'half', 'partial': 1, 'v': version})
    async with (
        persistence_from_url(sqlite_url, 'half') as persistence,
        pipeline.iter_from_persistence(persistence) as run,
    ):
        await run.next(run.next_node)  # type: ignore[arg-type]
    changed = await app.get('/run', params={'store': 0, 'id': 'half', 'partial': 1, 'v': version})

    assert (partial.status_code, same.status_code, changed.status_code) == (200, 204, 200)
    assert '<!doctype' not in partial.text
    assert 'Result: 3' in changed.text


async def test_a_live_page_gets_the_steps_from_the_last_it_has(inspect: Any, sqlite_url: str) -> None:
    await seed(sqlite_url)
    app = inspect([sqlite_url])
    ask = {'store': 0, 'id': 'done', 'partial': 1}

    later = await app.get('/run', params={**ask, 'since': 3})
    beyond = await app.get('/run', params={**ask, 'since': 9})
    bad = await app.get('/run', params={**ask, 'since': 'x'})
    page = await app.get('/run', params={'store': 0, 'id': 'done', 'since': 3})

    assert re.findall(r'<tr class="step" data-step="(\d+)"', later.text) == ['3', '4']
    assert '<table class="steps" data-from="3">' in later.text
    for whole in (beyond, bad, page):  # a step the run does not have, or not a live refresh: every step
        assert re.findall(r'<tr class="step" data-step="(\d+)"', whole.text) == ['1', '2', '3', '4']


@pytest.mark.parametrize(
    ('url', 'status', 'message'),
    [
        ('/run?store=0&id=nope', 404, "No run 'nope'"),
        ('/run?store=7&id=done', 404, "No store '7'"),
        ('/run?store=x&id=done', 404, "No store 'x'"),
        ('/run?store=-1&id=done', 404, "No store '-1'"),
    ],
)
async def test_unknown_runs_and_stores(inspect: Any, sqlite_url: str, url: str, status: int, message: str) -> None:
    await seed(sqlite_url)

    page = await inspect([sqlite_url]).get(url)

    assert (page.status_code, message in html.unescape(page.text)) == (status, True)


async def test_a_missing_store_file(inspect: Any, tmp_path: Path) -> None:
    app = inspect([f'sqlite:///{tmp_path / "none.db"}'])

    listing = await app.get('/')
    run = await app.get('/run?store=0&id=x')

    assert 'does not exist' in listing.text
    assert (run.status_code, 'does not exist' in run.text) == (404, True)
    assert not (tmp_path / 'none.db').exists()


async def test_foreign_hosts_are_refused(inspect: Any, sqlite_url: str) -> None:
    app = inspect([sqlite_url])
    allowed = inspect([sqlite_url], allowed_hosts=['inspector.lan'])

    foreign = await app.get('/', headers={'host': 'evil.example:8642'})
    local = await app.get('/', headers={'host': 'localhost:8642'})
    v6 = await app.get('/', headers={'host': '[::1]:8642'})
    named = await allowed.get('/', headers={'host': 'inspector.lan'})

    assert (foreign.status_code, "Host 'evil.example' is not served" in foreign.text) == (400, True)
    assert (local.status_code, v6.status_code, named.status_code) == (200, 200, 200)


async def test_the_access_token(inspect: Any, sqlite_url: str) -> None:
    await seed(sqlite_url)
    app = inspect([sqlite_url], token='s3cret')

    refused = await app.get('/')
    wrong = await app.get('/?token=guess')
    given = await app.get('/run?store=0&id=done&token=s3cret')
    after = await app.get('/run?store=0&id=done')
    app.client.cookies.clear()
    header = await app.get('/', headers={'x-edgewise-token': 's3cret'})

    assert (refused.status_code, 'needs its access token' in refused.text) == (401, True)
    assert wrong.status_code == 401
    assert (given.status_code, given.headers['location']) == (303, '/run?store=0&id=done')
    assert 'samesite=strict' in given.headers['set-cookie'].lower()
    assert (after.status_code, header.status_code) == (200, 200)


async def test_forged_actions_change_nothing(inspect: Any, sqlite_url: str) -> None:
    await seed(sqlite_url)
    app = inspect([sqlite_url])
    before = await _history(sqlite_url, 'done')
    csrf = (await app.get('/')).text.split('name="edgewise-csrf" content="')[1].split('"')[0]
    action = {'action': 'delete', 'store': 0, 'run_id': 'done'}

    no_token = await app.client.post('/api/action', json=action)
    wrong = await app.client.post('/api/action', json=action, headers={'x-edgewise-csrf': 'guess'})
    form = await app.client.post('/api/action', data=action, headers={'x-edgewise-csrf': csrf})
    origin = await app.client.post(
        '/api/action', json=action, headers={'x-edgewise-csrf': csrf, 'origin': 'http://evil.example'}
    )
    get = await app.get('/api/action')

    assert [r.status_code for r in (no_token, wrong, form, origin, get)] == [403, 403, 415, 403, 405]
    assert no_token.json() == {
        'ok': False,
        'error': 'An action needs the token of the page it comes from (reload the page). Nothing was changed.',
    }
    assert await _history(sqlite_url, 'done') == before


async def test_read_only_takes_no_action(inspect: Any, sqlite_url: str) -> None:
    await seed(sqlite_url)
    app = inspect([sqlite_url], read_only=True)

    page = await app.get('/run?store=0&id=done')
    answer = await app.act(action='delete', store=0, run_id='done')

    assert 'fork from here' not in page.text
    assert 'delete run' not in page.text
    assert (answer.status_code, answer.json()['error']) == (
        403,
        'This edgewise ui is read-only (--read-only): no action is taken.',
    )
    assert await _history(sqlite_url, 'done')


async def test_bad_action_bodies(inspect: Any, sqlite_url: str, tmp_path: Path) -> None:
    await seed(sqlite_url)
    app = inspect([sqlite_url])
    csrf = (await app.get('/')).text.split('name="edgewise-csrf" content="')[1].split('"')[0]
    headers = {'x-edgewise-csrf': csrf, 'content-type': 'application/json'}

    not_json = await app.client.post('/api/action', content=b'{', headers=headers)
    a_list = await app.client.post('/api/action', content=b'[]', headers=headers)
    unknown = await app.act(action='explode', store=0, run_id='done')
    no_run = await app.act(action='fork', store=0, run_id='nope', snapshot_id='x')
    bad_ids = await inspect([sqlite_url], apps=[pipeline]).act(action='answer', store=0, run_id='half', approve='r1')
    missing = await inspect([f'sqlite:///{tmp_path / "none.db"}', sqlite_url]).act(
        action='delete', store=0, run_id='done'
    )

    assert [r.status_code for r in (not_json, a_list, unknown, no_run)] == [400, 400, 400, 404]
    assert unknown.json()['error'] == "Unknown action 'explode': use fork, delete, resume or answer."
    assert (bad_ids.status_code, bad_ids.json()['error']) == (400, "'approve' is a list of tool call ids.")
    assert (missing.status_code, 'does not exist' in missing.json()['error']) == (404, True)
    assert not (tmp_path / 'none.db').exists()


async def test_fork_from_a_snapshot(inspect: Any, store_url: str) -> None:
    await seed(store_url)
    app = inspect([store_url])
    snapshot = (await _history(store_url, 'broken'))[0].id

    forked = await app.act(action='fork', store=0, run_id='broken', snapshot_id=snapshot)
    bad = await app.act(action='fork', store=0, run_id='broken', snapshot_id='Check:nope')

    assert forked.status_code == 200
    new_id = forked.json()['message'].removeprefix('Forked as run ').removesuffix('.')
    assert [s.id for s in await _history(store_url, new_id)] == [snapshot]
    assert (bad.status_code, bad.json()['error'].split(';')[0]) == (400, "Run broken has no snapshot 'Check:nope'")
    assert len(_rows((await app.get('/')).text)) == 4


async def test_delete_a_finished_run_only(inspect: Any, store_url: str) -> None:
    await seed(store_url)
    app = inspect([store_url])

    waiting = await app.act(action='delete', store=0, run_id='half')
    finished = await app.act(action='delete', store=0, run_id='done')

    assert (waiting.status_code, waiting.json()['error']) == (
        409,
        'Run half is waiting: only a finished or failed run is deleted here.',
    )
    assert finished.json() == {'ok': True, 'message': 'Deleted run done.', 'url': '/'}
    assert await _history(store_url, 'done') == []
    assert await _history(store_url, 'half')


async def test_resume_needs_the_app(inspect: Any, store_url: str) -> None:
    await seed(store_url)

    without = await inspect([store_url]).act(action='resume', store=0, run_id='half')
    finished = await inspect([store_url], apps=[pipeline]).act(action='resume', store=0, run_id='done')
    resumed = await inspect([store_url], apps=[pipeline]).act(action='resume', store=0, run_id='half')

    assert (without.status_code, 'start edgewise ui with --app' in without.json()['error']) == (400, True)
    assert (finished.status_code, finished.json()['error']) == (409, 'Run done already finished, with result 3.')
    assert resumed.json() == {'ok': True, 'message': 'Finished: result 3'}
    assert (await _history(store_url, 'half'))[-1].kind == 'end'


async def test_a_node_that_raises_while_resumed(inspect: Any, sqlite_url: str) -> None:
    async with persistence_from_url(sqlite_url, 'boom') as persistence:
        await failing.initialize(failing.node_defs['Check'].node(), persistence, state=Log())

    answer = await inspect([sqlite_url], apps=[failing]).act(action='resume', store=0, run_id='boom')

    assert (answer.status_code, answer.json()['error']) == (
        400,
        'Node Explode raised RuntimeError: the disk is full; run boom is marked failed.',
    )


async def test_a_directory_of_run_files(inspect: Any, tmp_path: Path) -> None:
    (tmp_path / 'runs').mkdir()
    url = f'file://{tmp_path / "runs"}'
    await seed(url)
    app = inspect([url])

    listing = await app.get('/')
    page = await app.get('/run?store=0&id=broken')

    assert sorted(_rows(listing.text)) == [('broken', 'failed'), ('done', 'finished'), ('half', 'waiting')]
    assert 'Failed: node Explode (step 2) raised' in page.text


@pytest.mark.parametrize('run_id', ['../other/done', '{other}/done', 'a\x00b', 'done/../done', 'done\\..\\x'])
async def test_run_ids_stay_inside_a_directory_store(inspect: Any, tmp_path: Path, run_id: str) -> None:
    (tmp_path / 'runs').mkdir()
    (tmp_path / 'other').mkdir()
    await seed(f'file://{tmp_path / "runs"}')
    await seed(f'file://{tmp_path / "other"}')
    run_id = run_id.format(other=tmp_path / 'other')
    app = inspect([f'file://{tmp_path / "runs"}'])

    page = await app.get('/run', params={'store': 0, 'id': run_id})
    deleted = await app.act(action='delete', store=0, run_id=run_id)
    forked = await app.act(action='fork', store=0, run_id=run_id, snapshot_id='x')

    assert (page.status_code, 'is not a run id' in html.unescape(page.text)) == (400, True)
    assert [r.status_code for r in (deleted, forked)] == [400, 400]
    assert 'is not a run id' in deleted.json()['error']
    assert (tmp_path / 'other' / 'done.json').exists()
    assert sorted(p.name for p in (tmp_path / 'runs').glob('*.json')) == ['broken.json', 'done.json', 'half.json']


async def test_tokens_with_other_characters_are_refused_not_crashed(inspect: Any, sqlite_url: str) -> None:
    await seed(sqlite_url)
    guarded = inspect([sqlite_url], token='s3cret')
    app = inspect([sqlite_url])

    query = await guarded.get('/?token=%C3%A9')
    header = await guarded.get('/', headers=[(b'x-edgewise-token', b'\xe9')])
    csrf = await app.client.post(
        '/api/action',
        json={'action': 'delete', 'store': 0, 'run_id': 'done'},
        headers=[(b'x-edgewise-csrf', b'\xe9')],
    )

    assert [r.status_code for r in (query, header, csrf)] == [401, 401, 403]
    assert await _history(sqlite_url, 'done')


async def test_a_deeply_nested_action_body(inspect: Any, sqlite_url: str) -> None:
    await seed(sqlite_url)
    app = inspect([sqlite_url])
    csrf = (await app.get('/')).text.split('name="edgewise-csrf" content="')[1].split('"')[0]

    deep = await app.client.post(
        '/api/action',
        content=b'[' * 100_000 + b']' * 100_000,
        headers={'x-edgewise-csrf': csrf, 'content-type': 'application/json'},
    )

    assert (deep.status_code, deep.json()['error']) == (400, 'The action is not valid JSON.')


async def test_a_page_cursor_without_a_time_zone(inspect: Any, tmp_path: Path, sqlite_url: str) -> None:
    (tmp_path / 'runs').mkdir()
    url = f'file://{tmp_path / "runs"}'
    await seed(url)
    await seed(sqlite_url)

    for store in (url, sqlite_url):
        app = inspect([store])
        later = await app.get('/?after0=2999-01-01T00:00:00|x')
        earlier = await app.get('/?after0=2000-01-01|x')

        assert later.status_code == 200
        assert sorted(_rows(later.text)) == [('broken', 'failed'), ('done', 'finished'), ('half', 'waiting')]
        assert (earlier.status_code, _rows(earlier.text)) == (200, [])


async def test_a_run_file_store_and_another_run_id(inspect: Any, tmp_path: Path) -> None:
    (tmp_path / 'runs').mkdir()
    await seed(f'file://{tmp_path / "runs"}')
    app = inspect([f'file://{tmp_path / "runs" / "done.json"}'])

    page = await app.get('/run?store=0&id=half')
    action = await app.act(action='delete', store=0, run_id='half')

    assert (page.status_code, "No run 'half'" in html.unescape(page.text)) == (404, True)
    assert (action.status_code, "No run 'half'" in action.json()['error']) == (404, True)
    assert (tmp_path / 'runs' / 'half.json').exists()


async def test_an_unreachable_store(inspect: Any, sqlite_url: str) -> None:
    await seed(sqlite_url)
    down = 'postgresql://postgres:hunter2@127.0.0.1:1/test'  # port 1: nothing listens, the connection is refused
    app = inspect([sqlite_url, down])

    listing = await app.get('/')
    page = await app.get('/run?store=1&id=done')
    action = await app.act(action='delete', store=1, run_id='done')

    assert listing.status_code == 200
    assert _rows(listing.text) == [('broken', 'failed'), ('half', 'waiting'), ('done', 'finished')]
    assert 'postgres:***@127.0.0.1:1/test' in listing.text
    assert (page.status_code, 'Connection refused' in page.text) == (503, True)
    assert (action.status_code, 'Connection refused' in action.json()['error']) == (503, True)
    assert all('hunter2' not in r.text for r in (listing, page, action))


async def test_pages_may_not_be_framed_by_another_site(inspect: Any, sqlite_url: str) -> None:
    await seed(sqlite_url)
    app = inspect([sqlite_url])

    for response in (await app.get('/'), await app.get('/run?store=0&id=half'), await app.get('/run?store=0&id=no')):
        assert response.headers['x-frame-options'] == 'DENY'
        policy = response.headers['content-security-policy']
        assert "frame-ancestors 'none'" in policy
        assert "script-src 'self'" in policy


async def test_the_token_redirect_stays_on_this_server(inspect: Any, sqlite_url: str) -> None:
    app = inspect([sqlite_url], token='s3cret')

    url = httpx.URL('http://127.0.0.1:8642').copy_with(raw_path=b'//evil.example/x?token=s3cret')
    given = await app.get(url)

    assert (given.status_code, given.headers['location']) == (303, '/evil.example/x')

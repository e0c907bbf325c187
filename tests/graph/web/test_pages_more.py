"""More of the inspector's pages: child runs, a stored error, page cursors, and what is not HTTP."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import pytest

from edgewise.graph.persistence.sqlite import SqliteStatePersistence
from edgewise.graph.web import create_app
from edgewise.graph.web._agent import AgentView, ConversationPart, PendingCall
from edgewise.graph.web._app import _agent_section

from ._flows import Fetch, Log, pipeline, seed

pytestmark = pytest.mark.anyio


async def test_child_runs_are_nested_under_their_run(inspect: Any, tmp_path: Path) -> None:
    path = tmp_path / 'runs.db'
    async with SqliteStatePersistence(path, 'top') as parent:
        await pipeline.run(Fetch(), state=Log(), persistence=parent)
        async with parent.child('branch') as child:
            await pipeline.run(Fetch(), state=Log(), persistence=child)
    app = inspect([f'sqlite:///{path}'])

    listing = await app.get('/')
    top = await app.get('/run?store=0&id=top')
    child = await app.get('/run', params={'store': 0, 'id': 'top/branch'})

    assert re.findall(r'data-run="([^"]+)" data-status', listing.text) == ['top', 'top/branch']
    assert 'padding-left:2.0em' in listing.text
    assert '<h2>Child runs (1)</h2>' in top.text
    assert 'child run of <a href="/run?store=0&amp;id=top">top</a>' in child.text
    assert 'delete run' not in child.text  # a child run goes with its run


async def test_the_stored_error_of_a_failed_step(inspect: Any, sqlite_url: str) -> None:
    await seed(sqlite_url)

    page = html.unescape((await inspect([sqlite_url]).get('/run?store=0&id=broken')).text)

    assert '<strong>RuntimeError</strong>: the disk is full<pre>Traceback (most recent call last):' in page
    assert "raise RuntimeError('the disk is full')" in page


async def test_a_cursor_without_its_run_id(inspect: Any, sqlite_url: str) -> None:
    await seed(sqlite_url)

    page = await inspect([sqlite_url]).get('/?after0=2026-01-01')

    assert page.status_code == 400


async def test_lifespan_events_pass_the_guard() -> None:
    app = create_app([])
    sent: list[dict[str, Any]] = []
    events = iter([{'type': 'lifespan.startup'}, {'type': 'lifespan.shutdown'}])

    async def receive() -> dict[str, Any]:
        return next(events)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app({'type': 'lifespan', 'state': {}}, receive, send)

    assert [m['type'] for m in sent] == ['lifespan.startup.complete', 'lifespan.shutdown.complete']


def test_the_conversation_and_the_calls_it_waits_for_are_escaped() -> None:
    script = '<script>alert(1)</script>'
    view = AgentView(
        parts=[ConversationPart('model', script), ConversationPart('tool call', {'q': script}, script, 'c"1')],
        usage={'requests': 1, 'input_tokens': 2, 'output_tokens': 3, 'tool_calls': 1},
        waiting_for='approval',
        approvals=[PendingCall(script, 'c"1', {'q': script})],
    )

    section = _agent_section(view, can_answer=True)

    assert script not in section
    assert '<li class="part model"><span class="who">model</span> &lt;script&gt;alert(1)&lt;/script&gt;</li>' in section
    assert 'data-call="c&quot;1"' in section
    assert 'usage: 1 requests, 2 input tokens, 3 output tokens, 1 tool calls' in section

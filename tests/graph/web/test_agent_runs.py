"""Agent runs in the inspector: the conversation, what the run waits for, approvals and denials as the CLI's."""

from __future__ import annotations

import html
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from edgewise.graph import BaseNode, End, Graph, GraphRunContext
from edgewise.graph.persistence.store import persistence_from_url

ROOT = Path(__file__).parents[3]
pytestmark = pytest.mark.anyio


@pytest.fixture
async def waiting(tmp_path: Path) -> tuple[str, Any]:
    sys.path.insert(0, str(ROOT))
    from examples.agent.durable_approval import agent, request

    await request(tmp_path / 'refunds.db')
    return f'sqlite:///{tmp_path / "refunds.db"}', agent


async def _last(url: str) -> Any:
    async with persistence_from_url(url, 'refund-42') as persistence:
        return (await persistence.load_raw())[-1]


async def test_the_page_of_a_run_waiting_for_approval(inspect: Any, waiting: tuple[str, Any]) -> None:
    url, agent = waiting

    listing = await inspect([url]).get('/')
    page = html.unescape((await inspect([url], apps=[agent]).get('/run?store=0&id=refund-42')).text)
    without_app = (await inspect([url]).get('/run?store=0&id=refund-42')).text

    assert 'waiting for approval' in listing.text
    assert 'user</span> Order A-1001 arrived broken' in page
    assert 'calls refund({"order": "A-1001", "cents": 4500}) [r1]' in page
    assert 'usage: 1 requests' in page
    assert 'Waiting for approval' in page
    assert '<button class="approve" data-call="r1">approve</button>' in page
    assert 'class="approve"' not in without_app


async def test_answers_are_checked_as_the_cli_checks_them(inspect: Any, waiting: tuple[str, Any]) -> None:
    url, agent = waiting
    app = inspect([url], apps=[agent])
    before = await _last(url)

    unknown = await app.act(action='answer', store=0, run_id='refund-42', approve=['r9'], deny=[])
    nothing = await app.act(action='resume', store=0, run_id='refund-42')

    assert (unknown.status_code, unknown.json()['error']) == (
        409,
        "Run 'refund-42' waits for no approval of tool call 'r9'; the calls waiting for approval are r1. "
        'Nothing was changed.',
    )
    assert nothing.status_code == 409
    assert nothing.json()['error'].startswith('Run refund-42 is waiting for approval of tool calls r1.')
    assert await _last(url) == before


async def test_a_denial_with_its_reason_finishes_the_run(inspect: Any, waiting: tuple[str, Any]) -> None:
    url, agent = waiting

    denied = await inspect([url], apps=[agent]).act(
        action='answer', store=0, run_id='refund-42', approve=[], deny=['r1'], reason='Opened goods: no refund.'
    )

    assert denied.status_code == 200
    assert denied.json()['message'].startswith('Finished: result FinalResult(output=')
    end = await _last(url)
    assert end.result.data['output'] == 'Dear customer: Opened goods: no refund.'


@dataclass
class _Chatty:
    message_history: list[Any] = field(default_factory=list)
    message_offset: int = 0
    usage: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Say(BaseNode[_Chatty, None, str]):
    async def run(self, ctx: GraphRunContext[_Chatty]) -> End[str]:
        return End('ok')


async def test_a_forged_agent_state_is_not_read_as_an_agent_run(inspect: Any, tmp_path: Path) -> None:
    # A graph's state that only looks like an agent's (strings where the agent stores counts) is read through the
    # agent package's contract, which refuses it: the page shows the run as a graph run, and nothing of it unescaped.
    url = f'sqlite:///{tmp_path / "runs.db"}'
    script = '<script>alert(1)</script>'
    state = _Chatty(
        message_history=[{'kind': 'request', 'parts': [{'part_kind': 'user-prompt', 'content': script}]}],
        usage={'requests': script, 'input_tokens': script, 'output_tokens': script, 'tool_calls': script},
    )
    graph = Graph[_Chatty, None, str](nodes=[_Say], name='chatty', auto_instrument=False)
    async with persistence_from_url(url, 'forged') as persistence:
        await graph.run(_Say(), state=state, persistence=persistence)

    page = await inspect([url]).get('/run?store=0&id=forged')

    assert page.status_code == 200
    assert '<h2>Conversation</h2>' not in page.text
    assert script not in page.text

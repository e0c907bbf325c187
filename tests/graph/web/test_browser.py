"""The inspector in a real browser: headless Chromium (the system's) driven by Playwright, a real uvicorn server.

Each test records every request the page makes and checks that none left 127.0.0.1 (the page works offline).
With `EDGEWISE_UI_SCREENSHOTS=DIR` the tests also save the screenshots of docs/ui.md there.
"""

from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest

from edgewise.graph import BaseNode, End, Graph, GraphRunContext
from edgewise.graph.persistence.store import persistence_from_url
from edgewise.graph.web import create_app

from ._browser import browser_page, chromium_or_skip, serve
from ._flows import seed

ROOT = Path(__file__).parents[3]
WAIT_MS = 30_000
"""How long an expectation waits for the page (it passes as soon as the page shows it)."""


@pytest.fixture(autouse=True)
def _chromium() -> None:
    chromium_or_skip()


def _screenshot(page: Any, name: str) -> None:
    folder = os.environ.get('EDGEWISE_UI_SCREENSHOTS')
    if folder:
        page.screenshot(path=str(Path(folder) / name), full_page=True)


def _all_local(requested: list[str], base: str) -> None:
    assert requested
    assert [url for url in requested if not url.startswith(f'{base}/')] == []


def test_the_run_list_shows_the_runs_of_two_stores(sqlite_url: str, postgres_url: str) -> None:
    from playwright.sync_api import expect

    anyio.run(seed, sqlite_url)
    anyio.run(seed, postgres_url)
    with serve(create_app([sqlite_url, postgres_url])) as base, browser_page() as (page, requested):
        page.goto(f'{base}/')

        expect(page.locator('section.store')).to_have_count(2)
        expect(page.locator('section.store[data-store="0"] tr.run')).to_have_count(3)
        expect(page.locator('section.store[data-store="1"] tr.run')).to_have_count(3)
        expect(page.locator('tr.run[data-run="broken"] .status').first).to_have_text('failed')
        _screenshot(page, 'ui-runs.png')
        page.select_option('select[name="status"]', 'waiting')
        page.click('form.filters button')
        expect(page.locator('tr.run')).to_have_count(2)
        _all_local(requested, base)


def test_a_failed_run_shows_the_error_and_the_failed_node_on_the_diagram(sqlite_url: str) -> None:
    from playwright.sync_api import expect

    anyio.run(seed, sqlite_url)
    with serve(create_app([sqlite_url])) as base, browser_page() as (page, requested):
        page.goto(f'{base}/')
        page.click('a:text("broken")')

        expect(page.locator('.outcome')).to_contain_text('Failed: node Explode (step 2) raised')
        failed = page.locator('svg.diagram g[data-node="Explode"]')
        expect(failed).to_have_attribute('class', 'node failed')
        expect(page.locator('svg.diagram g[data-node="Check"]')).to_have_attribute('class', 'node done')
        expect(page.locator('details#step-2 .tree')).to_have_count(0)  # fetched when the step is opened
        page.click('details#step-2 > summary')
        expect(page.locator('details#step-2 .diff')).to_contain_text('+ seen[0]')
        expect(page.locator('details#step-2 .tree').first).to_contain_text('"check"')
        _screenshot(page, 'ui-run-failed.png')
        _all_local(requested, base)


def test_approving_a_pending_call_in_the_page_finishes_the_stored_run(tmp_path: Path) -> None:
    from playwright.sync_api import expect

    sys.path.insert(0, str(ROOT))
    from examples.agent.durable_approval import RUN_ID, agent, request

    anyio.run(request, tmp_path / 'refunds.db')
    url = f'sqlite:///{tmp_path / "refunds.db"}'
    with serve(create_app([url], apps=[agent], poll_ms=200)) as base, browser_page() as (page, requested):
        page.goto(f'{base}/run?store=0&id={RUN_ID}')
        expect(page.locator('li.pending[data-call="r1"]')).to_contain_text('needs approval')
        _screenshot(page, 'ui-agent-waiting.png')
        page.click('button.approve[data-call="r1"]')

        expect(page.locator('.run-page')).to_have_attribute('data-status', 'finished', timeout=WAIT_MS)
        expect(page.locator('.conversation')).to_contain_text('Dear customer: order A-1001 is refunded.')
        _all_local(requested, base)

    async def last() -> Any:
        async with persistence_from_url(url, RUN_ID) as persistence:
            return (await persistence.load_raw())[-1]

    end = anyio.run(last)
    assert end.kind == 'end'
    assert end.result.data['output'] == 'Dear customer: order A-1001 is refunded.'


GATES: dict[str, threading.Event] = {}
"""Each node of `gated` waits for its gate: the test lets the run on one node at a time."""


@dataclass
class Steps:
    done: list[str] = field(default_factory=list)


async def _pass(name: str, state: Steps) -> None:
    await anyio.to_thread.run_sync(GATES[name].wait)
    state.done.append(name)


@dataclass
class Load(BaseNode[Steps, None, int]):
    async def run(self, ctx: GraphRunContext[Steps]) -> Transform:
        await _pass('Load', ctx.state)
        return Transform()


@dataclass
class Transform(BaseNode[Steps, None, int]):
    async def run(self, ctx: GraphRunContext[Steps]) -> Save:
        await _pass('Transform', ctx.state)
        return Save()


@dataclass
class Save(BaseNode[Steps, None, int]):
    async def run(self, ctx: GraphRunContext[Steps]) -> End[int]:
        await _pass('Save', ctx.state)
        return End(len(ctx.state.done))


gated = Graph[Steps, None, int](nodes=[Load, Transform, Save], name='gated', auto_instrument=False)


def test_the_list_and_a_live_run_page_follow_the_run_without_reloading(sqlite_url: str) -> None:
    from playwright.sync_api import expect

    GATES.update((name, threading.Event()) for name in ('Load', 'Transform', 'Save'))

    async def drive() -> None:
        async with persistence_from_url(sqlite_url, 'live') as persistence:
            await gated.run(Load(), state=Steps(), persistence=persistence)

    driver = threading.Thread(target=anyio.run, args=(drive,), daemon=True)
    driver.start()
    try:
        with serve(create_app([sqlite_url], poll_ms=100)) as base, browser_page() as (page, requested):
            page.goto(f'{base}/')
            row = page.locator('tr.run[data-run="live"]')
            expect(row).to_have_attribute('data-status', 'running', timeout=WAIT_MS)
            expect(row.locator('td.num')).to_have_text('1')
            page.evaluate('window.loadedOnce = true')
            GATES['Load'].set()
            expect(row.locator('td.num')).to_have_text('2', timeout=WAIT_MS)  # the list follows the run
            assert page.evaluate('window.loadedOnce') is True

            page.goto(f'{base}/run?store=0&id=live')
            page.evaluate('window.loadedOnce = true')
            node = page.locator('svg.diagram g[data-node]')
            expect(page.locator('svg.diagram g[data-node="Transform"]')).to_have_attribute('data-mark', 'running')
            expect(page.locator('svg.diagram g[data-node="Load"]')).to_have_attribute('data-mark', 'done')
            page.click('details#step-1 > summary')
            expect(page.locator('details#step-1 .tree').first).to_contain_text('state')
            page.evaluate("document.getElementById('step-1').dataset.mine = 'kept'")
            GATES['Transform'].set()
            expect(page.locator('svg.diagram g[data-node="Save"]')).to_have_attribute(
                'data-mark', 'running', timeout=WAIT_MS
            )
            expect(page.locator('svg.diagram g[data-node="Transform"]')).to_have_attribute('data-mark', 'done')
            expect(page.locator('tr.step[data-step="2"]')).to_have_attribute('data-status', 'success')
            # Only the new steps came: the opened first step is the same element, still open.
            expect(page.locator('details#step-1')).to_have_attribute('data-mine', 'kept')
            expect(page.locator('details#step-1 .tree').first).to_be_visible()
            _screenshot(page, 'ui-run-live.png')
            GATES['Save'].set()
            expect(page.locator('.run-page')).to_have_attribute('data-status', 'finished', timeout=WAIT_MS)
            expect(page.locator('.outcome')).to_have_text('Result: 3')
            expect(node).to_have_count(5)
            expect(page.locator('tr.step')).to_have_count(4)  # each step once
            assert page.evaluate('window.loadedOnce') is True
            _all_local(requested, base)
    finally:
        for gate in GATES.values():
            gate.set()
        driver.join(30)


QUOTED_ID = 'r"1\\x'
"""A tool call id with a quote and a backslash: the page finds the deny button's reason box all the same."""


def _quoting_model(messages: list[Any], info: Any) -> Any:
    from edgewise.agent.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart

    if len(messages) == 1:
        return ModelResponse([ToolCallPart('refund', {'order': 'A-7'}, QUOTED_ID)])
    last = messages[-1]
    assert isinstance(last, ModelRequest)
    outcome = next(p for p in last.parts if isinstance(p, ToolReturnPart))
    return ModelResponse([TextPart(f'Outcome: {outcome.content}')])


def test_denying_a_call_whose_id_has_quotes_sends_its_reason(tmp_path: Path) -> None:
    from playwright.sync_api import expect

    from edgewise.agent import Agent, DeferredToolRequests
    from edgewise.agent.models.function import FunctionModel

    quoting: Agent[None, Any] = Agent(FunctionModel(_quoting_model), output_type=[str, DeferredToolRequests])

    @quoting.tool_plain(requires_approval=True)
    def refund(order: str) -> str:  # pragma: no cover - denied, never runs
        return f'order {order} is refunded.'

    url = f'sqlite:///{tmp_path / "quoted.db"}'

    async def start() -> None:
        async with persistence_from_url(url, 'quoted') as persistence:
            await quoting.run('Refund A-7.', persistence=persistence)

    anyio.run(start)
    with serve(create_app([url], apps=[quoting], poll_ms=200)) as base, browser_page() as (page, requested):
        page.goto(f'{base}/run?store=0&id=quoted')
        page.locator('li.pending input.reason').fill('opened goods')
        page.locator('li.pending button.deny').click()

        expect(page.locator('.run-page')).to_have_attribute('data-status', 'finished', timeout=WAIT_MS)
        expect(page.locator('.conversation')).to_contain_text('opened goods')
        _all_local(requested, base)

"""The chat page in a real browser: headless Chromium (the system's, `/usr/bin/chromium`) driven by Playwright
holds a two-turn conversation with a scripted agent, approving one tool call and denying another, on a durable
store; the page shows the chat again after a reload and fetches nothing from outside 127.0.0.1."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from ._scripts import refund_agent
from ._server import serving

CHROMIUM = Path('/usr/bin/chromium')
# Set to a folder to keep the screenshot the test takes there (docs/images/chat.png is made this way).
SCREENSHOTS = os.environ.get('EDGEWISE_SCREENSHOTS')


def _playwright() -> Any:
    if not CHROMIUM.exists():
        pytest.skip('no Chromium at /usr/bin/chromium (Debian package `chromium`, installed by .ci/run)')
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # pragma: no cover - playwright is a dev dependency
        pytest.skip('Playwright for Python is not installed (dev dependency group)')
    return sync_playwright


def test_a_two_turn_chat_with_an_approval_and_a_denial_in_chromium(tmp_path: Path) -> None:
    sync_playwright = _playwright()
    app = refund_agent().to_web(persistence=f'sqlite:///{tmp_path}/chats.db')
    requested: list[str] = []
    with serving(app) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=['--no-sandbox', '--disable-dev-shm-usage'], headless=True
        )
        try:
            page = browser.new_page()
            page.on('request', lambda request: requested.append(request.url))
            page.set_default_timeout(30_000)
            page.goto(f'{base}/')
            page.wait_for_selector('body[data-ready="true"]')
            chat_id = page.url.removeprefix(f'{base}/')
            assert chat_id

            page.fill('#prompt', 'Please refund my order')
            page.click('#send')
            page.wait_for_selector('.tool.approval-requested button.approve')
            page.click('button.approve')
            page.wait_for_selector('#log >> text=done: A1 refunded')

            page.fill('#prompt', 'And the other one')
            page.press('#prompt', 'Enter')
            page.wait_for_selector('.tool.approval-requested button.deny')
            page.fill('.tool.approval-requested input.reason', 'not this one')
            page.click('button.deny')
            page.wait_for_selector('#log >> text=done: not this one')
            assert page.locator('.tool.output-available').count() == 1
            assert page.locator('.tool.output-denied').count() == 1
            if SCREENSHOTS:
                page.screenshot(path=str(Path(SCREENSHOTS) / 'chat.png'))

            page.reload()
            page.wait_for_selector('body[data-ready="true"]')
            page.wait_for_selector('#log >> text=done: not this one')
            users = page.locator('.msg.user').all_inner_texts()
            assert users == ['Please refund my order', 'And the other one']
            assert page.url == f'{base}/{chat_id}'
        finally:
            browser.close()
    assert requested
    assert all(url.startswith(f'{base}/') for url in requested), [u for u in requested if not u.startswith(base)]


def test_the_self_contained_page_runs_its_inlined_script_under_its_policy(tmp_path: Path) -> None:
    from edgewise.agent.ui import OFFLINE_HTML_URL

    sync_playwright = _playwright()
    app = refund_agent().to_web(html_source=OFFLINE_HTML_URL)
    requested: list[str] = []
    refused: list[str] = []
    with serving(app) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=['--no-sandbox', '--disable-dev-shm-usage'], headless=True
        )
        try:
            page = browser.new_page()
            page.on('request', lambda request: requested.append(request.url))
            page.on(
                'console',
                lambda message: refused.append(message.text) if 'Content Security Policy' in message.text else None,
            )
            page.set_default_timeout(30_000)
            page.goto(f'{base}/')
            page.wait_for_selector('body[data-ready="true"]')  # the inlined script ran
            page.fill('#prompt', 'Please refund my order')
            page.click('#send')
            page.wait_for_selector('.tool.approval-requested button.approve')
            page.click('button.approve')
            page.wait_for_selector('#log >> text=done: A1 refunded')
        finally:
            browser.close()
    assert refused == []
    assert not any('/assets/' in url for url in requested), requested  # styles and script came with the page
    assert all(url.startswith(f'{base}/') for url in requested)

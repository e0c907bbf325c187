"""Stores seeded with runs, and a client of the inspector's ASGI app (the app in the test's event loop)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from edgewise.graph.web import create_app

from ._flows import postgres_store_url


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f'sqlite:///{tmp_path / "runs.db"}'


@pytest.fixture
def postgres_url() -> Iterator[str]:
    with postgres_store_url() as url:
        yield url


@pytest.fixture(params=['sqlite', 'postgres'])
def store_url(request: pytest.FixtureRequest) -> str:
    return str(request.getfixturevalue(f'{request.param}_url'))


def csrf_of(html: str) -> str:
    """The per-session token a page carries for its actions."""
    start = html.index('name="edgewise-csrf" content="') + len('name="edgewise-csrf" content="')
    return html[start : html.index('"', start)]


class Inspector:
    """A client of an inspector app, with the page's token at hand for actions."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client

    async def get(self, url: str, **kwargs: Any) -> httpx.Response:
        return await self.client.get(url, **kwargs)

    async def act(self, **payload: Any) -> httpx.Response:
        csrf = csrf_of((await self.client.get('/')).text)
        return await self.client.post('/api/action', json=payload, headers={'x-edgewise-csrf': csrf})


@pytest.fixture
async def inspect() -> AsyncIterator[Any]:
    clients: list[httpx.AsyncClient] = []

    def open_app(stores: list[str], **options: Any) -> Inspector:
        app = create_app(stores, **options)
        client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url='http://127.0.0.1:8642')
        clients.append(client)
        return Inspector(client)

    yield open_app
    for client in clients:
        await client.aclose()

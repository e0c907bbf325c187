"""The chat app of `Agent.to_web()`: an ASGI app (Starlette, the `web` extra) to chat with an agent in a
browser, served offline: its page is a small HTML and JavaScript front end shipped in the wheel, fetching
nothing from elsewhere.

The page speaks the Vercel AI data stream protocol (`edgewise.agent.ui.vercel_ai`, AI SDK 6) to `/api/chat`.
It offers the models and native tools given, asks for approval of tool calls that need it, and keeps the
chat's id in the URL. With `persistence=` each turn of a chat is a durable agent run: a reload shows the chat
as stored, and approvals continue the waiting run even after a restart of the server.

Routes: `/` and `/<chat id>` (the page), `/offline.html` (the page as one self-contained document,
`edgewise.agent.ui.OFFLINE_HTML_URL`), `/assets/<name>`, `POST /api/chat` (JSON only), `GET /api/configure`,
`GET /api/chats/<chat id>` (a stored chat), `GET /api/health`. Every route answers only under a local `Host`
or one of `allowed_hosts` (421 otherwise).
"""

from __future__ import annotations as _annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._starlette import starlette_module

starlette_module('applications', '`edgewise.agent.ui.web` (`Agent.to_web()`)')

from ...native_tools import AbstractNativeTool  # noqa: E402
from ...settings import ModelSettings  # noqa: E402
from ._app import SDK_VERSION, ModelsParam, build_app  # noqa: E402
from ._durable import ChatPersistence  # noqa: E402

if TYPE_CHECKING:
    from starlette.applications import Starlette

__all__ = ('SDK_VERSION', 'ChatPersistence', 'ModelsParam', 'create_web_app')


def create_web_app(
    agent: Any,
    models: ModelsParam = None,
    native_tools: Sequence[AbstractNativeTool] | None = None,
    deps: Any = None,
    model_settings: ModelSettings | None = None,
    instructions: str | None = None,
    html_source: str | Path | None = None,
    allowed_hosts: Sequence[str] | None = None,
    *,
    persistence: str | ChatPersistence | None = None,
) -> Starlette:
    """A Starlette app serving a chat page for `agent` (run it with any ASGI server, e.g. `uvicorn`).

    Args:
        agent: The agent.
        models: Models to offer besides the agent's own: names or models, or a dict of them by label.
        native_tools: Native tools (e.g. `WebSearchTool()`) the user may switch on, per model that supports them.
        deps: The deps of every run.
        model_settings: The model settings of every run.
        instructions: Instructions added to every run.
        html_source: Another page to serve instead of the bundled one: a file, or an `http(s)://` URL fetched
            once (the bundled page needs neither network nor CDN); `edgewise.agent.ui.OFFLINE_HTML_URL` serves
            the bundled page as one self-contained document, `DEFAULT_HTML_URL` as the default does.
        allowed_hosts: Host names to answer under besides IP addresses and `localhost` (`'chat.example.com'`,
            `'*.example.com'` for subdomains, `'*'` for any: only behind something that authenticates).
        persistence: Store each chat's turns as durable agent runs: a store URL (`'sqlite:///chats.db'`,
            `'postgresql://...'`, `'file:///dir'`) or a function from a run id to a durable persistence.

    Raises:
        UserError: an `allowed_hosts` entry names no domain, or a model name is unknown.
    """
    return build_app(
        agent,
        models=models,
        native_tools=native_tools,
        deps=deps,
        model_settings=model_settings,
        instructions=instructions,
        html_source=html_source,
        allowed_hosts=allowed_hosts,
        persistence=persistence,
    )

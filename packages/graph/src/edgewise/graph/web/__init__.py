"""`edgewise ui`: a local web inspector of stored runs (the `edgewise-graph[web]` extra: Starlette and uvicorn).

```python {test="skip"}
from edgewise.graph.web import create_app

app = create_app(['sqlite:///runs.db'], apps=[order_graph])  # an ASGI app; `edgewise ui` serves one with uvicorn
```

The page is written on the server (HTML, the graph drawn as SVG by `_diagram`) with a little plain JavaScript
of its own for live updates and actions; nothing is fetched from elsewhere, so it works offline.
"""

from __future__ import annotations as _annotations

from collections.abc import Sequence
from typing import Any

try:
    import starlette  # noqa: F401
    import uvicorn  # noqa: F401
except ImportError as _missing:
    raise ModuleNotFoundError(
        f'edgewise ui needs the `web` extra ({_missing.name} is missing): pip install "edgewise-graph[web]"',
        name=_missing.name,
    ) from _missing

from ._app import LOOPBACK_HOSTS, build_app, make_inspector

__all__ = ('create_app', 'LOOPBACK_HOSTS')


def create_app(
    stores: Sequence[str],
    *,
    apps: Sequence[Any] = (),
    read_only: bool = False,
    token: str | None = None,
    allowed_hosts: Sequence[str] = (),
    poll_ms: int = 1000,
) -> Any:
    """The inspector as an ASGI app (a Starlette app).

    Args:
        stores: the store URLs whose runs it shows (`sqlite:///runs.db`, `postgresql://...`, `file:///dir`).
        apps: graphs and agents whose runs it may resume (matched to a run by graph name).
        read_only: take no action (no resume, approval, fork or delete).
        token: the access token each request must carry (`?token=` once, then a cookie); `None` for none.
        allowed_hosts: `Host` names served besides the local ones (127.0.0.1, localhost, ::1).
        poll_ms: how often an open page asks whether the run (or the list) changed, in milliseconds.

    Raises:
        PersistenceError: a store URL is not one.
    """
    inspector = make_inspector(
        stores, apps=apps, read_only=read_only, token=token, allowed_hosts=allowed_hosts, poll_ms=poll_ms
    )
    return build_app(inspector)

"""Starlette, imported only where an adapter answers HTTP itself (the `ui` and `web` extras)."""

from __future__ import annotations as _annotations

import importlib
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from types import ModuleType
from typing import Any

import anyio

__all__ = ('starlette_module', 'streaming_response')


def starlette_module(name: str, what: str) -> ModuleType:
    """Import `starlette.<name>`, or fail naming the extra that brings Starlette and `what` needs it.

    Raises:
        ModuleNotFoundError: Starlette is not installed (`name='starlette'`, so tools see what is missing).
    """
    try:
        return importlib.import_module(f'starlette.{name}')
    except ModuleNotFoundError as error:
        if sys.modules.get('starlette') is not None:  # Starlette is there, a module of it is not: no missing extra
            raise
        raise ModuleNotFoundError(
            f'{what} needs Starlette: install the `ui` extra, `pip install "edgewise-agent[ui]"` '
            '(or `[web]` for `Agent.to_web()`, `[ag-ui]` for the AG-UI adapter).',
            name='starlette',
        ) from error


def streaming_response(
    body: AsyncIterator[str],
    *,
    headers: Mapping[str, str] | None,
    media_type: str,
    on_disconnect: Callable[[], None] | None,
    what: str,
) -> Any:
    """A Starlette `StreamingResponse` sending `body`; with `on_disconnect`, one that calls it when the client goes
    away and then keeps reading `body` to its end (its last events go nowhere), so that the code producing `body`
    sees the client's abort as an ordinary end rather than as a cancellation of its own task."""
    responses = starlette_module('responses', what)
    if on_disconnect is None:
        return responses.StreamingResponse(body, headers=headers, media_type=media_type)
    return _disconnect_aware_class(responses.StreamingResponse)(
        body, headers=headers, media_type=media_type, on_disconnect=on_disconnect
    )


_disconnect_aware: type[Any] | None = None


def _disconnect_aware_class(base: type[Any]) -> type[Any]:
    # Made on first use: Starlette is an optional dependency.
    global _disconnect_aware
    if _disconnect_aware is not None:
        return _disconnect_aware

    class DisconnectAwareStreamingResponse(base):  # type: ignore[misc]
        """Streams its body to its end whatever the client does; calls `on_disconnect` once the client is gone."""

        def __init__(self, *args: Any, on_disconnect: Callable[[], None], **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._on_disconnect = on_disconnect
            self._gone = False

        def _client_gone(self) -> None:
            if not self._gone:
                self._gone = True
                self._on_disconnect()

        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            if scope['type'] != 'http':  # pragma: no cover - an adapter answers HTTP requests only
                await super().__call__(scope, receive, send)
                return

            async def watch() -> None:
                while (await receive())['type'] != 'http.disconnect':
                    pass
                self._client_gone()

            async def send_while_connected(message: Any) -> None:
                if self._gone:
                    return
                try:
                    await send(message)
                except OSError:  # (an ASGI 2.4 server says so when sending after the client left)
                    self._client_gone()

            async with anyio.create_task_group() as tg:
                tg.start_soon(watch)
                await self.stream_response(send_while_connected)
                tg.cancel_scope.cancel()
            if self.background is not None:  # pragma: no cover - the adapters set no background task
                await self.background()

    _disconnect_aware = DisconnectAwareStreamingResponse
    return _disconnect_aware

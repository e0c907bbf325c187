"""Spans through logfire-api, skipped entirely when logfire itself is not installed."""

from __future__ import annotations as _annotations

from contextlib import AbstractContextManager
from typing import Any

import logfire_api

__all__ = ('TRACING', 'span')

_logfire = logfire_api.Logfire(otel_scope='edgewise-graph')

# logfire-api replaces itself with logfire when logfire is importable; otherwise it is a no-op shim,
# and calling it on every step would still cost a function call and a kwargs dict for nothing.
TRACING: bool = logfire_api.__name__ != 'logfire_api'


def span(msg_template: str, **attributes: Any) -> AbstractContextManager[Any]:
    """A logfire span; only call it when `TRACING` is true."""
    return _logfire.span(msg_template, **attributes)

"""Spans through logfire-api (agent run, model request, tool call), skipped when logfire is not installed."""

from __future__ import annotations as _annotations

import warnings
from contextlib import AbstractContextManager
from typing import Any

import logfire_api

__all__ = ('TRACING', 'span')

_logfire = logfire_api.Logfire(otel_scope='edgewise-agent')

# logfire-api replaces itself with logfire when logfire is importable; otherwise it is a no-op shim that
# would still cost a call and a kwargs dict per span on the hot path.
TRACING: bool = logfire_api.__name__ != 'logfire_api'


def span(msg_template: str, **attributes: Any) -> AbstractContextManager[Any]:
    """A logfire span; only call it when `TRACING` is true."""
    with warnings.catch_warnings():
        # An application that has not configured logfire chose not to export spans: a library must not warn.
        warnings.filterwarnings('ignore', message='No logs or spans will be created')
        return _logfire.span(msg_template, **attributes)

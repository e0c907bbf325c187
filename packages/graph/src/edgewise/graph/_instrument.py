"""Spans through logfire-api, skipped entirely when logfire itself is not installed."""

from __future__ import annotations as _annotations

import warnings
from contextlib import AbstractContextManager
from typing import Any

import logfire_api

__all__ = ('TRACING', 'span')

_logfire = logfire_api.Logfire(otel_scope='edgewise-graph')

# logfire-api replaces itself with logfire when logfire is importable; otherwise it is a no-op shim,
# and calling it on every step would still cost a function call and a kwargs dict for nothing.
TRACING: bool = logfire_api.__name__ != 'logfire_api'


_warning_checked = False


def span(name: str, **attributes: Any) -> AbstractContextManager[Any]:
    """A logfire span named `name` (already formatted: other tracing backends show the name, not the message).

    Only call it when `TRACING` is true.
    """
    global _warning_checked
    if not _warning_checked:
        # logfire warns once, on the first span, when the application has not configured it; that is the
        # application's choice to make, not a library's warning to raise (and it breaks `-W error` test suites).
        with warnings.catch_warnings():
            warnings.filterwarnings('ignore', message='No logs or spans will be created')
            created = _logfire.span(name, **attributes)
        _warning_checked = True
        return created
    return _logfire.span(name, **attributes)

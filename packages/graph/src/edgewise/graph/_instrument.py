"""Spans through logfire-api, skipped entirely when logfire itself is not installed."""

from __future__ import annotations as _annotations

import importlib.util
import sys
import warnings
from contextlib import AbstractContextManager
from typing import Any

__all__ = ('TRACING', 'Tracer', 'span')

# logfire-api stands in for logfire when logfire is importable and is a no-op shim otherwise; calling the shim
# on every step would still cost a call and a kwargs dict for nothing, and importing it costs tens of
# milliseconds (it imports `unittest.mock`). So spans are made only when logfire is installed, and logfire-api
# is imported on the first span.


def _logfire_installed() -> bool:
    if 'logfire' in sys.modules:  # imported already, or blocked with `sys.modules['logfire'] = None`
        return sys.modules['logfire'] is not None
    return importlib.util.find_spec('logfire') is not None


TRACING: bool = _logfire_installed()


class Tracer:
    """Makes logfire spans under one instrumentation scope; only call `span` when `TRACING` is true."""

    def __init__(self, otel_scope: str) -> None:
        self._otel_scope = otel_scope
        self._logfire: Any = None

    def span(self, name: str, **attributes: Any) -> AbstractContextManager[Any]:
        """A logfire span named `name` (already formatted: other tracing backends show the name, not a template)."""
        if self._logfire is None:
            import logfire_api

            self._logfire = logfire_api.Logfire(otel_scope=self._otel_scope)
            # logfire warns once, on the first span, when the application has not configured it; that is the
            # application's choice, not a library's warning to raise (and it breaks `-W error` test suites).
            with warnings.catch_warnings():
                warnings.filterwarnings('ignore', message='No logs or spans will be created')
                return self._logfire.span(name, **attributes)  # type: ignore[no-any-return]
        return self._logfire.span(name, **attributes)  # type: ignore[no-any-return]


_tracer = Tracer('edgewise-graph')
span = _tracer.span

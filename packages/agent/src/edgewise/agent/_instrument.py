"""Spans through logfire-api (agent run, model request, tool call), made only when logfire is installed.

logfire-api is a no-op shim when logfire is missing, but calling it would still cost a call and a kwargs dict
per span, and importing it costs tens of milliseconds; so `span` gives a do-nothing context manager unless
logfire is importable, and logfire-api is imported on the first real span.
"""

from __future__ import annotations as _annotations

import importlib.util
import sys
import warnings
from contextlib import AbstractContextManager, nullcontext, suppress
from contextvars import ContextVar, Token
from typing import Any

__all__ = ('NO_SPAN', 'TRACING', 'span', 'span_if', 'request_span', 'in_traced_request', 'set_request_span_attributes')


def _logfire_installed() -> bool:
    if 'logfire' in sys.modules:  # imported already, or blocked with `sys.modules['logfire'] = None`
        return sys.modules['logfire'] is not None
    return importlib.util.find_spec('logfire') is not None


TRACING: bool = _logfire_installed()
"""Whether spans are made (tests turn it off to check that nothing depends on them)."""

_NO_SPAN: AbstractContextManager[None] = nullcontext()  # reusable: entering it holds no state
NO_SPAN = _NO_SPAN
"""The do-nothing stand-in for a span, for callers that skip building a span's attributes when they make none."""
_logfire: Any = None


def span(name: str, **attributes: Any) -> AbstractContextManager[Any]:
    """A logfire span named `name` under the `edgewise-agent` scope, or a context manager doing nothing when
    tracing is off. An exception leaving the block is recorded on the span."""
    global _logfire
    if not TRACING:
        return _NO_SPAN
    if _logfire is None:
        import logfire_api

        _logfire = logfire_api.Logfire(otel_scope='edgewise-agent')
        # logfire warns once, on the first span, when the application has not configured it; that is the
        # application's choice, not a library's warning to raise (and it breaks `-W error` test suites).
        with warnings.catch_warnings():
            warnings.filterwarnings('ignore', message='No logs or spans will be created')
            return _logfire.span(name, **attributes)  # type: ignore[no-any-return]
    return _logfire.span(name, **attributes)  # type: ignore[no-any-return]


def span_if(enabled: bool, name: str, **attributes: Any) -> AbstractContextManager[Any]:
    """`span(name, **attributes)` when `enabled` (the run's agent is instrumented), else a do-nothing manager."""
    return span(name, **attributes) if enabled else _NO_SPAN


_IN_TRACED_REQUEST: ContextVar[bool] = ContextVar('edgewise_in_traced_request', default=False)
_REQUEST_SPAN: ContextVar[tuple[Any, str] | None] = ContextVar('edgewise_request_span', default=None)


def in_traced_request() -> bool:
    """Whether the code runs inside the `chat` span of a model request (an instrumented run's, or an
    `InstrumentedModel`'s): the failed attempts of a fallback get spans of their own there, and nowhere else, and
    an `InstrumentedModel` inside opens no second `chat` span."""
    return _IN_TRACED_REQUEST.get()


def request_span(enabled: bool, model_name: str, run_step: int | None) -> AbstractContextManager[Any]:
    """The `chat {model_name}` span of a model request when `enabled` (the run is instrumented), else nothing.

    `run_step` is the request's step in its agent run; `None` for a request made outside a run (an
    `InstrumentedModel` used directly), whose span has no `run_step`."""
    if not enabled:
        return _NO_SPAN
    steps = {} if run_step is None else {'run_step': run_step}
    return _RequestSpan(span('chat {model_name}', model_name=model_name, **steps), model_name)


def set_request_span_attributes(model_name: str, attributes: dict[str, Any]) -> None:
    """Set `attributes` on the `chat` span of the traced request the code runs in, when that span is the one of the
    model named `model_name` (so a model nested in another leaves the span to the outer one). Best effort: tracing
    never changes the request's outcome."""
    found = _REQUEST_SPAN.get()
    if found is None or found[1] != model_name:
        return
    with suppress(Exception):
        if found[0].is_recording():
            found[0].set_attributes(attributes)


class _RequestSpan:
    """A request's span, marking the code inside it as in a traced request (`in_traced_request`)."""

    def __init__(self, inner: AbstractContextManager[Any], model_name: str) -> None:
        self._inner = inner
        self._model_name = model_name
        self._token: Token[bool] | None = None
        self._span_token: Token[tuple[Any, str] | None] | None = None

    def __enter__(self) -> Any:
        found = self._inner.__enter__()
        self._token = _IN_TRACED_REQUEST.set(True)
        self._span_token = _REQUEST_SPAN.set(None if found is None else (found, self._model_name))
        return found

    def __exit__(self, *exc_info: Any) -> Any:
        assert self._token is not None  # set on entering
        assert self._span_token is not None
        # Left in another context than it was entered in (a task that ends with it): nothing to undo.
        with suppress(ValueError):
            _REQUEST_SPAN.reset(self._span_token)
        with suppress(ValueError):
            _IN_TRACED_REQUEST.reset(self._token)
        return self._inner.__exit__(*exc_info)

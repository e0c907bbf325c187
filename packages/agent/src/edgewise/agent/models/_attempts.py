"""The records of the attempts at one model request that failed before one answered (or before the request failed).

Whatever makes more than one attempt at a request (`FallbackModel`, the `ModelFallback` capability, the agent's
attempt loop for a hook's `RetryModelRequest`) keeps an `AttemptLog`: each failed attempt becomes a
`ModelRequestAttempt` for the response that answers (`ModelResponse.failed_attempts`) or the `FallbackExceptionGroup`
that ends the request (`attempts`), and, when tracing is on, an ERROR span under the request's `chat` span.
"""

from __future__ import annotations as _annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from .. import _instrument
from .._cost import fill_response_cost
from .._messages.attempts import ModelRequestAttempt
from .._messages.model_messages import ModelResponse
from .._messages.usage_counts import RunUsage
from ..exceptions import FallbackExceptionGroup

if TYPE_CHECKING:
    from ._model import Model
    from ._streamed_response import StreamedResponse

__all__ = (
    'AttemptLog',
    'AttemptStart',
    'describe_error',
    'record_attempts_usage',
    'count_group_usage',
    'counting_group_usage',
)

ATTEMPT_INDEX_ATTRIBUTE = 'pydantic_ai.model_request.attempt'
"""The span attribute holding an attempt's position among the attempts at its request, from 0 (pydantic-ai's
name)."""


@dataclass(frozen=True)
class AttemptStart:
    """When an attempt started: the wall-clock time it is recorded with, and a monotonic clock to time it by (a
    change of the system clock does not change its duration)."""

    timestamp: datetime = field(default_factory=lambda: datetime.now(tz=timezone.utc))
    monotonic_ns: int = field(default_factory=time.perf_counter_ns)

    def elapsed(self) -> timedelta:
        """The time since the attempt started."""
        return timedelta(microseconds=(time.perf_counter_ns() - self.monotonic_ns) / 1000)


def describe_error(error: BaseException) -> str:
    """`error` as `'ExceptionType: message'` (just the type when the message is empty or cannot be made)."""
    name = type(error).__name__
    try:
        message = str(error)
    except Exception:  # a broken `__str__` must not cost the attempt its record
        return name
    return f'{name}: {message}' if message else name


def _attempt(model: Model, failure: Exception | ModelResponse, start: AttemptStart) -> ModelRequestAttempt:
    duration = start.elapsed()
    if isinstance(failure, Exception):
        return ModelRequestAttempt(
            model_name=model.model_name,
            provider_name=model.system,
            outcome='error',
            error=describe_error(failure),
            timestamp=start.timestamp,
            duration=duration,
        )
    fill_response_cost(failure)  # the turned-down response was billed: its record carries the price
    return ModelRequestAttempt(
        model_name=failure.model_name or model.model_name,
        provider_name=failure.provider_name or model.system,
        outcome='rejected',
        timestamp=start.timestamp,
        duration=duration,
        usage=failure.usage,
    )


@dataclass
class AttemptLog:
    """The failed attempts at one request, in order."""

    attempts: list[ModelRequestAttempt] = field(default_factory=list[ModelRequestAttempt])
    tracing: bool = field(default_factory=_instrument.in_traced_request)
    """Whether each attempt also gets an ERROR span: by default, when the log is made inside the `chat` span of an
    instrumented run's request."""

    def record(
        self,
        model: Model,
        failure: Exception | ModelResponse,
        start: AttemptStart,
        *,
        status: str = 'Response rejected',
    ) -> ModelRequestAttempt:
        """Record that the attempt at `model` begun at `start` failed with `failure`: an exception, or the response
        turned down (`status` says why, on its span). The attempts a nested fallback made inside it come first."""
        if isinstance(failure, ModelResponse):
            self.attempts.extend(failure.failed_attempts or ())
        elif isinstance(failure, FallbackExceptionGroup):
            self.attempts.extend(failure.attempts)
        attempt = _attempt(model, failure, start)
        self.attempts.append(attempt)
        if self.tracing:
            _attempt_span(attempt, failure, model, len(self.attempts) - 1, status)
        return attempt

    def attach(self, response: ModelResponse) -> ModelResponse:
        """`response`, carrying the attempts that failed before it (before any it carries already)."""
        if not self.attempts:
            return response
        return replace(response, failed_attempts=[*self.attempts, *(response.failed_attempts or ())])

    def attach_to_stream(self, stream: StreamedResponse) -> None:
        """Have the response of `stream` carry the attempts that failed before it opened."""
        if self.attempts:
            stream.failed_attempts = [*self.attempts, *(stream.failed_attempts or ())]

    def put_on(self, group: FallbackExceptionGroup) -> FallbackExceptionGroup:
        """`group`, listing these attempts (before those a nested fallback put on it)."""
        group.attempts = [*self.attempts, *(a for a in group.attempts if a not in self.attempts)]
        return group


def _attempt_span(
    attempt: ModelRequestAttempt, failure: Exception | ModelResponse, model: Model, index: int, status: str
) -> None:
    """An ERROR span for a failed attempt, under the current (`chat`) span; never named `chat`, so that views
    counting model calls do not count it. Best effort: tracing never changes the request's outcome."""
    attributes: dict[str, Any] = {
        'gen_ai.request.model': model.model_name,
        'gen_ai.system': model.system,
        ATTEMPT_INDEX_ATTRIBUTE: index,
        'duration_seconds': attempt.duration.total_seconds(),
    }
    if isinstance(failure, ModelResponse):
        attributes.update(failure.usage.opentelemetry_attributes())
        attributes['status_message'] = status
    try:
        with _instrument.span(
            'model request attempt {model_name}', model_name=model.model_name, _level='error', **attributes
        ) as span:
            if span is not None and isinstance(failure, Exception):
                span.record_exception(failure, escaped=False)
    except Exception:  # pragma: no cover - a failing exporter must not fail the request
        pass


_COUNTED = '_edgewise_attempts_counted'


def count_group_usage(
    usage: RunUsage, group: FallbackExceptionGroup, *, skip: Sequence[ModelRequestAttempt] = ()
) -> None:
    """Add the usage of the attempts of `group` (a request that failed whole) to the run's `usage`, once: a group
    whose usage was counted is marked so. `skip` are attempts whose usage was counted as they failed."""
    if getattr(group, _COUNTED, False):
        return
    setattr(group, _COUNTED, True)
    record_attempts_usage(usage, [a for a in group.attempts if not any(a is counted for counted in skip)])


class counting_group_usage:  # (a class, not a generator context manager: cheaper to enter, every request)
    """Count the usage of the attempts of a `FallbackExceptionGroup` leaving the block (see `count_group_usage`)."""

    __slots__ = ('usage',)

    def __init__(self, usage: RunUsage) -> None:
        self.usage = usage

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        if isinstance(exc, FallbackExceptionGroup):
            count_group_usage(self.usage, exc)  # the group is raised on as it is


def record_attempts_usage(usage: RunUsage, attempts: Sequence[ModelRequestAttempt] | None) -> None:
    """Add the tokens and cost of `attempts` (responses turned down) to the run's `usage`, not as requests: the run
    did not act on them, so `UsageLimits.request_limit` does not count them."""
    for attempt in attempts or ():
        if attempt.usage is not None:
            usage.incr(attempt.usage)
            usage.requests -= 1

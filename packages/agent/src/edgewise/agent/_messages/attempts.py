"""`ModelRequestAttempt`: the record of an attempt at a model request that did not give the response it is kept on
(`ModelResponse.failed_attempts`, `FallbackExceptionGroup.attempts`), as pydantic-ai 2.68 records them."""

from __future__ import annotations as _annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from .usage_counts import RequestUsage

__all__ = ('ModelRequestAttempt',)


@dataclass(repr=False, kw_only=True, frozen=True)
class ModelRequestAttempt:
    """An attempt at a model request that failed, before another attempt answered (or before the request failed).

    `FallbackModel` and the `ModelFallback` capability make one for every model they moved on from, and the agent one
    for every attempt a capability's hook ended with `RetryModelRequest`. They are kept, in order, on the response
    that answered (`ModelResponse.failed_attempts`), or on the `FallbackExceptionGroup` when none did.
    """

    model_name: str
    """The name of the model the attempt went to."""
    provider_name: str | None = None
    """The provider the attempt went to (the model's `system`)."""
    outcome: Literal['error', 'rejected']
    """`'error'`: the attempt raised (see `error`); `'rejected'`: the model answered, and its response was turned
    down (by a `fallback_on` response handler, or a hook's `RetryModelRequest` from `after_model_request`)."""
    error: str | None = None
    """The exception of an `'error'` attempt, written `'ExceptionType: message'`; `None` for a rejected one."""
    timestamp: datetime
    """When the attempt started."""
    duration: timedelta
    """How long the attempt took, until it failed or its response was turned down."""
    usage: RequestUsage | None = None
    """What the provider reported for the attempt (its response was billed even though the run did not keep it);
    `None` when unknown, as for an attempt that raised before any response."""

    def __repr__(self) -> str:
        names = ('model_name', 'provider_name', 'outcome', 'error', 'timestamp', 'duration', 'usage')
        shown = ', '.join(f'{name}={value!r}' for name in names if (value := getattr(self, name)) is not None)
        return f'ModelRequestAttempt({shown})'

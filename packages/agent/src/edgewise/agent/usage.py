"""Token and request accounting: `RequestUsage` per response, `RunUsage` per run, and `UsageLimits`."""

from __future__ import annotations as _annotations

import warnings
from dataclasses import dataclass, fields
from decimal import Decimal

from ._messages.model_messages import ModelMessage
from ._messages.usage_counts import RequestUsage, RunUsage
from ._warnings import CostNotFoundWarning, PydanticAIDeprecationWarning
from .exceptions import UsageLimitExceeded

__all__ = ('RequestUsage', 'RunUsage', 'UsageLimits')


@dataclass(repr=False, kw_only=True, init=False)
class UsageLimits:
    """Limits on a run's usage; `None` means no limit. Going past one raises `UsageLimitExceeded`."""

    cost_limit: Decimal | None = None
    """The most a run may cost, in USD. Checked against the run's known cost (`RunUsage.cost`) after each response
    and before each request; when the cost stays unknown (no prices for the model, or no `prices` extra), the run
    warns `CostNotFoundWarning` as it ends instead."""
    request_limit: int | None = 50
    """The most model requests a run may make."""
    tool_calls_limit: int | None = None
    """The most function tool calls a run may execute."""
    input_tokens_limit: int | None = None
    """The most input tokens a run may use."""
    output_tokens_limit: int | None = None
    """The most output tokens a run may use."""
    total_tokens_limit: int | None = None
    """The most tokens (input plus output) a run may use."""
    per_request_input_tokens_limit: int | None = None
    """The most input tokens one request may use (each request on its own, not summed over the run: a bound on the
    context's size). Checked against the input tokens the provider reports for each response, so the request that
    goes past it has been sent (and billed)."""
    count_tokens_before_request: bool = False
    """Accepted for compatibility; token counting before a request needs a provider that supports it."""

    def __init__(
        self,
        *,
        cost_limit: Decimal | None = None,
        request_limit: int | None = 50,
        tool_calls_limit: int | None = None,
        input_tokens_limit: int | None = None,
        output_tokens_limit: int | None = None,
        total_tokens_limit: int | None = None,
        per_request_input_tokens_limit: int | None = None,
        count_tokens_before_request: bool = False,
        request_tokens_limit: int | None = None,
        response_tokens_limit: int | None = None,
    ) -> None:
        """Set the limits (`request_tokens_limit` and `response_tokens_limit` are the deprecated names of
        `input_tokens_limit` and `output_tokens_limit`, used when those are not given)."""
        self.cost_limit = cost_limit
        self.request_limit = request_limit
        self.tool_calls_limit = tool_calls_limit
        self.input_tokens_limit = input_tokens_limit if input_tokens_limit is not None else request_tokens_limit
        self.output_tokens_limit = output_tokens_limit if output_tokens_limit is not None else response_tokens_limit
        self.total_tokens_limit = total_tokens_limit
        self.per_request_input_tokens_limit = per_request_input_tokens_limit
        self.count_tokens_before_request = count_tokens_before_request

    @property
    def request_tokens_limit(self) -> int | None:
        """Deprecated name of `input_tokens_limit`."""
        warnings.warn(
            '`request_tokens_limit` is deprecated, use `input_tokens_limit` instead', PydanticAIDeprecationWarning, 2
        )
        return self.input_tokens_limit

    @property
    def response_tokens_limit(self) -> int | None:
        """Deprecated name of `output_tokens_limit`."""
        warnings.warn(
            '`response_tokens_limit` is deprecated, use `output_tokens_limit` instead', PydanticAIDeprecationWarning, 2
        )
        return self.output_tokens_limit

    def has_token_limits(self) -> bool:
        """Whether any of the token limits is set."""
        return (
            self.input_tokens_limit is not None
            or self.output_tokens_limit is not None
            or self.total_tokens_limit is not None
            or self.per_request_input_tokens_limit is not None
        )

    def check_before_request(self, usage: RunUsage, messages: list[ModelMessage] | None = None) -> None:
        """Raise `UsageLimitExceeded` if one more request would go past `request_limit`, or the run's cost is past
        `cost_limit` already."""
        if self.request_limit is not None and usage.requests >= self.request_limit:
            raise UsageLimitExceeded(
                f'The next request would exceed the request_limit of {self.request_limit}', _copy(messages)
            )
        cost = usage.cost
        if cost is not None and self.cost_limit is not None and cost > self.cost_limit:
            raise UsageLimitExceeded(
                f'The next request would exceed the `cost_limit` of {self.cost_limit} (`cost`={cost!r})',
                _copy(messages),
            )

    def check_cost(
        self, usage: RunUsage, *, warn_if_cost_unavailable: bool = True, messages: list[ModelMessage] | None = None
    ) -> None:
        """Raise `UsageLimitExceeded` if the run's known cost is past `cost_limit`.

        Args:
            usage: The run's usage so far.
            warn_if_cost_unavailable: Warn `CostNotFoundWarning` when a `cost_limit` is set and the cost is unknown
                (a run does so once, as it ends: a later response may still be priced).
            messages: The run's messages, kept on the exception.
        """
        if self.cost_limit is None:
            return
        if usage.cost is None:
            if warn_if_cost_unavailable:
                warnings.warn(
                    'A `cost_limit` is set but cannot be enforced because no cost was calculated for this run: '
                    'there are no prices for the model or provider in use, or genai-prices (the `prices` extra of '
                    'edgewise-agent) is not installed.',
                    CostNotFoundWarning,
                    stacklevel=2,
                )
            return
        if usage.cost > self.cost_limit:
            raise UsageLimitExceeded(
                f'Exceeded the `cost_limit` of {self.cost_limit} (`usage.cost`={usage.cost!r})', _copy(messages)
            )

    def check_tokens(
        self, usage: RunUsage, messages: list[ModelMessage] | None = None, request: RequestUsage | None = None
    ) -> None:
        """Raise `UsageLimitExceeded` if `usage` is past one of the run's token limits, or `request` (the usage of
        the latest response) past `per_request_input_tokens_limit`."""
        for name, limit, value in (
            ('input_tokens', self.input_tokens_limit, usage.input_tokens),
            ('output_tokens', self.output_tokens_limit, usage.output_tokens),
            ('total_tokens', self.total_tokens_limit, usage.total_tokens),
        ):
            if limit is not None and value > limit:
                raise UsageLimitExceeded(f'Exceeded the {name}_limit of {limit} ({name}={value})', _copy(messages))
        if request is not None:
            self.check_per_request_input_tokens(request.input_tokens, messages)

    def check_per_request_input_tokens(
        self, request_input_tokens: int, messages: list[ModelMessage] | None = None
    ) -> None:
        """Raise `UsageLimitExceeded` if one request's input tokens are past `per_request_input_tokens_limit`."""
        limit = self.per_request_input_tokens_limit
        if limit is not None and request_input_tokens > limit:
            raise UsageLimitExceeded(
                f'Exceeded the per_request_input_tokens_limit of {limit} ({request_input_tokens=})', _copy(messages)
            )

    def check_before_tool_call(
        self, usage: RunUsage, new_calls: int = 1, messages: list[ModelMessage] | None = None
    ) -> None:
        """Raise `UsageLimitExceeded` if running `new_calls` more tool calls would go past `tool_calls_limit`."""
        projected = usage.tool_calls + new_calls
        if self.tool_calls_limit is not None and projected > self.tool_calls_limit:
            raise UsageLimitExceeded(
                f'The next tool call(s) would exceed the tool_calls_limit of {self.tool_calls_limit} '
                f'(tool_calls={projected}).',
                _copy(messages),
            )

    def __repr__(self) -> str:
        shown = ', '.join(
            f'{f.name}={getattr(self, f.name)!r}' for f in fields(self) if getattr(self, f.name) != f.default
        )
        return f'UsageLimits({shown})'


def _copy(messages: list[ModelMessage] | None) -> list[ModelMessage]:
    return list(messages) if messages is not None else []

"""The attempts of a model request step made through the capabilities' hooks (pydantic-ai 2.68's attempt loop).

A hook asks for another attempt by raising `RetryModelRequest`: from `on_model_request_error` (the attempt raised),
or from `after_model_request` (its response is turned down), optionally naming the model to attempt next. The step
stays the same: the history gets no retry prompt, the model is not told, and `RunUsage.requests` counts the step once
(a turned-down response's tokens and cost still count: it was billed). Each attempt that failed is recorded as a
`ModelRequestAttempt`, on the response that answers (`failed_attempts`) or on the `FallbackExceptionGroup` that ends
the step, and, when the run is instrumented, as an ERROR span under the request's `chat` span.

Edgewise runs `wrap_model_request` again for each attempt (pydantic-ai runs it once per step and the attempts inside
its handler); `before_model_request` runs once per step in both.
"""

from __future__ import annotations as _annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any

from edgewise.graph import GraphRunContext

from .._messages.attempts import ModelRequestAttempt
from .._run.deps import GraphAgentDeps
from .._run.state import GraphAgentState
from ..exceptions import FallbackExceptionGroup, ModelRetry, RetryModelRequest, SkipModelRequest, UserError
from ..messages import ModelResponse
from ..models import Model, ModelRequestContext, ModelRequestParameters, ModelResolutionContext, infer_model
from ..models._attempts import AttemptLog, AttemptStart, count_group_usage, record_attempts_usage
from ..models._request_timeout import timed_request
from ..tools import RunContext
from .continuation import continue_turn
from .history import for_model, sent_messages
from .request_hooks import HookedResponse, after_response, retry_outside_attempt

__all__ = ('MAX_MODEL_REQUEST_ATTEMPTS', 'StepAttempts', 'hooked_request')

MAX_MODEL_REQUEST_ATTEMPTS = 100
"""The most attempts one request step makes: past it, hooks that keep raising `RetryModelRequest` are an error."""

REJECTED_BY_HOOK = 'Response rejected by after_model_request'
"""The status of the span of an attempt whose response `after_model_request` turned down."""


@dataclass
class StepAttempts:
    """The failed attempts of one request step, and which of them the run's usage counts already."""

    log: AttemptLog = field(default_factory=AttemptLog)
    counted: list[ModelRequestAttempt] = field(default_factory=list[ModelRequestAttempt])
    """The attempts whose usage was added to the run's when they failed (the responses the hooks turned down)."""


async def hooked_request(
    ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[Any, Any]],
    params: ModelRequestParameters,
    settings: Any,
    run_ctx: RunContext[Any],
) -> HookedResponse:
    """Send the request through the `wrap_model_request` hooks (a failure, other than `ModelRetry`, goes to the
    `on_model_request_error` hooks; `SkipModelRequest` gives its response) and the response through the
    `after_model_request` hooks, once per attempt, until an attempt is not ended by a `RetryModelRequest`.

    Raises:
        UserError: the hooks asked for more than `MAX_MODEL_REQUEST_ATTEMPTS` attempts.
    """
    state, deps = ctx.state, ctx.deps
    request_context = ModelRequestContext(
        model=deps.request_model or deps.model, messages=sent_messages(state, deps, params),
        model_settings=settings, model_request_parameters=params,
    )  # fmt: skip
    request_context.model_id = deps.model_id
    attempts = StepAttempts()
    while True:
        start = AttemptStart()
        outcome = HookedResponse(request_context, attempts=attempts)
        try:
            await _attempt(ctx, run_ctx, outcome)
        except _NextAttempt as retry:
            failed = attempts.log.record(request_context.model, retry.failure, start, status=retry.status)
            if isinstance(retry.failure, ModelResponse):  # billed, though never recorded: its usage counts now
                record_attempts_usage(state.usage, [*(retry.failure.failed_attempts or ()), failed])
                attempts.counted.extend([*(retry.failure.failed_attempts or ()), failed])
            request_context = await _next_attempt(deps, request_context, retry.request)
            continue
        except FallbackExceptionGroup as group:  # every model of a fallback failed, and no hook recovered
            attempts.log.put_on(group)
            count_group_usage(state.usage, group, skip=attempts.counted)
            raise
        if outcome.response is not None:
            outcome.response = attempts.log.attach(outcome.response)
            if outcome.response.model_id is None and request_context.attempt > 1:  # the model the attempts ended on
                outcome.response.model_id = request_context.model_id or request_context.model.model_id
        elif outcome.sent is not None:  # kept in the history before the hook's `ModelRetry`
            outcome.sent = attempts.log.attach(outcome.sent)
        return outcome


class _NextAttempt(Exception):
    """A hook's `RetryModelRequest` ended the attempt: `failure` is the error or the turned-down response."""

    def __init__(self, request: RetryModelRequest, failure: Exception | ModelResponse, status: str) -> None:
        self.request, self.failure, self.status = request, failure, status
        super().__init__()


async def _attempt(
    ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[Any, Any]], run_ctx: RunContext[Any], outcome: HookedResponse
) -> None:
    """One attempt: fills `outcome` with the response (or the hooks' `ModelRetry`); raises `_NextAttempt` when a
    hook ends the attempt with `RetryModelRequest`."""
    deps = ctx.deps
    root = deps.root_capability

    async def send(request_context: ModelRequestContext) -> ModelResponse:
        model = request_context.model
        params = request_context.model_request_parameters
        messages = for_model(request_context.messages, model, params, deps)
        settings = request_context.model_settings
        outcome.sent = await timed_request(model, messages, settings, params)
        # The provider paused the turn: ask it to go on until it is whole (unless the run ends with it as its
        # `PendingModelResponse` output).
        if outcome.sent.state == 'suspended' and not deps.output_schema.allows_pending_model_response:
            # The turn so far is kept: a hook that turns a later failure into a retry leaves it in the history.
            keep = partial(setattr, outcome, 'sent')
            outcome.sent = await continue_turn(model, messages, outcome.sent, settings, params, run_ctx, keep)
        return outcome.sent

    try:
        try:
            response: ModelResponse = await root.wrap_model_request(
                run_ctx, request_context=outcome.request_context, handler=send
            )
        except SkipModelRequest as skip:
            response = skip.response
        except ModelRetry:
            raise
        except RetryModelRequest as exc:
            raise retry_outside_attempt('wrap_model_request') from exc
        except Exception as exc:
            try:
                response = await root.on_model_request_error(
                    run_ctx, request_context=outcome.request_context, error=exc
                )
            except RetryModelRequest as retry:
                raise _NextAttempt(retry, exc, 'Model request failed') from exc
    except ModelRetry as retry:  # from `wrap_model_request` or `on_model_request_error`
        outcome.retry = retry
        return
    try:
        outcome.response = await after_response(root, deps, run_ctx, outcome.request_context, response)
    except ModelRetry as retry:  # the response is rejected, but stays in the history
        outcome.retry, outcome.sent = retry, response
    except RetryModelRequest as retry:
        raise _NextAttempt(retry, response, REJECTED_BY_HOOK) from None


async def _next_attempt(
    deps: GraphAgentDeps[Any, Any], request_context: ModelRequestContext, retry: RetryModelRequest
) -> ModelRequestContext:
    """The request as the next attempt sends it: to the model `retry` names (a model, or a model id the run's
    capabilities resolve), else the same one. The run's own model stays: the next step starts from it again."""
    if request_context.attempt >= MAX_MODEL_REQUEST_ATTEMPTS:
        raise UserError(
            f'The model request was attempted {MAX_MODEL_REQUEST_ATTEMPTS} times, the most one request step makes: a '
            'capability keeps raising `RetryModelRequest` without the request getting anywhere. Give up by raising '
            'the error instead after a number of attempts (`request_context.attempt` counts them).'
        ) from retry
    request_context.attempt += 1
    if retry.model is not None:
        request_context.model = await _resolve(deps, retry.model)
        request_context.model_id = retry.model if isinstance(retry.model, str) else None
    return request_context


async def _resolve(deps: GraphAgentDeps[Any, Any], pick: Model | str) -> Model:
    """The model `pick` stands for: itself, or the model its id resolves to, as the run resolves its model ids (the
    run's model choice, else the run's `resolve_model_id` capabilities, then `infer_model`)."""
    if deps.model_choice is not None:
        found: Model = await deps.model_choice.resolve(pick)
        return found
    if isinstance(pick, Model):
        return pick
    root = deps.root_capability
    if root is not None and root.has_resolve_model_id:
        context: ModelResolutionContext[Any] = ModelResolutionContext(agent=deps.agent, deps=deps.user_deps)
        resolved: Model | None = await root.resolve_model_id(context, model_id=pick)
        if resolved is not None:
            return resolved
    return infer_model(pick)

"""The outcome of the `after_model_request` hooks for a response no request attempt of the step made: the one a
`before_model_request` hook gave with `SkipModelRequest`, or a streamed one (which has reached the reader)."""

from __future__ import annotations as _annotations

from typing import Any

from edgewise.graph import GraphRunContext

from .._run.deps import GraphAgentDeps
from .._run.state import GraphAgentState
from ..exceptions import ModelRetry
from ..messages import ModelResponse
from ..models import ModelRequestContext, ModelRequestParameters
from ..models._model import RunContext
from ..settings import ModelSettings
from .history import sent_messages
from .request_hooks import HookedResponse, after_whole_response

__all__ = ('skipped_outcome', 'streamed_outcome')


async def skipped_outcome(
    ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[Any, Any]],
    settings: ModelSettings | None,
    response: ModelResponse,
) -> HookedResponse:
    """The response a `before_model_request` hook gave with `SkipModelRequest`, through `after_model_request`."""
    state, deps = ctx.state, ctx.deps
    request_context = ModelRequestContext(
        model=deps.request_model or deps.model, messages=state.message_history[:], model_settings=settings,
        model_request_parameters=ModelRequestParameters(),
    )  # fmt: skip
    why = 'a response a hook gave with `SkipModelRequest` (no attempt was made)'
    return await _through_hooks(deps, deps.run_context(state), request_context, response, why)


async def streamed_outcome(
    ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[Any, Any]],
    run_ctx: RunContext[Any],
    params: ModelRequestParameters,
    settings: ModelSettings | None,
    response: ModelResponse,
) -> HookedResponse:
    """A streamed response, through the `after_model_request` hooks."""
    deps = ctx.deps
    request_context = ModelRequestContext(
        model=deps.request_model or deps.model, messages=sent_messages(ctx.state, deps, params),
        model_settings=settings, model_request_parameters=params,
    )  # fmt: skip
    why = 'a streamed response (it has reached the reader already)'
    return await _through_hooks(deps, run_ctx, request_context, response, why)


async def _through_hooks(
    deps: GraphAgentDeps[Any, Any],
    run_ctx: RunContext[Any],
    request_context: ModelRequestContext,
    response: ModelResponse,
    why: str,
) -> HookedResponse:
    outcome = HookedResponse(request_context)
    try:
        outcome.response = await after_whole_response(
            deps.root_capability, deps, run_ctx, request_context, response, why=why
        )
    except ModelRetry as retry:  # the hook asks the model again: the response is kept as sent
        outcome.retry, outcome.sent = retry, response
    return outcome

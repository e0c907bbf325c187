"""The capabilities' model request hooks of an agent run: `before_model_request` (whose messages replace the
run's history) and `wrap_model_request` (around the request itself)."""

from __future__ import annotations as _annotations

from datetime import datetime, timezone
from typing import Any

from edgewise.graph import GraphRunContext

from ._history import first_new_index, has_adjacent_same_kind, sent_messages
from ._run_deps import GraphAgentDeps, GraphAgentState
from .exceptions import UserError
from .messages import ModelRequest, ModelResponse
from .models import ModelRequestContext, ModelRequestParameters
from .tools import RunContext

__all__ = ('run_request_hooks', 'wrapped_request')


def _now() -> datetime:
    return datetime.now(tz=timezone.utc)


async def run_request_hooks(
    ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[Any, Any]],
    run_ctx: RunContext[Any],
    settings: Any,
    params: ModelRequestParameters,
) -> tuple[Any, ModelRequestParameters]:
    """Run the capabilities' `before_model_request` hooks; what they return replaces the run's history."""
    state, deps = ctx.state, ctx.deps
    request_context = ModelRequestContext(
        model=deps.model, messages=state.message_history[:], model_settings=settings, model_request_parameters=params
    )
    for capability in deps.request_hooks:
        request_context = await capability.before_model_request(run_ctx, request_context)
    messages = request_context.messages
    if not messages:
        raise UserError('Processed history cannot be empty.')
    last = messages[-1]
    if not isinstance(last, ModelRequest):
        raise UserError('Processed history must end with a `ModelRequest`.')
    last.timestamp = last.timestamp or _now()
    last.run_id = last.run_id or state.run_id
    last.conversation_id = last.conversation_id or state.conversation_id
    # The history list may be the one `capture_run_messages` gave out: change its contents, not the list.
    state.message_history[:] = messages
    deps.merge_adjacent = deps.merge_adjacent or has_adjacent_same_kind(messages)
    deps.new_message_index = first_new_index(messages, state.run_id, deps.resumed_request)
    return request_context.model_settings, request_context.model_request_parameters


async def wrapped_request(
    ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[Any, Any]], params: ModelRequestParameters, settings: Any
) -> ModelResponse:
    """The model request inside the capabilities' `wrap_model_request` hooks."""
    state, deps = ctx.state, ctx.deps

    async def send(request_context: ModelRequestContext) -> ModelResponse:
        model = request_context.model
        return await model.request(request_context.messages, request_context.model_settings,
                                   request_context.model_request_parameters)  # fmt: skip

    request_context = ModelRequestContext(
        model=deps.model, messages=sent_messages(state, deps), model_settings=settings, model_request_parameters=params
    )
    response: ModelResponse = await deps.root_capability.wrap_model_request(
        deps.run_context(state), request_context=request_context, handler=send
    )
    return response

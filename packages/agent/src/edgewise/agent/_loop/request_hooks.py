"""The capabilities' model request hooks of an agent run: `before_model_request` (whose messages replace the
run's history), `wrap_model_request` (around the request itself, streamed or not), `on_model_request_error` and
`after_model_request`."""

from __future__ import annotations as _annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import anyio

from edgewise.graph import GraphRunContext

from .._run.deps import GraphAgentDeps
from .._run.state import GraphAgentState
from ..capabilities._hook_table import hook_names
from ..capabilities.combined import CombinedCapability, active_context
from ..exceptions import ModelRetry, RetryModelRequest, SkipModelRequest, UserError
from ..messages import ModelRequest, ModelResponse
from ..models import ModelRequestContext, ModelRequestParameters, StreamedResponse
from ..models._capability_loads import capability_load_window
from ..models._completed_response import CompletedStreamedResponse
from ..models._request_timeout import timed_stream
from ..tools import RunContext
from .continuation import continued_stream
from .history import (
    first_new_index,
    for_model,
    has_adjacent_same_kind,
    has_tool_deltas,
    resumed_index_after_hooks,
    sent_messages,
)
from .hook_loads import record_request_loads, response_load_window
from .step_tool_manager import withhold_unevidenced_reveals

__all__ = (
    'RESPONSE_HOOKS',
    'HookedResponse',
    'run_request_hooks',
    'after_response',
    'after_whole_response',
    'retry_outside_attempt',
    'streamed_through_hooks',
    'HookedStream',
)

RESPONSE_HOOKS = hook_names('response')
"""The hooks on a model's response (besides `wrap_model_request`) that send a request through `hooked_request`."""


def _now() -> datetime:
    return datetime.now(tz=timezone.utc)


async def run_request_hooks(
    ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[Any, Any]],
    run_ctx: RunContext[Any],
    settings: Any,
    params: ModelRequestParameters,
    *,
    streaming: bool = False,
) -> tuple[Any, ModelRequestParameters]:
    """Run the capabilities' `before_model_request` hooks; what they return replaces the run's history, and a model
    they swap in serves this request (`deps.request_model`)."""
    state, deps = ctx.state, ctx.deps
    request_context = ModelRequestContext(
        model=deps.model, messages=state.message_history[:], model_settings=settings, model_request_parameters=params
    )
    request_context.model_id, request_context.streaming = deps.model_id, streaming
    with capability_load_window(state.pending_messages, []) as loads:  # loads go on this request
        for capability in deps.request_hooks:
            hook_ctx = run_ctx if capability.defer_loading or isinstance(capability, CombinedCapability) else None
            hook_ctx = hook_ctx or active_context(run_ctx)  # an always-on capability is active in its hooks
            request_context = await capability.before_model_request(hook_ctx, request_context)
    if request_context.model is not deps.model:
        deps.request_model = request_context.model
    before, messages = len(state.message_history), request_context.messages
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
    deps.speech.restart()  # the hooks may have put spoken turns (or copied tags) anywhere in it
    deps.lookalike.restart()
    deps.merge_adjacent = deps.merge_adjacent or has_adjacent_same_kind(messages)
    deps.tool_deltas = deps.tool_deltas or has_tool_deltas(messages)
    deps.resumed_request_index = resumed_index_after_hooks(deps.resumed_request_index, before, len(messages))
    deps.new_message_index = first_new_index(messages, state.run_id, deps.resumed_request, deps.resumed_request_index)
    params = request_context.model_request_parameters
    if loads:
        params = await record_request_loads(state, deps, run_ctx, last, loads, params)
    params = withhold_unevidenced_reveals(messages, params, deps)
    return request_context.model_settings, params


@dataclass
class HookedResponse:
    """What a model request made through the hooks gave."""

    request_context: ModelRequestContext
    """The request as the hooks were given it."""
    response: ModelResponse | None = None
    """The response the run records (`None` when a hook asked for a retry)."""
    retry: ModelRetry | None = None
    """The `ModelRetry` a hook raised: the run asks the model again."""
    sent: ModelResponse | None = None
    """The model's own response, when the model was called (recorded in the history before a retry)."""
    attempts: Any = None
    """The step's failed attempts (`request_attempts.StepAttempts`), when it made them through the attempt loop."""


async def after_response(
    root: Any,
    deps: GraphAgentDeps[Any, Any],
    run_ctx: RunContext[Any],
    request_context: ModelRequestContext,
    response: ModelResponse,
) -> ModelResponse:
    """`response` through the `after_model_request` hooks (if any capability of the run has one)."""
    if 'after_model_request' not in deps.hooked:
        return response
    with response_load_window(deps, run_ctx, response):
        found: ModelResponse = await root.after_model_request(
            run_ctx, request_context=request_context, response=response
        )
    return found


async def after_whole_response(
    root: Any,
    deps: GraphAgentDeps[Any, Any],
    run_ctx: RunContext[Any],
    request_context: ModelRequestContext,
    response: ModelResponse,
    *,
    why: str,
) -> ModelResponse:
    """`after_response` for a response that cannot be turned down for another attempt (`why` says why not, in the
    error of a hook's `RetryModelRequest`).

    Raises:
        UserError: an `after_model_request` hook raised `RetryModelRequest`.
    """
    try:
        return await after_response(root, deps, run_ctx, request_context, response)
    except RetryModelRequest as retry:
        raise UserError(
            f'`RetryModelRequest` cannot be raised from `after_model_request` for {why}; raise `ModelRetry` to ask '
            'the model again instead.'
        ) from retry


def retry_outside_attempt(hook: str) -> UserError:
    """The error of a `RetryModelRequest` raised where there is no attempt to make again."""
    return UserError(
        f'`RetryModelRequest` was raised from `{hook}`, which runs before the attempts at a model request: raise it '
        'from `on_model_request_error` (after an attempt failed) or `after_model_request` (to turn a response down).'
    )


@dataclass
class HookedStream:
    """A streamed request made through the `wrap_model_request` hooks: the stream to read, then (once the block
    is left) the response the hooks returned."""

    stream: StreamedResponse | None = None
    """The model's stream (or, when a hook answered without calling the model, its response, whole)."""
    final: ModelResponse | None = None
    """The response the hooks returned (or gave with `SkipModelRequest`): the run records this one."""
    error: Exception | None = None
    request_context: ModelRequestContext | None = None
    """The request as the hooks were given it."""
    retry: ModelRetry | None = None
    """The `ModelRetry` a hook raised: the run asks the model again (after recording its response, if it answered)."""

    def take(self, error: Exception | None) -> None:
        """Keep what the hooks raised: `SkipModelRequest` gives the response, `ModelRetry` a retry; any other error is
        raised."""
        if isinstance(error, SkipModelRequest):
            self.final = error.response
        elif isinstance(error, ModelRetry):
            self.retry = error
        elif isinstance(error, RetryModelRequest):
            raise retry_outside_attempt('wrap_model_request') from error
        elif error is not None:
            raise error

    def response(self) -> ModelResponse:
        """The response the hooks returned (or gave with `SkipModelRequest`), once the block is left."""
        assert self.final is not None  # the hooks returned a response, or raised (and `take` raised or kept it)
        return self.final

    def outcome(self) -> HookedResponse:
        """The retry as `ModelRequestNode` finishes a hooked request (the model's response kept, if it answered)."""
        assert self.request_context is not None
        assert self.retry is not None
        stream = self.stream
        sent = stream.get() if stream is not None and not isinstance(stream, CompletedStreamedResponse) else None
        return HookedResponse(self.request_context, retry=self.retry, sent=sent)


@asynccontextmanager
async def streamed_through_hooks(
    ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[Any, Any]],
    params: ModelRequestParameters,
    settings: Any,
    run_ctx: RunContext[Any],
) -> AsyncIterator[HookedStream]:
    """Open the streamed request inside the capabilities' `wrap_model_request` hooks, which run in a task of
    their own: their `handler` opens the stream, hands it to the block and returns its response once the block
    is done with it. A hook that returns without calling `handler` gives a stream of its response, whole."""
    state, deps = ctx.state, ctx.deps
    held = HookedStream()
    ready = anyio.Event()  # the stream is open, or the hooks have returned
    block_done = anyio.Event()

    async def handler(request_context: ModelRequestContext) -> ModelResponse:
        model, params = request_context.model, request_context.model_request_parameters
        messages = for_model(request_context.messages, model, params, deps)
        settings = request_context.model_settings
        async with (
            timed_stream(model, messages, settings, params, run_ctx) as first,
            continued_stream(first, model, messages, settings, run_ctx) as stream,
        ):
            held.stream = stream
            ready.set()
            await block_done.wait()
        return stream.get()

    async def hooks() -> None:
        request_context = ModelRequestContext(
            model=deps.request_model or deps.model, messages=sent_messages(state, deps, params),
            model_settings=settings, model_request_parameters=params,
        )  # fmt: skip
        request_context.model_id, request_context.streaming = deps.model_id, True
        held.request_context = request_context
        try:
            held.final = await deps.root_capability.wrap_model_request(
                run_ctx, request_context=request_context, handler=handler
            )
        except Exception as exc:
            held.error = exc
        finally:
            ready.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(hooks)
        await ready.wait()
        if held.stream is not None:
            try:
                yield held
            except BaseException:
                tg.cancel_scope.cancel()
                raise
            finally:
                block_done.set()
            opened = True
        else:  # answered without the model: the hooks are done
            opened = False
    held.take(held.error)  # out of the task group, so that an error is raised as itself
    if not opened:  # the hooks' response whole (an empty one for a retry)
        held.stream = CompletedStreamedResponse(held.final or ModelResponse([]), model_request_parameters=params)
        yield held

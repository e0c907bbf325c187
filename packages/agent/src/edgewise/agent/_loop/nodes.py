"""The agent loop as an Edgewise graph: `UserPromptNode -> ModelRequestNode -> CallToolsNode -> ... -> End`.

Nodes hold only serializable data (the prompt, a request, a response); everything else lives in the
state (`GraphAgentState`, persisted) or the deps (`GraphAgentDeps`, per run). Each step does work in
proportion to the new messages only: the history is appended to, never copied or re-validated.

A model request or tool call node can also be streamed (`node.stream(ctx)`): it does its work while its events
are read, and running it afterwards (`AgentRun.next`) returns the node that follows without doing the work
again. Leaving a stream because of an error or a cancellation stops the model (its stream is closed) and the
tools (they run in the reader's task, so the cancellation reaches them); the message history then keeps what was
done, as pydantic-ai 2.x does: the part of the response that had streamed (`state='interrupted'`), or the results
of the tool calls that had finished, in a request marked `'interrupted'` (a run given that history answers the
other calls as interrupted).
"""

from __future__ import annotations as _annotations

from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, TypeAlias, Union, cast

import pydantic
from typing_extensions import TypeVar

from edgewise.graph import BaseNode, End, Graph, GraphRunContext

from .. import _instrument
from .._functions.runners import system_prompt_parts
from .._output.schema import validation_errors
from .._run.deps import GraphAgentDeps, begin_node, stored_through, token_check
from .._run.result import FinalResult
from .._run.state import GraphAgentState
from .._tools.deferred_calls import DeferredToolRequests, DeferredToolResults
from ..exceptions import FallbackExceptionGroup, ModelRetry, SkipModelRequest, UserError
from ..messages import (
    BinaryImage,
    CapabilityLoadDeltaEvent,
    CapabilityLoadDeltaPart,
    DeferredToolRequestsEvent,
    DeferredToolResultsEvent,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    HandleResponseEvent,
    ModelMessage,
    ModelRequest,
    ModelRequestAttempt,
    ModelRequestPart,
    ModelResponse,
    OutputToolCallEvent,
    OutputToolResultEvent,
    RetryPromptPart,
    SystemPromptPart,
    ToolAvailabilityDeltaEvent,
    ToolAvailabilityDeltaPart,
    ToolCallPart,
    ToolReturnPart,
    UserContent,
    UserPromptPart,
)
from ..models import Model, ModelRequestParameters
from ..models._attempts import count_group_usage, counting_group_usage
from ..models._request_scoped import drop_unanswered, dropping_unanswered
from ..models._request_timeout import timed_request, timed_stream
from ..output import PendingModelResponse
from ..tools import RunContext
from .call_tools_parts import (
    TOOL_SKIPPED,
    Checkpoints,
    answer_text,
    calls_to_resume,
    no_output_retry,
    output_args_valid,
    skipped_call,
    status_part,
    text_as_is,
    validate_output,
)
from .continuation import continue_turn, continued_stream
from .early_output import end_early
from .empty_response import no_output_answer
from .end_strategies import ResponseCalls
from .history import (
    for_model,
    keep_partial_response,
    prompt_of,
    refresh_dynamic_prompts,
    response_to_answer,
    sent_messages,
    with_statements,
)
from .hooked_outcome import skipped_outcome, streamed_outcome
from .model_stream import AgentStream, whole_stream
from .node_support import (
    DEFERRED,
    NEXT,
    VALIDATED,
    add_enqueued_events,
    check_not_streamed,
    is_suspended,
    leading_events,
    now,
    prompt_request,
    record_model_response,
    trace_exchange,
    with_emitted,
)
from .output_hooks import OUTPUT_HOOKS, answer_through_hooks
from .request_attempts import hooked_request
from .request_hooks import RESPONSE_HOOKS, HookedResponse, streamed_through_hooks
from .request_setup import prepare_request, prepare_resume
from .response_tool_calls import answer_deferred_inline, unknown_tool_exhausted, validate_for_events
from .step_tool_manager import prepare_step_tools

__all__ = (
    'add_enqueued_events',
    'UserPromptNode',
    'ModelRequestNode',
    'CallToolsNode',
    'AgentNode',
    'DeferredToolCallsNode',
    'AgentStream',
    'agent_graph',
)

DepsT = TypeVar('DepsT', default=object)
NodeRunEndT = TypeVar('NodeRunEndT', covariant=True, default=Any)


@dataclass
class UserPromptNode(BaseNode[GraphAgentState, GraphAgentDeps[DepsT, Any], FinalResult[NodeRunEndT]]):
    """Builds the first request of the run: system prompts (for a new conversation) and the user prompt."""

    user_prompt: str | Sequence[UserContent] | None
    """The user prompt of the run, if any."""
    deferred_tool_results: DeferredToolResults | None = None
    """The answers to the deferred tool calls the message history ends on, when the run resumes them."""

    async def run(
        self, ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[DepsT, Any]]
    ) -> ModelRequestNode[DepsT, NodeRunEndT] | CallToolsNode[DepsT, NodeRunEndT]:
        """Build the first request, or continue a message history that ends with a request or a response."""
        state, deps = ctx.state, ctx.deps
        if deps.operation_journal is not None:  # (`begin_node` has nothing to tell otherwise)
            begin_node(ctx, self)
        history = state.message_history
        if self.deferred_tool_results is not None:
            return _resume_deferred(history, self.deferred_tool_results, self.user_prompt)
        if history and is_suspended(history[-1]):
            if self.user_prompt is not None:  # it would abandon the provider's job for the turn
                raise UserError(
                    'Cannot provide a new user prompt when the message history ends in a suspended response. '
                    'Resume it by running the agent with this message history and no new prompt.'
                )
            stored_through(ctx, len(history))
            return ModelRequestNode(ModelRequest([]))  # continues the suspended turn (an empty request: nothing sent)
        if self.user_prompt is None and history and isinstance(history[-1], ModelRequest):
            # The last request is sent again: its user prompt is the run's (for `ctx.prompt`, as in pydantic-ai).
            deps.prompt = prompt_of(history[-1]) or deps.prompt
        parts: list[ModelRequestPart] = []
        kept = len(history)  # the messages before this index are as this node's snapshot holds them
        statements: list[SystemPromptPart] = []  # changes of appending system prompts, for the request to send
        if deps.system_prompts:  # (a run context only for the agents that have system prompts)
            run_ctx = deps.run_context(state)
            if not history:
                parts.extend(await system_prompt_parts(deps.system_prompts, run_ctx))
            else:
                kept, statements = await refresh_dynamic_prompts(history, deps, run_ctx)
        if self.user_prompt is not None:
            parts = [*statements, *parts, UserPromptPart(self.user_prompt, timestamp=now())]  # (`now`: no frame)
        elif not parts and history:
            last = history[-1]
            if isinstance(last, ModelRequest):
                # Re-send the last request of the history (e.g. one whose answer failed) with this run's
                # instructions; it keeps its run id, and stays out of `new_messages` (as in pydantic-ai).
                history.pop()
                request = ModelRequest(
                    with_statements(last.parts, statements),
                    run_id=last.run_id,
                    conversation_id=last.conversation_id,
                    metadata=last.metadata,
                )
                deps.resumed_request, deps.resumed_request_index = request, -1
                stored_through(ctx, min(kept, len(history)))
                return ModelRequestNode(request)
            await prepare_step_tools(state, deps, state.run_step + 1)  # the next request's: for its instructions
            if last.tool_calls or not await deps.instructions_text(state):
                # Continue a conversation whose last response still has tool calls to handle, or that has nothing
                # new to send: its last response is handled again.
                stored_through(ctx, kept)
                return CallToolsNode(last)
            # A history ending with a plain response, and instructions: send them alone (as pydantic-ai).
            parts = list(statements)
        if deps.persistence is not None:  # (`stored_through` has nothing to store otherwise)
            stored_through(ctx, kept)
        return ModelRequestNode(prompt_request(parts))  # (system and user prompts only)


def _resume_deferred(
    history: list[Any], results: DeferredToolResults, user_prompt: str | Sequence[UserContent] | None
) -> CallToolsNode[Any, Any]:
    """The node that answers the deferred calls of the history's last response with `results`."""
    response, answers = response_to_answer(history, results)
    return CallToolsNode(
        response, tool_call_results=answers, tool_call_metadata=results.metadata or None, user_prompt=user_prompt
    )


@dataclass
class ModelRequestNode(BaseNode[GraphAgentState, GraphAgentDeps[DepsT, Any], FinalResult[NodeRunEndT]]):
    """Sends a request to the model and records its response."""

    request: ModelRequest
    """The request to send."""

    async def run(
        self, ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[DepsT, Any]]
    ) -> CallToolsNode[DepsT, NodeRunEndT] | ModelRequestNode[DepsT, NodeRunEndT]:
        """Check the request limit, send the request, record the response and its usage (a capability's hook may
        answer instead of the model, or ask the model again with a new `ModelRequestNode`)."""
        if (streamed := self.__dict__.pop(NEXT, None)) is not None:  # streamed already: what followed
            return streamed  # type: ignore[no-any-return]
        try:
            state, deps = ctx.state, ctx.deps
            if deps.operation_journal is not None:  # (`begin_node` has nothing to tell otherwise)
                begin_node(ctx, self)
            if not self.request.parts and self._resumes(state.message_history):
                return await self._resume(ctx)
            try:
                params = await prepare_request(self, ctx, streaming=False)
            except SkipModelRequest as skip:  # from a `before_model_request` hook
                return await self._finish_hooked(ctx, await skipped_outcome(ctx, self._settings, skip.response))
            model = deps.request_model or deps.model
            if not deps.tracing:  # no span to open, nor messages to put on one
                answer = await self._exchange(ctx, params, model, None)
            else:
                with _instrument.request_span(True, model.model_name, state.run_step) as span:
                    answer = await self._exchange(ctx, params, model, span)
            return self.record_response(ctx, answer) if isinstance(answer, ModelResponse) else answer
        except BaseException:  # the step gave up without a response: its request-scoped prompts go with it
            drop_unanswered(ctx.state.message_history)
            raise

    async def _exchange(
        self,
        ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[DepsT, Any]],
        params: ModelRequestParameters,
        model: Model,
        span: Any,
    ) -> ModelResponse | CallToolsNode[DepsT, NodeRunEndT] | ModelRequestNode[DepsT, NodeRunEndT]:
        """Send the request (in the request's span, `None` for a run not traced): the model's response, or the node
        that follows the capabilities' hooks when they take part (recorded then)."""
        state, deps = ctx.state, ctx.deps
        settings = self.__dict__.get('_settings')
        root = deps.root_capability
        if root is not None and (deps.hooked & RESPONSE_HOOKS or root.overrides('wrap_model_request')):
            outcome = await hooked_request(ctx, params, settings, deps.run_context(state))
            rc, answer = outcome.request_context, outcome.response or outcome.sent
            trace_exchange(span, deps, state, rc.model, rc.model_settings, rc.messages, answer)
            return await self._finish_hooked(ctx, outcome)
        messages = for_model(sent_messages(state, deps, params), model, params, deps)
        try:  # (`counting_group_usage`, without a context manager to enter)
            response = await timed_request(model, messages, settings, params)
        except FallbackExceptionGroup as group:
            count_group_usage(state.usage, group)
            raise
        # The provider paused the turn: ask it to go on until it is whole (a run whose output can be a
        # `PendingModelResponse` ends with the suspended response instead).
        segments: list[ModelResponse] = []
        if response.state == 'suspended' and not deps.output_schema.allows_pending_model_response:
            run_ctx = deps.run_context(state)
            args = (model, messages, response, settings, params, run_ctx)
            response = await continue_turn(*args, on_segment=segments.append)
        if deps.tracing:  # (else there is no span, nor cache health to judge)
            trace_exchange(span, deps, state, model, settings, messages, response, segments)
        return response

    def _resumes(self, history: list[ModelMessage]) -> bool:
        """Whether this node continues the suspended response the history ends with (its request is empty)."""
        return not self.request.parts and bool(history) and is_suspended(history[-1])

    async def _resume(
        self, ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[DepsT, Any]]
    ) -> CallToolsNode[DepsT, NodeRunEndT]:
        """Continue the suspended response the history ends with until the turn is whole, and record the turn."""
        state, deps = ctx.state, ctx.deps
        suspended, params = await prepare_resume(self, ctx, streaming=False)
        model = deps.model
        with _instrument.request_span(deps.tracing, model.model_name, state.run_step) as span:
            messages = for_model(sent_messages(state, deps, params), model, params, deps)
            run_ctx = deps.run_context(state)
            segments: list[ModelResponse] = []
            args = (model, messages, suspended, self._settings, params, run_ctx)
            response = await continue_turn(*args, on_segment=segments.append)
            trace_exchange(span, deps, state, model, self._settings, messages, response, segments)
        return self.record_response(ctx, response)

    async def _finish_hooked(
        self, ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[DepsT, Any]], outcome: HookedResponse
    ) -> CallToolsNode[DepsT, NodeRunEndT] | ModelRequestNode[DepsT, NodeRunEndT]:
        """Record what the hooks gave: the response, or (on a hook's `ModelRetry`) the model's response if it
        answered, then a retry prompt in a new request (counted against the output retries)."""
        counted = outcome.attempts.counted if outcome.attempts is not None else ()
        if outcome.retry is None:
            assert outcome.response is not None
            return self.record_response(ctx, outcome.response, counted=counted)
        if outcome.sent is not None:
            self.record_response(ctx, outcome.sent, counted=counted)
            ctx.state.response_in_node = False  # the node that follows does not hold it
        else:  # a retry without a response gives up on this step; its request and the retry's are sent as one
            drop_unanswered(ctx.state.message_history)
            ctx.deps.merge_adjacent = True
        state, deps = ctx.state, ctx.deps
        state.increment_retries(deps.max_result_retries, outcome.retry)
        retry = RetryPromptPart(outcome.retry.message)
        return ModelRequestNode(ModelRequest([retry]))

    def stream(
        self, ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[DepsT, Any]]
    ) -> AbstractAsyncContextManager[AgentStream[DepsT, Any]]:
        """Send the request as a streamed request: `async with node.stream(run.ctx) as events: async for ...`.

        The model's events come as they arrive, with a `FinalResultEvent` at the first candidate for the
        final result. Running the node afterwards returns the `CallToolsNode` for the streamed response.
        """
        return dropping_unanswered(self._stream(ctx), ctx.state.message_history)

    @asynccontextmanager
    async def _stream(
        self, ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[DepsT, Any]]
    ) -> AsyncIterator[AgentStream[DepsT, Any]]:
        check_not_streamed(self)
        begin_node(ctx, self)
        state, deps = ctx.state, ctx.deps
        if self._resumes(state.message_history):
            async with self._stream_resumed(ctx) as resumed:
                yield resumed
            return
        try:
            params = await prepare_request(self, ctx, streaming=True)
        except SkipModelRequest as skip:  # from a `before_model_request` hook: its response, streamed whole
            async with whole_stream(ctx, skip.response, leading_events(self, deps)) as whole:
                yield whole
            outcome = await skipped_outcome(ctx, self._settings, skip.response)
            self.__dict__[NEXT] = await self._finish_hooked(ctx, outcome)
            return
        run_ctx = deps.run_context(state)
        model = deps.request_model or deps.model
        with (
            counting_group_usage(state.usage),
            _instrument.request_span(deps.tracing, model.model_name, state.run_step) as span,
        ):
            root = deps.root_capability
            if root is not None and root.overrides('wrap_model_request'):
                async with streamed_through_hooks(ctx, params, self._settings, run_ctx) as held:
                    assert held.stream is not None  # set before the block starts
                    stream: AgentStream[DepsT, Any] = AgentStream(
                        held.stream, ctx, token_check(state, deps), leading_events(self, deps)
                    )
                    try:
                        yield stream
                        async for _ in stream:
                            pass
                    except GeneratorExit:
                        raise
                    except BaseException:
                        keep_partial_response(state, held.stream.get())
                        raise
                if held.retry is not None:  # a `wrap_model_request` hook's `ModelRetry`
                    self.__dict__[NEXT] = await self._finish_hooked(ctx, held.outcome())
                else:
                    assert held.request_context is not None  # set before the hooks run
                    rc = held.request_context
                    trace_exchange(span, deps, state, rc.model, rc.model_settings, rc.messages, held.response())
                    self.__dict__[NEXT] = await self._finish_streamed(ctx, run_ctx, params, held.response())
                return
            sent = for_model(sent_messages(state, deps, params), model, params, deps)
            async with (
                timed_stream(model, sent, self._settings, params, run_ctx) as first,
                continued_stream(first, model, sent, self._settings, run_ctx) as response,
            ):
                stream = AgentStream[DepsT, Any](response, ctx, token_check(state, deps), leading_events(self, deps))
                try:
                    yield stream
                    async for _ in stream:  # a reader that stops early still gets the whole response recorded
                        pass
                except GeneratorExit:  # the reader left (`run_stream` left early): the half response is dropped
                    raise
                except BaseException:
                    keep_partial_response(state, response.get())
                    raise
                segments = [response.final_segment] if response.final_segment else []
                trace_exchange(span, deps, state, model, self._settings, sent, response.get(), segments)
                self.__dict__[NEXT] = await self._finish_streamed(ctx, run_ctx, params, response.get())

    @asynccontextmanager
    async def _stream_resumed(
        self, ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[DepsT, Any]]
    ) -> AsyncIterator[AgentStream[DepsT, Any]]:
        """`_stream` for a node continuing the suspended response the history ends with."""
        state, deps = ctx.state, ctx.deps
        suspended, params = await prepare_resume(self, ctx, streaming=True)
        model, run_ctx = deps.model, deps.run_context(state)
        with _instrument.request_span(deps.tracing, model.model_name, state.run_step) as span:
            sent = for_model(sent_messages(state, deps, params), model, params, deps)
            async with continued_stream(
                None, model, sent, self._settings, run_ctx, params=params, seed=suspended
            ) as response:
                stream = AgentStream[DepsT, Any](response, ctx, token_check(state, deps))
                try:
                    yield stream
                    async for _ in stream:
                        pass
                except GeneratorExit:
                    raise
                except BaseException:
                    keep_partial_response(state, response.get())
                    raise
                segments = [response.final_segment] if response.final_segment else []
                trace_exchange(span, deps, state, model, self._settings, sent, response.get(), segments)
                self.__dict__[NEXT] = self.record_response(ctx, response.get())

    async def _finish_streamed(
        self,
        ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[DepsT, Any]],
        run_ctx: RunContext[DepsT],
        params: ModelRequestParameters,
        response: ModelResponse,
    ) -> CallToolsNode[DepsT, NodeRunEndT] | ModelRequestNode[DepsT, NodeRunEndT]:
        """Record a streamed response (through the `after_model_request` hooks, if the run has any)."""
        deps = ctx.deps
        if 'after_model_request' not in deps.hooked:
            return self.record_response(ctx, response)
        outcome = await streamed_outcome(ctx, run_ctx, params, self._settings, response)
        return await self._finish_hooked(ctx, outcome)

    @property
    def _settings(self) -> Any:
        return self.__dict__.get('_settings')

    def record_response(
        self,
        ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[DepsT, Any]],
        response: ModelResponse,
        *,
        counted: Sequence[ModelRequestAttempt] = (),
    ) -> CallToolsNode[DepsT, NodeRunEndT]:
        """Add the model's response to the history and the usage (see `record_model_response`); the node that
        handles it comes next."""
        record_model_response(ctx.state, ctx.deps, response, counted)
        return CallToolsNode(response)


@dataclass
class CallToolsNode(BaseNode[GraphAgentState, GraphAgentDeps[DepsT, Any], FinalResult[NodeRunEndT]]):
    """Handles a model response: runs its tool calls, or validates its output; ends the run or asks again."""

    model_response: ModelResponse
    """The response to handle."""
    tool_call_results: dict[str, Any] | None = None
    """When a run resumes deferred calls: the answer to each call by id (see `DeferredToolResults`)."""
    tool_call_metadata: dict[str, Any] | None = None
    """When a run resumes deferred calls: the metadata given with the answers, by call id."""
    user_prompt: str | Sequence[UserContent] | None = None
    """When a run resumes deferred calls: a prompt sent after the tool results."""

    async def run(
        self, ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[DepsT, Any]]
    ) -> _CallToolsNext[DepsT, NodeRunEndT]:
        """End the run with a valid output, or send tool results and retry prompts in a new request."""
        if (streamed := self.__dict__.pop(NEXT, None)) is not None:  # streamed already: what followed
            return streamed  # type: ignore[no-any-return]
        if ctx.deps.operation_journal is not None:  # (`begin_node` has nothing to tell otherwise)
            begin_node(ctx, self)
        if self.model_response.state == 'suspended':
            # A response the provider is still working on is no answer: its parts so far could match the output.
            if not ctx.deps.output_schema.allows_pending_model_response:
                raise UserError(
                    'Cannot handle a suspended model response as a completed turn: add `PendingModelResponse` to '
                    'the output types for the run to end with it.'
                )
            return End(FinalResult(cast(NodeRunEndT, PendingModelResponse(response=self.model_response))))
        stored = len(ctx.state.message_history)
        calls: list[ToolCallPart] = []
        for part in self.model_response.parts:  # (a loop: a comprehension is a call of its own)
            if isinstance(part, ToolCallPart):
                calls.append(part)
        if calls:
            next_node = await self._handle_tool_calls(ctx, calls)
        elif (text := text_as_is(self.model_response, ctx.deps)) is not None:
            next_node = End(FinalResult(text))  # type: ignore[arg-type]  # (nothing to run it through)
        else:
            next_node = await self._handle_text(ctx)
        if ctx.deps.persistence is not None:  # (`stored_through` has nothing to store otherwise)
            stored_through(ctx, stored)
        return next_node

    def stream(
        self, ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[DepsT, Any]]
    ) -> AbstractAsyncContextManager[AsyncIterator[HandleResponseEvent]]:
        """Handle the response while streaming its tool call events: `async with node.stream(run.ctx) as events`.

        Gives a `FunctionToolCallEvent` (or `OutputToolCallEvent`) per tool call, then, once the calls have
        run, a `FunctionToolResultEvent` (or `OutputToolResultEvent`) per call, in call order.
        """
        return self._stream(ctx)

    @asynccontextmanager
    async def _stream(
        self, ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[DepsT, Any]]
    ) -> AsyncIterator[AsyncIterator[HandleResponseEvent]]:
        check_not_streamed(self)
        begin_node(ctx, self)
        events = with_emitted(self._handle_events(ctx), ctx.deps.event_buffer)
        try:
            yield events
            async for _ in events:
                pass
        finally:
            await events.aclose()

    async def _handle_events(
        self, ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[DepsT, Any]]
    ) -> AsyncGenerator[HandleResponseEvent]:
        state = ctx.state
        if self.model_response.state == 'suspended':  # no calls to announce: the run ends (or fails) on it
            self.__dict__[NEXT] = await self.run(ctx)
            return
        output_tools = ctx.deps.output_schema.tools
        calls = [p for p in self.model_response.parts if isinstance(p, ToolCallPart)]
        answers = self.tool_call_results or {}
        valid, validations = await validate_for_events(calls, state, ctx.deps, answers, self.tool_call_metadata)
        self.__dict__[VALIDATED] = validations
        # As pydantic-ai 2.x orders them: the output calls first, each with its result as it is processed (so,
        # here, after the step: only then are they known), then the calls of function and unknown tools as the
        # response made them.
        outputs = [call for call in calls if call.tool_name in output_tools]
        others = [call for call in calls if call.tool_name not in output_tools]
        if not outputs:
            known = ctx.deps.step_tool_functions or {}
            for call in others:
                yield FunctionToolCallEvent(call, args_valid=valid.get(call.tool_call_id))
                if call.tool_name not in known and unknown_tool_exhausted(call, state, ctx.deps):
                    break  # the step fails on this call: pydantic-ai gives no event for the calls after it
        history = state.message_history
        self.__dict__.pop(DEFERRED, None)
        next_node = await self.run(ctx)
        self.__dict__[NEXT] = next_node
        deferred: tuple[DeferredToolRequests, DeferredToolResults | None] | None = self.__dict__.pop(DEFERRED, None)
        if not calls:
            return
        request = getattr(next_node, 'request', None)
        if request is None:  # the run ended: the output tool's acknowledgement closed the history
            request = history[-1]
        by_id = {p.tool_call_id: p for p in request.parts if isinstance(p, ToolReturnPart | RetryPromptPart)}
        for call in outputs:
            if (part := by_id.get(call.tool_call_id)) is None:
                continue
            args_valid = output_args_valid(part, valid.get(call.tool_call_id))
            # Only the output tool events, whatever became of the call (pydantic-ai 2.x; 1.x also gave the function
            # tool events of an output call that was not the output).
            yield OutputToolCallEvent(call, args_valid=args_valid)
            yield OutputToolResultEvent(part)
        if outputs:  # the calls the 'early' strategy skipped give no events (pydantic-ai)
            others = [c for c in others if not skipped_call(by_id.get(c.tool_call_id))]
            for call in others:
                yield FunctionToolCallEvent(call, args_valid=valid.get(call.tool_call_id))
        answered = {call.tool_call_id for call in others}
        handled = set(deferred[1].calls) | set(deferred[1].approvals) if deferred and deferred[1] else set[str]()
        for call in calls:  # the results in call order (those of calls a deferred-call handler answered last)
            call_id = call.tool_call_id
            if call_id in answered and call_id not in handled and (part := by_id.get(call_id)) is not None:
                yield FunctionToolResultEvent(part)
        for delta in request.parts:  # the tools the calls revealed, after their results (pydantic-ai 2.x)
            if isinstance(delta, ToolAvailabilityDeltaPart):
                yield ToolAvailabilityDeltaEvent(part=delta)
            elif isinstance(delta, CapabilityLoadDeltaPart):  # a load from a tool (`RunContext.load_capability`)
                yield CapabilityLoadDeltaEvent(part=delta)
        if deferred is not None:
            yield DeferredToolRequestsEvent(deferred[0])
            if deferred[1] is not None:
                yield DeferredToolResultsEvent(deferred[1])
            for call in calls:
                if call.tool_call_id in handled and (part := by_id.get(call.tool_call_id)) is not None:
                    yield FunctionToolResultEvent(part)

    async def _handle_text(
        self, ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[DepsT, Any]]
    ) -> ModelRequestNode[DepsT, NodeRunEndT] | End[FinalResult[NodeRunEndT]]:
        state, deps = ctx.state, ctx.deps
        schema = deps.output_schema
        if schema.allows_image and (images := self.model_response.images):
            return await self._handle_image(ctx, images[0])  # an image is the output before any text (pydantic-ai)
        text = answer_text(self.model_response)  # a response with text has something to act on: not judged below
        run_ctx = deps.run_context(state, retry=state.retries, max_retries=deps.max_result_retries)
        retry: RetryPromptPart
        answer = None if text else no_output_answer(self.model_response, deps)
        try:
            if answer is not None:  # nothing to act on: `None` is the output, or the model is asked again
                if answer.retry is not None:
                    raise ModelRetry(answer.retry)
                hooked = deps.hooked & OUTPUT_HOOKS
                none = (
                    answer_through_hooks(deps, run_ctx, 'none', None)
                    if hooked
                    else validate_output(None, run_ctx, deps)
                )
                output = await none
            elif not text or (schema.object_processor is None and not schema.allow_text_output):
                raise ModelRetry(no_output_retry(schema, deps.step_tools))
            elif deps.hooked & OUTPUT_HOOKS:
                output = await answer_through_hooks(deps, run_ctx, 'text' if schema.allow_text_output else 'json', text)
            elif schema.allow_text_output:
                output = await validate_output(await schema.process_text(text, run_ctx), run_ctx, deps)
            else:
                value = schema.parse_json_text(text, deps.validation_context_for(run_ctx))
                processor = schema.object_processor
                assert processor is not None
                output = await validate_output(await processor.finish(value, run_ctx), run_ctx, deps)
        except pydantic.ValidationError as exc:
            state.increment_retries(deps.max_result_retries, exc)
            retry = RetryPromptPart(validation_errors(exc))
        except ModelRetry as exc:
            state.increment_retries(deps.max_result_retries, exc)
            retry = RetryPromptPart(exc.message)
        else:
            return End(FinalResult(output))
        return ModelRequestNode(ModelRequest([retry]))

    async def _handle_image(
        self, ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[DepsT, Any]], image: BinaryImage
    ) -> ModelRequestNode[DepsT, NodeRunEndT] | End[FinalResult[NodeRunEndT]]:
        """The image is the output, once the output validators pass it (a `ModelRetry` from one asks again)."""
        state, deps = ctx.state, ctx.deps
        run_ctx = deps.run_context(state, retry=state.retries, max_retries=deps.max_result_retries)
        try:
            hooked = deps.hooked & OUTPUT_HOOKS
            output = await (
                answer_through_hooks(deps, run_ctx, 'image', image) if hooked else validate_output(image, run_ctx, deps)
            )
        except ModelRetry as exc:
            state.increment_retries(deps.max_result_retries, exc)
            retry = RetryPromptPart(exc.message)
            return ModelRequestNode(ModelRequest([retry]))
        return End(FinalResult(output))

    async def _handle_tool_calls(
        self, ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[DepsT, Any]], calls: list[ToolCallPart]
    ) -> _CallToolsNext[DepsT, NodeRunEndT]:
        state, deps = ctx.state, ctx.deps
        start_retries = state.retries
        output_tools = deps.output_schema.tools
        if deps.step_output_tools is not None:  # a `prepare_output_tools` hook hid some: calls of those are unknown
            output_tools = {name: p for name, p in output_tools.items() if name in deps.step_output_tools}
        step_tools = deps.step_tools
        if step_tools is None:  # resumed: the step's tools were not prepared in this process
            step_tools = await prepare_step_tools(state, deps)
        if deps.end_strategy == 'early' and self.tool_call_results is None:  # its own output may win over its calls
            end = await end_early(self.model_response, calls, output_tools, step_tools, state, deps)
            if end is not None:
                return end
        parts: list[ModelRequestPart] = []
        if self.tool_call_results is not None:
            calls = calls_to_resume(state.message_history, self.model_response, self.tool_call_results or {}, calls)
            deps.merge_adjacent = True  # the request of the calls that ran and the new one: sent as one
        known = [c for c in calls if c.tool_name in output_tools or c.tool_name in step_tools]
        unknown_calls = [c for c in calls if c.tool_name not in step_tools and c.tool_name not in output_tools]
        on_result = None if deps.persistence is None else Checkpoints(self, ctx, start_retries).add
        answering = ResponseCalls(
            state, deps, output_tools, step_tools, self.tool_call_results, self.tool_call_metadata, on_result,
            self.__dict__.pop(VALIDATED, None),
        )  # fmt: skip
        # Unknown tools are retried like tools (their own retry count, the agent's tool budget), as in pydantic-ai.
        await answering.answer(known, unknown_calls)
        final, outcome = answering.final, answering.outcome
        if final is None and outcome.has_deferred:
            # Kept for the events of a streamed node: the batch, then the answers a handler gave inside the run.
            self.__dict__[DEFERRED] = (outcome.deferred, None)
            function_calls = [c for c in known if c.tool_name not in output_tools]
            handled = await answer_deferred_inline(outcome, function_calls, state, deps, on_result)
            self.__dict__[DEFERRED] = (self.__dict__[DEFERRED][0], handled)
        state.step_results = []
        if answering.failed_outputs:  # counted in a row with the function tools' (set by `answer`)
            prior = answering.prior_retries
            failed = {n: prior.get(n, 0) + 1 for n in answering.failed_outputs}
            state.tool_retries = {**state.tool_retries, **failed}
        parts.extend(answering.parts)
        # Capabilities the calls loaded (`RunContext.load_capability`): on the next request, or dropped with the run.
        manager = deps.tool_manager
        loads = [] if manager is None else manager.capability_loads[:]
        if loads:
            manager.capability_loads.clear()
        skipped_from = len(parts)
        parts.extend(outcome.parts)
        early = deps.end_strategy == 'early'
        if not early or (final is not None and unknown_calls):
            # The answers in the order the calls were made (pydantic-ai; 'early' orders only the skipped calls with
            # the unknown ones). The content of `ToolReturn`s comes after the answers.
            order = {call.tool_call_id: index for index, call in enumerate(calls)}
            start = skipped_from if early else 0
            last = len(calls)
            parts[start:] = sorted(parts[start:], key=lambda p: order.get(getattr(p, 'tool_call_id', ''), last))
        if final is not None and outcome.has_deferred:
            # The output is given: the deferred calls get an answer so that the history has no open call.
            skipped = TOOL_SKIPPED
            parts.extend(status_part(call, skipped) for call in [*outcome.deferred.calls, *outcome.deferred.approvals])
        elif outcome.has_deferred:
            if not deps.output_schema.allows_deferred_tools:
                raise UserError(
                    'A deferred tool call was present, but `DeferredToolRequests` is not among output types. '
                    'To resolve this, add `DeferredToolRequests` to the list of output types for this agent.'
                )
            final = FinalResult(outcome.deferred)
            if deps.stores_waiting:
                if parts:
                    state.message_history.append(
                        ModelRequest(parts, timestamp=now(), run_id=state.run_id, conversation_id=state.conversation_id)
                    )
                return DeferredToolCallsNode(outcome.deferred)  # type: ignore[return-value]  # see _CallToolsNext
        if final is None:
            parts.extend(loads)
        if self.user_prompt is not None and final is None:
            parts.append(UserPromptPart(self.user_prompt))
        if final is not None:
            if not parts:
                return End(final)
            # The output tool's acknowledgement closes the conversation, so that it can be continued later.
            closing = ModelRequest(parts, timestamp=now(), run_id=state.run_id, conversation_id=state.conversation_id)
            state.message_history.append(closing)
            return End(final)
        return ModelRequestNode(ModelRequest(parts))


@dataclass
class DeferredToolCallsNode(BaseNode[GraphAgentState, GraphAgentDeps[DepsT, Any], FinalResult[NodeRunEndT]]):
    """A stored run waiting for the answers to its deferred tool calls (approvals, outside results).

    A run with a durable persistence that stops on deferred calls is stored with this node next: the run is
    `'waiting'`, and the node's fields hold the pending calls. The run's result meanwhile has the requests as
    its output, as without a persistence. Resuming the stored run with `deferred_tool_results` runs this node,
    which answers the calls and goes on.
    """

    requests: DeferredToolRequests
    """The calls waiting: external ones (`calls`) and ones needing approval (`approvals`)."""
    waiting_for: str = ''
    """What the run waits for, as `edgewise runs list` shows it: `'approval'`, `'tool results'` or both."""

    def __post_init__(self) -> None:
        if not self.waiting_for:
            kinds = [k for k, calls in (('approval', self.requests.approvals), ('tool results', self.requests.calls))
                     if calls]  # fmt: skip
            self.waiting_for = ' and '.join(kinds)

    async def run(
        self, ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[DepsT, Any]]
    ) -> CallToolsNode[DepsT, NodeRunEndT]:
        """Answer the pending calls with the resumed run's `deferred_tool_results`.

        Raises:
            UserError: the run was resumed without them.
        """
        results, ctx.deps.deferred_tool_results = ctx.deps.deferred_tool_results, None
        if results is None:
            pending = [c.tool_call_id for c in (*self.requests.approvals, *self.requests.calls)]
            raise UserError(
                f'The run is waiting for {self.waiting_for} of tool calls {pending}: resume it with '
                '`deferred_tool_results=DeferredToolResults(...)` answering them.'
            )
        return _resume_deferred(ctx.state.message_history, results, None)


if TYPE_CHECKING:
    # Typed code sees pydantic-ai's `ModelRequestNode | End` after a `CallToolsNode`; the graph's edges also
    # have the wait of a stored run on deferred tool calls, which `AgentRun` never hands out (its iteration
    # stops there).
    _CallToolsNext: TypeAlias = ModelRequestNode[DepsT, NodeRunEndT] | End[FinalResult[NodeRunEndT]]
else:
    _CallToolsNext: TypeAlias = Union[  # noqa: UP007 - a subscriptable alias of generic classes
        ModelRequestNode[DepsT, NodeRunEndT], DeferredToolCallsNode[DepsT, NodeRunEndT], End[FinalResult[NodeRunEndT]]
    ]


AgentNode = (
    UserPromptNode[DepsT, NodeRunEndT] | ModelRequestNode[DepsT, NodeRunEndT] | CallToolsNode[DepsT, NodeRunEndT]
)
"""A node of the agent graph."""


@cache
def agent_graph() -> Graph[GraphAgentState, GraphAgentDeps[Any, Any], FinalResult[Any]]:
    """The graph every agent runs: one graph for all agents, built on first use (reading edges takes time)."""
    return Graph(
        nodes=(UserPromptNode, ModelRequestNode, CallToolsNode, DeferredToolCallsNode),
        name='Agent',
        state_type=GraphAgentState,
        run_end_type=FinalResult[Any],
        auto_instrument=False,
    )

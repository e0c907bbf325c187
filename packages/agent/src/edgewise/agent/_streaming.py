"""Streaming the nodes of an agent run: the model's events of a `ModelRequestNode`, the tool call events of a
`CallToolsNode`, and feeding them to an `event_stream_handler`.

A streamed node does its work while its events are read; running it afterwards (`AgentRun.next`) returns the
node that follows without doing the work again. Leaving a stream because of an error or a cancellation stops
the model (its stream is closed) and the tools (they run in the reader's task, so the cancellation reaches
them); the message history then holds only whole messages: a request without its response, or a response
whose tool calls are answered by `Tool call cancelled.` returns.
"""

from __future__ import annotations as _annotations

from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, aclosing, asynccontextmanager
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, TypeAlias

import anyio

from . import _instrument
from ._stream_events import (
    AgentStreamEvent,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    HandleResponseEvent,
    ModelResponseStreamEvent,
    OutputToolCallEvent,
    OutputToolResultEvent,
)
from .exceptions import UserError
from .messages import ModelRequest, ModelResponse, RetryPromptPart, ToolCallPart, ToolReturnPart
from .models import StreamedResponse
from .tools import RunContext
from .usage import RequestUsage

if TYPE_CHECKING:
    from edgewise.graph import GraphRunContext

    from ._agent_graph import CallToolsNode, ModelRequestNode
    from ._agent_run import AgentRun
    from ._run_deps import GraphAgentDeps, GraphAgentState

    _AgentCtx: TypeAlias = GraphRunContext[GraphAgentState, GraphAgentDeps[Any, Any]]

__all__ = (
    'AgentStream',
    'EventStreamHandler',
    'CANCELLED_TOOL_CONTENT',
    'NodeStream',
    'node_streams',
    'stream_model_request',
    'stream_call_tools',
    'run_with_event_handler',
    'take_streamed_next',
)

EventStreamHandler: TypeAlias = Callable[[RunContext[Any], AsyncIterable[AgentStreamEvent]], Awaitable[None]]
"""`async def handler(ctx, events)`: receives the events of each streamed node of a run."""

CANCELLED_TOOL_CONTENT = 'Tool call cancelled.'
"""The return recorded for tool calls whose run was cancelled, so that no call is left unanswered."""

_NEXT = '_edgewise_streamed_next'  # instance attribute (not a field: never persisted) holding a streamed result


def take_streamed_next(node: object) -> Any:
    """The node that follows `node`, if `node` was already run by streaming it (else `None`)."""
    return node.__dict__.pop(_NEXT, None)


class AgentStream:
    """The events of one streamed model response (what `ModelRequestNode.stream` gives)."""

    def __init__(self, response: StreamedResponse) -> None:
        self._response = response

    def __aiter__(self) -> AsyncIterator[ModelResponseStreamEvent]:
        return self._response.__aiter__()

    @property
    def response(self) -> StreamedResponse:
        """The model's streamed response."""
        return self._response

    def get(self) -> ModelResponse:
        """The response received so far."""
        return self._response.get()

    def usage(self) -> RequestUsage:
        """The usage of this response so far."""
        return self._response.usage()


@asynccontextmanager
async def stream_model_request(node: ModelRequestNode[Any, Any], ctx: _AgentCtx) -> AsyncIterator[AgentStream]:
    """Send the node's request as a streamed request; the response is recorded once the stream is read."""
    if _NEXT in node.__dict__:
        raise UserError('This ModelRequestNode has already been streamed; run the node it led to.')
    state, deps = ctx.state, ctx.deps
    params = await node.prepare_request(ctx)
    run_ctx = deps.run_context(state)
    model = deps.model
    span = _instrument.span('chat {model_name}', model_name=model.model_name, run_step=state.run_step) \
        if _instrument.TRACING else None  # fmt: skip
    if span is not None:
        span.__enter__()
    try:
        async with model.request_stream(state.message_history, deps.model_settings, params, run_ctx) as response:
            stream = AgentStream(response)
            yield stream
            async for _ in stream:  # a reader that stops early still gets the whole response recorded
                pass
            node.__dict__[_NEXT] = node.record_response(ctx, response.get())
    finally:
        if span is not None:
            span.__exit__(None, None, None)


@asynccontextmanager
async def stream_call_tools(
    node: CallToolsNode[Any, Any], ctx: _AgentCtx
) -> AsyncIterator[AsyncIterator[HandleResponseEvent]]:
    """Handle the node's response while its tool call events are read."""
    if _NEXT in node.__dict__:
        raise UserError('This CallToolsNode has already been streamed; run the node it led to.')
    events = _handle_events(node, ctx)
    try:
        yield events
        async for _ in events:
            pass
    finally:
        await events.aclose()


async def _handle_events(node: CallToolsNode[Any, Any], ctx: _AgentCtx) -> AsyncGenerator[HandleResponseEvent]:
    state = ctx.state
    output_tools = ctx.deps.output_schema.tools
    calls = [p for p in node.model_response.parts if isinstance(p, ToolCallPart)]
    for call in calls:
        yield OutputToolCallEvent(call) if call.tool_name in output_tools else FunctionToolCallEvent(call)
    history = state.message_history
    size = len(history)
    try:
        next_node = await node.run(ctx)
    except anyio.get_cancelled_exc_class():
        if calls and len(history) == size:
            now = datetime.now(tz=timezone.utc)
            returns = [ToolReturnPart(c.tool_name, CANCELLED_TOOL_CONTENT, c.tool_call_id, outcome='failed',
                                      timestamp=now) for c in calls]  # fmt: skip
            history.append(ModelRequest(returns, timestamp=now, run_id=state.run_id))
        raise
    node.__dict__[_NEXT] = next_node
    if not calls:
        return
    request = getattr(next_node, 'request', None)
    if request is None:  # the run ended: the output tool's acknowledgement closed the history
        request = history[-1]
    by_id = {p.tool_call_id: p for p in request.parts if isinstance(p, ToolReturnPart | RetryPromptPart)}
    for call in calls:
        if (part := by_id.get(call.tool_call_id)) is not None:
            if call.tool_name in output_tools:
                yield OutputToolResultEvent(part)
            else:
                yield FunctionToolResultEvent(part)


NodeStream: TypeAlias = AbstractAsyncContextManager[AgentStream | AsyncIterator[HandleResponseEvent]]
"""What `node.stream(ctx)` gives for a `ModelRequestNode` or a `CallToolsNode`."""


async def node_streams(agent_run: AgentRun[Any, Any]) -> AsyncGenerator[NodeStream]:
    """Run every node of `agent_run`; before running a model request or tool call node, yield its stream (not
    entered). The one loop behind `run_with_event_handler`, `run_stream` and `run_stream_events`.

    The caller enters each stream and reads what it wants of the events (leaving the stream normally reads the
    rest; leaving it by an error closes it); the node is run, taking the streamed result, when the next stream
    is asked for. Once the generator is done, the run has ended and `agent_run.result` is set. Use it in
    `aclosing`, so that a caller leaving by an error leaves no unfinished generator behind (closing it at its
    `yield` awaits nothing).

    The caller enters each stream itself, rather than getting one entered here, so that an error or a
    cancellation while it reads leaves the stream (and the model's stream under it) as itself: a stream held
    open across this generator's `yield` would only see a `GeneratorExit` when the generator is closed. Events
    go straight from the node's stream to the caller, with no layer of this generator per event.
    """
    from edgewise.graph import End

    from ._agent_graph import CallToolsNode, ModelRequestNode

    node: Any = agent_run.next_node
    ctx = agent_run.ctx
    while not isinstance(node, End):
        if isinstance(node, ModelRequestNode | CallToolsNode):
            yield node.stream(ctx)
        node = await agent_run.next(node)


async def run_with_event_handler(agent_run: AgentRun[Any, Any], handler: EventStreamHandler) -> None:
    """Run every node of `agent_run`, streaming the model request and tool call nodes into `handler`."""
    ctx = agent_run.ctx
    async with aclosing(node_streams(agent_run)) as streams:
        async for stream in streams:
            async with stream as events:
                # Made once the stream is open: the handler's `run_step` is the step of this request.
                await handler(ctx.deps.run_context(ctx.state), events)

"""The one loop over the streamed nodes of an agent run, behind `run(event_stream_handler=...)`, `run_stream`
and `run_stream_events`: each model request and tool call node is streamed, the others are run.
"""

from __future__ import annotations as _annotations

from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, aclosing
from typing import Any, TypeAlias

from typing_extensions import TypeVar

from .._loop.agent_run import NODE_HOOKS, AgentRun, run_to_end
from .._loop.model_stream import AgentStream
from .._loop.nodes import CallToolsNode, ModelRequestNode
from .._run.result import AgentRunResult
from ..capabilities._hook_table import EVENT_STREAM_HOOK
from ..messages import AgentStreamEvent, HandleResponseEvent
from ..tools import RunContext

__all__ = (
    'WRAP_EVENTS',
    'EventStreamHandler',
    'NodeEvents',
    'every_event',
    'stream_nodes',
    'run_with_event_handler',
    'run_for_result',
    'wrapped_events',
)

_T = TypeVar('_T')

EventStreamHandler: TypeAlias = Callable[[RunContext[Any], AsyncIterable[AgentStreamEvent]], Awaitable[None]]
"""`async def handler(ctx, events)`: receives the events of each streamed node of a run."""

NodeEvents: TypeAlias = AgentStream | AsyncIterator[HandleResponseEvent]
"""The events of one streamed node: a model response's (`AgentStream`), or the tool call events of a response."""


def every_event(events: NodeEvents) -> AsyncIterable[AgentStreamEvent]:
    """A `read` for `stream_nodes` that takes every event of each node as it is."""
    return events


async def stream_nodes(
    agent_run: AgentRun[Any, Any],
    read: Callable[[NodeEvents], AsyncIterable[_T]],
    *,
    wrap_events: bool = True,
    inside_node_hooks: bool = False,
) -> AsyncGenerator[_T]:
    """Run every node of `agent_run`, streaming the model request and tool call nodes: for each, enter its stream
    and yield what `read(events)` yields (`every_event`: the events themselves). Once the generator is done, the
    run has ended and `agent_run.result` is set. Use it in `aclosing`.

    Each node's stream is entered here, around `read`, so that an error or a cancellation while `read` runs (an
    event handler failing, say) leaves the stream, and the model's stream under it, as itself. An event passes
    through this one generator between the node's stream and the caller.

    With `wrap_events`, a run whose capabilities implement `wrap_run_event_stream` hands `read` each node's
    events through that hook (what `read` leaves unread is then drained, so that the hook sees every event).
    With `inside_node_hooks` (for a `read` that yields nothing, such as an event stream handler), a node is streamed
    inside its `wrap_node_run` hooks, as pydantic-ai 2.x streams it for `run(event_stream_handler=...)`; otherwise
    `before_node_run` runs before the stream and the other node hooks after it (as pydantic-ai's `run_stream`).
    """
    node: Any = agent_run.next_node
    ctx = agent_run.ctx
    deps = ctx.deps
    hooked = bool(deps.hooked & NODE_HOOKS)
    wraps = wrap_events and WRAP_EVENTS in deps.hooked

    async def node_items(node: Any) -> AsyncGenerator[_T]:
        if isinstance(node, ModelRequestNode | CallToolsNode):
            stream: AbstractAsyncContextManager[NodeEvents] = node.stream(ctx)
            async with stream as events:
                if wraps:
                    async with aclosing(wrapped_events(agent_run, events)) as wrapped:
                        async for item in read(wrapped):
                            yield item
                        async for _ in wrapped:
                            pass
                else:
                    async for item in read(events):
                        yield item

    async def stream_then_run(node: Any) -> Any:
        async with aclosing(node_items(node)) as items:
            async for _ in items:
                pass  # pragma: no cover - `read` yields nothing here
        return await agent_run._graph_run.next(node)

    while not agent_run.stops_at(node):
        if hooked:  # as pydantic-ai's `run_stream`: `before_node_run` before the stream, the others after it
            run_ctx = deps.run_context(ctx.state)
            node = await deps.root_capability.before_node_run(run_ctx, node=node)
            if inside_node_hooks:
                node = await agent_run.advance_with_hooks(run_ctx, node, stream_then_run)
                continue
        async with aclosing(node_items(node)) as items:
            async for item in items:
                yield item
        node = await (agent_run.advance_with_hooks(run_ctx, node) if hooked else agent_run.next(node))


WRAP_EVENTS = EVENT_STREAM_HOOK
"""The hook that makes `agent.run` stream its nodes even without an event stream handler."""


def wrapped_events(agent_run: AgentRun[Any, Any], events: AsyncIterable[AgentStreamEvent]) -> AsyncGenerator[Any]:
    """The events of a node through the capabilities' `wrap_run_event_stream` hooks (the first one outermost)."""
    ctx = agent_run.ctx
    stream = ctx.deps.root_capability.wrap_run_event_stream(ctx.deps.run_context(ctx.state), stream=events)
    return stream  # type: ignore[no-any-return]


async def run_with_event_handler(agent_run: AgentRun[Any, Any], handler: EventStreamHandler | None) -> None:
    """Run every node of `agent_run`, streaming the model request and tool call nodes into `handler`; without a
    handler, the nodes are streamed only if a capability wraps their events (`wrap_run_event_stream`)."""
    if handler is None:
        if WRAP_EVENTS not in agent_run._graph_run.deps.hooked:  # (no `ctx` made to ask)
            await run_to_end(agent_run)
            return
        async with aclosing(stream_nodes(agent_run, every_event)) as events:
            async for _ in events:
                pass
        return

    ctx = agent_run.ctx

    async def handle(events: NodeEvents) -> AsyncGenerator[None]:
        # Made once the stream is open: the handler's `run_step` is the step of this request.
        await handler(ctx.deps.run_context(ctx.state), events)
        return
        yield  # an async generator that yields nothing: the handler reads the events itself

    async with aclosing(stream_nodes(agent_run, handle, inside_node_hooks=True)) as done:
        async for _ in done:
            pass  # pragma: no cover - `handle` yields nothing


async def run_for_result(
    opening: AbstractAsyncContextManager[AgentRun[Any, Any]], handler: EventStreamHandler | None
) -> AgentRunResult[Any]:
    """Open a run (`agent.iter(...)`, `agent.iter_from_persistence(...)`), run it to its end with `handler` and
    give its result: what `run` and `resume` do."""
    async with opening as agent_run:
        if handler is None and WRAP_EVENTS not in agent_run._graph_run.deps.hooked:
            await run_to_end(agent_run)  # (as `run_with_event_handler` runs it, one coroutine less)
        else:
            await run_with_event_handler(agent_run, handler)
    result: AgentRunResult[Any] | None = agent_run.result
    assert result is not None
    return result

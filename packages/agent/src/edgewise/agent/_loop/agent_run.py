"""`AgentRun`: an agent run driven node by node (from `Agent.iter`), with the capabilities' node hooks around
each `next`; and `capture_run_messages`."""

from __future__ import annotations as _annotations

import warnings
from collections.abc import AsyncIterator, Awaitable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Generic

from typing_extensions import TypeVar

from edgewise.graph import End, GraphRun, GraphRunContext

from .._message_flow.pending import EnqueueContent, PendingMessage, PendingMessagePriority, take_pending
from .._run.deps import GraphAgentDeps
from .._run.result import AgentRunResult, CallableRunUsage, FinalResult
from .._run.state import GraphAgentState
from ..capabilities._hook_table import hook_names
from ..exceptions import UndrainedPendingMessagesError, UserError
from ..messages import ModelMessage, ModelMessagesTypeAdapter, ModelRequest
from ..tools import RunContext
from .nodes import AgentNode, CallToolsNode, DeferredToolCallsNode, ModelRequestNode

__all__ = ('AgentRun', 'capture_run_messages', 'run_to_end', 'NODE_HOOKS')

NODE_HOOKS = hook_names('node')
"""The hooks `AgentRun.next` runs each node through, when some capability of the run implements one."""

DepsT = TypeVar('DepsT', default=None)
OutputT = TypeVar('OutputT', default=str)


class AgentRun(Generic[DepsT, OutputT]):
    """A run of an agent, driven node by node: `async for node in run`, or `await run.next(node)`.

    The nodes are `UserPromptNode`, `ModelRequestNode` and `CallToolsNode`, then `End` holding the
    `FinalResult`; `result` is set once the run has ended.
    """

    def __init__(self, graph_run: GraphRun[GraphAgentState, GraphAgentDeps[DepsT, Any], FinalResult[OutputT]]):
        self._graph_run = graph_run
        self._result_override: AgentRunResult[OutputT] | None = None
        self._skipped = False
        self._delivers_at_end = False  # a bare `async for` delivers the content queued at the end (`run_to_end`)

    def override_result(self, result: AgentRunResult[OutputT], *, skipped: bool = False) -> None:
        """Make `result` the run's result (a capability's `wrap_run` gave it); `skipped`: the run does not run."""
        self._result_override = result
        self._skipped = skipped

    @property
    def ctx(self) -> GraphRunContext[GraphAgentState, GraphAgentDeps[DepsT, Any]]:
        """The graph run context: the run's state (messages, usage, retries) and its deps."""
        return GraphRunContext(state=self._graph_run.state, deps=self._graph_run.deps)

    @property
    def next_node(self) -> AgentNode[DepsT, OutputT] | End[FinalResult[OutputT]]:
        """The node that runs next, or the `End` once the run has finished."""
        return self._graph_run.next_node  # type: ignore[return-value]

    def stops_at(self, node: object) -> bool:
        """Whether the run is over once `node` is next: the `End`, or a stored run's wait for the answers to its
        deferred tool calls (the run is then kept as waiting, and its output is the `DeferredToolRequests`)."""
        return isinstance(node, End) or (
            isinstance(node, DeferredToolCallsNode) and self._graph_run.deps.deferred_tool_results is None
        )

    @property
    def result(self) -> AgentRunResult[OutputT] | None:
        """The run's result once it has ended (or stopped waiting on deferred tool calls), else `None`."""
        if self._result_override is not None:
            return self._result_override
        end = self._graph_run.next_node
        if isinstance(end, DeferredToolCallsNode) and self.stops_at(end):
            final: FinalResult[OutputT] = FinalResult(end.requests)  # type: ignore[arg-type]
        elif isinstance(end, End):
            final = end.data
        else:
            return None
        return AgentRunResult(
            final.output,
            _output_tool_name=final.tool_name,
            _state=self._graph_run.state,
            _new_message_index=self._graph_run.deps.new_message_index,
            _output_tool_call_id=final.tool_call_id,
        )

    async def next(
        self, node: AgentNode[DepsT, OutputT] | None = None
    ) -> AgentNode[DepsT, OutputT] | End[FinalResult[OutputT]]:
        """Run `node` (by default the next node) and return the node after it, or the `End`.

        The node goes through the capabilities' node hooks (`before_node_run`, `wrap_node_run`,
        `on_node_run_error`, `after_node_run`); a bare `async for node in run` does not fire them."""
        graph_run = self._graph_run
        if not (graph_run.deps.hooked & NODE_HOOKS):
            result = await graph_run.next(node)
            if isinstance(result, End) and graph_run.state.pending_messages:
                return await self._deliver_at_end()
            return result  # type: ignore[return-value]
        if node is None:
            node = graph_run.next_node  # type: ignore[assignment]
        ctx = graph_run.deps.run_context(graph_run.state)
        node = await graph_run.deps.root_capability.before_node_run(ctx, node=node)
        return await self.advance_with_hooks(ctx, node)

    async def advance_with_hooks(
        self, ctx: RunContext[DepsT], node: AgentNode[DepsT, OutputT]
    ) -> AgentNode[DepsT, OutputT] | End[FinalResult[OutputT]]:
        """Run `node` (past its `before_node_run` hooks) through the `wrap_node_run`, `on_node_run_error` and
        `after_node_run` hooks; a next node the hooks chose becomes the run's next node."""
        graph_run = self._graph_run
        capability = graph_run.deps.root_capability
        try:
            result = await capability.wrap_node_run(ctx, node=node, handler=graph_run.next)
        except Exception as exc:
            result = await capability.on_node_run_error(ctx, node=node, error=exc)
            graph_run._next_node = result  # recovered: the run goes on from the hook's node
        after = await capability.after_node_run(ctx, node=node, result=result)
        if after is not result or graph_run.next_node is not after:
            graph_run._next_node = after
        if isinstance(after, End) and graph_run.state.pending_messages:
            return await self._deliver_at_end()
        return after  # type: ignore[no-any-return]

    async def _deliver_at_end(self) -> ModelRequestNode[DepsT, OutputT]:
        """Instead of ending, send what is still queued: the `'asap'` content, then the `'when_idle'` content, in
        the history, the last request of it in one more model request (the run's next node, stored at once in a
        durable run, so that a resume sends it).

        Raises:
            UserError: the queued content does not end with a request (a `PendingMessage` added by hand).
        """
        graph_run = self._graph_run
        state, deps = graph_run.state, graph_run.deps
        queue = state.pending_messages
        ids = state.run_id, state.conversation_id
        *before, last = [*take_pending(queue, 'asap', *ids), *take_pending(queue, 'when_idle', *ids)]
        if not isinstance(last, ModelRequest):
            raise UserError(
                'Enqueued content must end with a `ModelRequest` so the agent has a request to respond to, '
                f'but the last queued message is a `{type(last).__name__}`.'
            )
        state.message_history.extend(before)
        deps.merge_adjacent = True  # the history may now hold requests (or responses) that follow each other
        last.instructions = await deps.instructions_text(state)
        node: ModelRequestNode[DepsT, OutputT] = ModelRequestNode(last)
        graph_run._next_node = node
        if deps.durable:
            await graph_run.persistence.snapshot_node(state, node)
        return node

    @property
    def pending_messages(self) -> list[PendingMessage]:
        """The content enqueued and not yet delivered (the run's queue itself; add to it with `enqueue`)."""
        return self._graph_run.state.pending_messages

    def enqueue(self, *content: EnqueueContent, priority: PendingMessagePriority = 'asap') -> None:
        """Queue content for the model from the code driving the run (a webhook, a chat, a job queue).

        Call it from the task (event loop) driving the run; from another thread, hand the call to that loop first
        (e.g. `anyio.from_thread.run_sync(agent_run.enqueue, text)` from a thread started by `anyio.to_thread`).

        Args:
            *content: The items to deliver (see `EnqueueContent`): user content, request parts, whole messages;
                together they must end with a request. No items: nothing is queued.
            priority: `'asap'`: with the next model request, or in one more request if the run would end
                first; `'when_idle'`: only when the run would end, after the `'asap'` content.

        Raises:
            UserError: the content does not end with a request.
        """
        if (pending := PendingMessage.from_content(*content, priority=priority)) is not None:
            self._graph_run.state.pending_messages.append(pending)

    @property
    def usage(self) -> CallableRunUsage:
        """The usage of the run so far (`run.usage`; calling it, `run.usage()`, still works but is deprecated)."""
        return CallableRunUsage.of(self._graph_run.state.usage)

    @property
    def metadata(self) -> dict[str, Any] | None:
        """The run's metadata (computed when it started, and again once it ends well)."""
        return self._graph_run.state.metadata

    @property
    def run_id(self) -> str:
        """The id of the run."""
        return self._graph_run.state.run_id

    @property
    def conversation_id(self) -> str:
        """The id of the conversation the run belongs to."""
        return self._graph_run.state.conversation_id

    def all_messages(self) -> list[ModelMessage]:
        """Every message so far, including the message history the run was given."""
        return list(self._graph_run.state.message_history)

    def new_messages(self) -> list[ModelMessage]:
        """The messages of this run so far."""
        return self._graph_run.state.message_history[self._graph_run.deps.new_message_index :]

    def all_messages_json(self) -> bytes:
        """`all_messages()` as JSON."""
        return ModelMessagesTypeAdapter.dump_json(self.all_messages())

    def new_messages_json(self) -> bytes:
        """`new_messages()` as JSON."""
        return ModelMessagesTypeAdapter.dump_json(self.new_messages())

    def __aiter__(self) -> AsyncIterator[AgentNode[DepsT, OutputT] | End[FinalResult[OutputT]]]:
        if 'wrap_node_run' in self._graph_run.deps.hooked:
            warnings.warn(
                'A capability has `wrap_node_run` hooks, but bare `async for node in agent_run` does not fire them. '
                'Use `agent_run.next(node)` to advance the run, or `agent.run()`, which does.',
                UserWarning,
                stacklevel=2,
            )
        return self

    def __anext__(self) -> Awaitable[AgentNode[DepsT, OutputT] | End[FinalResult[OutputT]]]:
        graph_run = self._graph_run
        node = graph_run.next_node
        if self._skipped or (isinstance(node, DeferredToolCallsNode) and self.stops_at(node)):
            raise StopAsyncIteration
        if isinstance(node, CallToolsNode):  # the only node that ends a run iterated without node hooks
            return self._tools_step()
        return graph_run.__anext__()  # type: ignore[return-value]

    async def _tools_step(self) -> AgentNode[DepsT, OutputT] | End[FinalResult[OutputT]]:
        """The node after a `CallToolsNode`; the end of the iteration when the run stops to wait on deferred tool
        calls (the wait is not a node to run, and typed code expects `ModelRequestNode | End` after a
        `CallToolsNode`).

        Raises:
            UndrainedPendingMessagesError: the run ended with enqueued content left, which a bare `async for`
                does not deliver.
        """
        graph_run = self._graph_run
        node = await graph_run.__anext__()
        if isinstance(node, DeferredToolCallsNode) and self.stops_at(node):
            raise StopAsyncIteration
        if isinstance(node, End) and graph_run.state.pending_messages:
            if self._delivers_at_end:
                return await self._deliver_at_end()
            raise UndrainedPendingMessagesError(
                'The agent run ended with undrained pending messages enqueued via `enqueue`. Bare `async for node '
                'in agent_run` does not drain `when_idle` messages or end-of-run redirects, because they fire in '
                '`after_node_run`, which bare iteration skips. Use `agent_run.next(node)` to advance the run, or '
                '`agent.run()` which drives via `next()` automatically.'
            )
        return node  # type: ignore[return-value]

    def __repr__(self) -> str:
        return f'<AgentRun next_node={type(self._graph_run.next_node).__name__}>'


async def run_to_end(agent_run: AgentRun[Any, Any]) -> None:
    """Run every node of `agent_run` (through the capabilities' node hooks, if it has any)."""
    if not (agent_run._graph_run.deps.hooked & NODE_HOOKS):
        agent_run._delivers_at_end = True  # as `next` does: what is queued at the end is sent, not an error
        async for _ in agent_run:
            pass
        return
    node: Any = agent_run.next_node
    while not agent_run._skipped and not agent_run.stops_at(node):
        node = await agent_run.next(node)


_captured: ContextVar[list[list[ModelMessage]] | None] = ContextVar('_captured', default=None)


@contextmanager
def capture_run_messages() -> Iterator[list[ModelMessage]]:
    """Capture the messages of the first agent run started inside the block, even if it fails.

    ```python
    with capture_run_messages() as messages:
        try:
            agent.run_sync('...')
        except UnexpectedModelBehavior:
            print(messages)
    ```
    """
    if (outer := _captured.get()) is not None:
        # Nested: the inner block shares the outer block's list.
        yield outer[0]
        return
    holder: list[list[ModelMessage]] = []
    token = _captured.set(holder)
    messages: list[ModelMessage] = []
    holder.append(messages)
    try:
        yield messages
    finally:
        _captured.reset(token)


def bind_captured_messages(history: list[ModelMessage]) -> list[ModelMessage]:
    """The list the run should use as its history: the capture list (filled with `history`) if one is waiting."""
    holder = _captured.get()
    if holder is None or len(holder) != 1:  # no capture block, or its list is taken by an earlier run
        return history
    messages = holder[0]
    holder.append(messages)  # mark it taken
    messages.extend(history)
    return messages

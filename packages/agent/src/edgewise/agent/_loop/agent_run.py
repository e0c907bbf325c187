"""`AgentRun`: an agent run driven node by node (from `Agent.iter`), with the capabilities' node hooks around
each `next`; and `capture_run_messages`."""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Generic

from typing_extensions import TypeVar

from edgewise.graph import End, GraphRun, GraphRunContext
from edgewise.graph import nodes as graph_nodes

from .._message_flow.custom_events import CapabilityEvent, CustomEvent
from .._message_flow.pending import (
    EnqueueContent,
    PendingMessage,
    PendingMessagePriority,
    delivered_events,
    remove_pending,
    reprioritize_pending,
    take_pending,
)
from .._run.deps import GraphAgentDeps, end_node
from .._run.result import AgentRunResult, CallableRunUsage, FinalResult
from .._run.state import GraphAgentState
from ..capabilities._hook_table import hook_names
from ..exceptions import UserError
from ..messages import ModelMessage, ModelMessagesTypeAdapter, ModelRequest, RetryPromptPart, ToolReturnPart
from ..tools import RunContext
from .history import has_tool_deltas
from .nodes import (
    AgentNode,
    CallToolsNode,
    DeferredToolCallsNode,
    ModelRequestNode,
    UserPromptNode,
    add_enqueued_events,
)

__all__ = ('AgentRun', 'capture_run_messages', 'run_to_end', 'NODE_HOOKS')

NODE_HOOKS = hook_names('node')
"""The hooks `AgentRun.next` runs each node through, when some capability of the run implements one."""

_GOING_ON = frozenset({UserPromptNode, ModelRequestNode, CallToolsNode})
"""The node classes after which a run goes on (neither `End` nor a `DeferredToolCallsNode`, nor subclasses)."""

DepsT = TypeVar('DepsT', default=object)
OutputT = TypeVar('OutputT', default=str)
_CustomEventT = TypeVar('_CustomEventT', bound=CustomEvent)


class AgentRun(Generic[DepsT, OutputT]):
    """A run of an agent, driven node by node: `async for node in run`, or `await run.next(node)`.

    The nodes are `UserPromptNode`, `ModelRequestNode` and `CallToolsNode`, then `End` holding the
    `FinalResult`; `result` is set once the run has ended.
    """

    def __init__(self, graph_run: GraphRun[GraphAgentState, GraphAgentDeps[DepsT, Any], FinalResult[OutputT]]):
        self._graph_run = graph_run
        self._result_override: AgentRunResult[OutputT] | None = None
        self._skipped = False
        self._last_yielded: Any = None  # the node `async for` gave last (`__anext__`)
        self._error: Exception | None = None  # what the last `next` raised (`next_node` raises it again)
        self._ended: tuple[object, AgentRunResult[OutputT]] | None = None  # the result made for the node it ended at

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
        """The node that runs next, or the `End` once the run has finished.

        Raises:
            Exception: the error the last node run by `next` failed with (no hook recovered from it), as pydantic-ai
                2.x does: there is no next node.
        """
        if self._error is not None:
            raise self._error
        return self._graph_run.next_node  # type: ignore[return-value]

    def stops_at(self, node: object) -> bool:
        """Whether the run is over once `node` is next: the `End`, or a stored run's wait for the answers to its
        deferred tool calls (the run is then kept as waiting, and its output is the `DeferredToolRequests`)."""
        if type(node) in _GOING_ON:  # (the nodes of every step: no `isinstance` through `ABCMeta` for them)
            return False
        return isinstance(node, End) or (
            isinstance(node, DeferredToolCallsNode) and self._graph_run.deps.deferred_tool_results is None
        )

    @property
    def result(self) -> AgentRunResult[OutputT] | None:
        """The run's result once it has ended (or stopped waiting on deferred tool calls), else `None`."""
        if self._result_override is not None:
            return self._result_override
        end = self._graph_run.next_node
        if (ended := self._ended) is not None and ended[0] is end:
            return ended[1]  # (asked again at the same end: the run's setup and `run` both read it)
        if isinstance(end, DeferredToolCallsNode) and self.stops_at(end):
            final: FinalResult[OutputT] = FinalResult(end.requests)  # type: ignore[arg-type]
        elif isinstance(end, End):
            final = end.data
        else:
            return None
        result = AgentRunResult(
            final.output,
            _output_tool_name=final.tool_name,
            _state=self._graph_run.state,
            _new_message_index=self._graph_run.deps.new_message_index,
            _output_tool_call_id=final.tool_call_id,
        )
        result.__dict__['_workspace'] = self._graph_run.deps.workspace  # (live: kept out of the fields)
        self._ended = (end, result)
        return result

    async def next(
        self, node: AgentNode[DepsT, OutputT] | None = None
    ) -> AgentNode[DepsT, OutputT] | End[FinalResult[OutputT]]:
        """Run `node` (by default the next node) and return the node after it, or the `End`.

        The node goes through the capabilities' node hooks (`before_node_run`, `wrap_node_run`,
        `on_node_run_error`, `after_node_run`), as it does under `async for node in run`. An error the node fails
        with (that no hook recovered from) is raised, and `next_node` raises it again until `next` is called again."""
        self._error = None
        graph_run = self._graph_run
        try:
            if graph_run.deps.cancellation.cancel_requested and not isinstance(graph_run.next_node, End):
                from anyio.lowlevel import checkpoint_if_cancelled  # (loaded by a cancelled run only)

                await checkpoint_if_cancelled()  # a cancellation asked for between steps stops here
            if graph_run.deps.hooked.isdisjoint(NODE_HOOKS):  # (no capability has a node hook)
                try:
                    result = await graph_run.next(node)
                finally:
                    if graph_run.deps.operation_journal is not None:  # (`end_node`, without its call)
                        end_node(graph_run.deps)
                if isinstance(result, End) and graph_run.state.pending_messages:
                    return await self._deliver_at_end()
                return result  # type: ignore[return-value]
            if node is None:
                node = graph_run.next_node  # type: ignore[assignment]
            ctx = graph_run.deps.run_context(graph_run.state)
            node = await graph_run.deps.root_capability.before_node_run(ctx, node=node)
            return await self.advance_with_hooks(ctx, node)
        except Exception as error:
            self._error = error
            raise

    async def advance_with_hooks(
        self,
        ctx: RunContext[DepsT],
        node: AgentNode[DepsT, OutputT],
        step: Callable[[Any], Awaitable[Any]] | None = None,
    ) -> AgentNode[DepsT, OutputT] | End[FinalResult[OutputT]]:
        """Run `node` (past its `before_node_run` hooks) through the `wrap_node_run`, `on_node_run_error` and
        `after_node_run` hooks; a next node the hooks chose becomes the run's next node. `step` runs a node inside
        the `wrap_node_run` hooks (by default the graph run's `next`)."""
        graph_run = self._graph_run
        capability = graph_run.deps.root_capability
        failed: list[object] = []
        run_step = step or graph_run.next

        async def handler(node: Any) -> Any:
            try:
                return await run_step(node)
            except Exception:
                failed.append(node)
                raise
            finally:
                end_node(graph_run.deps)

        try:
            result = await capability.wrap_node_run(ctx, node=node, handler=handler)
        except Exception as exc:
            result = await capability.on_node_run_error(ctx, node=node, error=exc)
            graph_run._next_node = result  # recovered: the run goes on from the hook's node
        after = await capability.after_node_run(ctx, node=node, result=result)
        if any(after is node for node in failed):
            await self._run_again(after)
        if after is not result or graph_run.next_node is not after:
            graph_run._next_node = after
        if isinstance(after, End) and graph_run.state.pending_messages:
            return await self._deliver_at_end()
        return after  # type: ignore[no-any-return]

    async def _run_again(self, node: Any) -> None:
        """Make `node`, which failed in this step and which a hook recovered to, runnable again: a new snapshot of
        it (the failed one stays as it was, with its error), stored at once in a durable run."""
        node.set_snapshot_id(graph_nodes.generate_snapshot_id(node.get_node_id()))
        if self._graph_run.deps.durable:
            await self._graph_run.persistence.snapshot_node(self._graph_run.state, node)

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
        delivered = [*take_pending(queue, 'asap', *ids), *take_pending(queue, 'when_idle', *ids)]
        *before, last = [message for item in delivered for message in item.messages]
        if not isinstance(last, ModelRequest):
            raise UserError(
                'Enqueued content must end with a `ModelRequest` so the agent has a request to respond to, '
                f'but the last queued message is a `{type(last).__name__}`.'
            )
        state.message_history.extend(before)
        deps.merge_adjacent = True  # the history may now hold requests (or responses) that follow each other
        node: ModelRequestNode[DepsT, OutputT] = ModelRequestNode(last)
        add_enqueued_events(node, delivered_events(delivered))
        deps.tool_deltas = deps.tool_deltas or has_tool_deltas([*before, last])
        graph_run._next_node = node
        if deps.durable:
            await graph_run.persistence.snapshot_node(state, node)
        return node

    def cancel(self) -> None:
        """Cancel the run, from any task or thread (e.g. the handler of a stop button while another task drives
        the run).

        The run stops what it is doing: the model request in flight is torn down and running tools are cancelled
        (a tool in a worker thread runs to its end, unseen). The code driving the run sees the event loop's
        cancellation, and the `agent.iter()` block (or `agent.run()`) ends with `RunCancelled`, which holds the
        messages up to the cancellation (pass them as a new run's `message_history` to go on). Unlike
        `StreamedRunResult.cancel()`, which stops one streamed response, this ends the run. Calling it again does
        nothing, and so does a call after the `agent.iter()` block has ended; a call inside the block after the
        run reached its end still makes the block end with `RunCancelled`.
        """
        self._graph_run.deps.cancellation.cancel()

    def keep_unsent_results(self) -> None:
        """When the run stops (cancelled) with a model request built but not sent: keep its tool results in the
        history, in a request marked `'interrupted'`, as those of tools stopped while running are kept."""
        node = self._graph_run.next_node
        history = self._graph_run.state.message_history
        if not isinstance(node, ModelRequestNode) or any(m is node.request for m in history[-2:]):
            return
        results = [p for p in node.request.parts if isinstance(p, ToolReturnPart | RetryPromptPart)]
        if results:
            history.append(dataclasses.replace(node.request, parts=results, state='interrupted'))

    @property
    def pending_messages(self) -> list[PendingMessage]:
        """The content enqueued and not yet delivered (the run's queue itself; add to it with `enqueue`)."""
        return self._graph_run.state.pending_messages

    async def emit(self, event: _CustomEventT, /) -> _CustomEventT:
        """Put an application's `CustomEvent` into the run's event stream (from the code driving `iter`): it comes
        first in the stream of the next node streamed.

        Returns:
            The event.

        Raises:
            UserError: the run has ended, or `event` is a `CapabilityEvent` (those belong to capabilities).
        """
        if self.result is not None:
            raise UserError('`emit` cannot be called after the run has ended: no stream is left to give the event.')
        if isinstance(event, CapabilityEvent):
            raise UserError(
                'A capability event belongs to a capability (its hooks and tools emit it with `RunContext.emit`); '
                'application code emits a `CustomEvent`.'
            )
        self._graph_run.deps.event_buffer.append(event)
        return event

    def enqueue(self, *content: EnqueueContent, priority: PendingMessagePriority = 'asap') -> str | None:
        """Queue content for the model from the code driving the run (a webhook, a chat, a job queue).

        Call it from the task (event loop) driving the run; from another thread, hand the call to that loop first
        (e.g. `anyio.from_thread.run_sync(agent_run.enqueue, text)` from a thread started by `anyio.to_thread`).

        Args:
            *content: The items to deliver (see `EnqueueContent`): user content, request parts, whole messages;
                together they must end with a request. No items: nothing is queued.
            priority: `'asap'`: with the next model request, or in one more request if the run would end
                first; `'when_idle'`: only when the run would end, after the `'asap'` content.

        Returns:
            The id of this `enqueue` call (the `enqueue_id` of the `EnqueuedMessagesEvent` of its delivery), or `None`
            when no items were given.

        Raises:
            UserError: the content does not end with a request.
        """
        if (pending := PendingMessage.from_content(*content, priority=priority)) is None:
            return None
        self._graph_run.state.pending_messages.append(pending)
        return pending.enqueue_id

    def dequeue(self, enqueue_id: str) -> bool:
        """Take content queued with `enqueue` (here or by `RunContext.enqueue`) out of the queue before it is
        delivered: it never reaches the model and no `EnqueuedMessagesEvent` is given for it.

        Args:
            enqueue_id: What `enqueue` returned.

        Returns:
            `True` when the content was still queued and is now removed; `False` when it was delivered or dequeued
            already, was never queued in this run, or the run has ended.
        """
        return self.result is None and remove_pending(self._graph_run.state.pending_messages, enqueue_id)

    def set_enqueue_priority(self, enqueue_id: str, priority: PendingMessagePriority) -> bool:
        """Change when content queued with `enqueue` is delivered; it keeps its place in the queue and its id.

        Args:
            enqueue_id: What `enqueue` returned.
            priority: The new priority, as in `enqueue`: `'asap'` (with the next model request) or `'when_idle'`
                (only when the run would end).

        Returns:
            `True` when the content was still queued; `False` when it was delivered or dequeued already, was never
            queued in this run, or the run has ended.
        """
        queue = self._graph_run.state.pending_messages
        return self.result is None and reprioritize_pending(queue, enqueue_id, priority)

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
        return self

    async def __anext__(self) -> AgentNode[DepsT, OutputT] | End[FinalResult[OutputT]]:
        """The next node: first the node the run starts at, before it runs; then, each time, the node after the one
        last given, run through `next` (so the capabilities' node hooks fire, and content queued at the end is
        delivered, as under `agent.run()`). When the loop body has moved the run on itself (`await
        run.next(node)`), the node the run is at is given without running anything, so no node runs twice."""
        previous: Any = self._last_yielded
        if self._skipped or isinstance(previous, End):
            raise StopAsyncIteration
        current: Any = self._graph_run.next_node
        if previous is None or current is not previous:
            node: Any = current
            if self._graph_run.deps.cancellation.cancel_requested and not isinstance(node, End):
                from anyio.lowlevel import checkpoint_if_cancelled  # (loaded by a cancelled run only)

                await checkpoint_if_cancelled()  # a cancellation asked for between steps stops here
        else:
            node = await self.next(previous)
        if isinstance(node, DeferredToolCallsNode) and self.stops_at(node):
            raise StopAsyncIteration  # the run waits on its deferred tool calls: not a node to run
        self._last_yielded = node
        return node  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f'<AgentRun next_node={type(self._graph_run.next_node).__name__}>'


async def run_to_end(agent_run: AgentRun[Any, Any]) -> None:
    """Run every node of `agent_run` (through the capabilities' node hooks, if it has any)."""
    node: Any = agent_run.next_node
    while not agent_run._skipped and not agent_run.stops_at(node):
        node = await agent_run.next(node)


_captured: ContextVar[list[list[ModelMessage]] | None] = ContextVar('_captured', default=None)


@contextmanager
def capture_run_messages() -> Iterator[list[ModelMessage]]:
    """Capture the messages of the first agent run started inside the block, even if it fails (with what an error
    or a cancellation interrupted, marked `state='interrupted'`).

    ```python
    with capture_run_messages() as messages:
        try:
            agent.run_sync('...')
        except UnexpectedModelBehavior:
            print(messages)
    ```

    Blocks nest (pydantic-ai 2.x): a run is captured by the innermost block around it, if no run took that block's
    list yet; a nested block starts empty, and a run started inside a tool of a captured run is not captured by the
    block of the outer run.
    """
    messages: list[ModelMessage] = []
    holder: list[list[ModelMessage]] = [messages]
    token = _captured.set(holder)
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

"""The journal of a durable run's capability operations (methods marked with `durable_operation`).

Each call of such a method while a node runs is identified by the node's snapshot id, the capability's id, the
operation's name, the tool call it serves (if any) and how many calls of it with the same identity came before in
the node. The first time, the method runs and its result is stored in the state (`GraphAgentState.operation_results`)
and checkpointed into the running node's snapshot at once, with the state the node started from: a run killed later
in the node resumes it from the same state, and the call, made again, returns the stored result without running.
"""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import pydantic

from edgewise.graph import BaseNode, BaseStatePersistence

from .state import GraphAgentState

__all__ = ('Operation', 'OperationJournal')

Dispatch = Callable[[Any, Callable[[], Awaitable[Any]]], Awaitable[Any]]
"""Runs a call of an operation (its body given as a function of no arguments) under the journal, given its
`RunContext`."""


@dataclass(frozen=True)
class Operation:
    """A capability's `durable_operation` method, as a run journals it."""

    capability_id: str
    """The capability's `id`."""
    name: str
    """The operation's name (`durable_operation(name)`)."""
    result_type: Any
    """The method's return annotation (`Any` without one): how its result is stored and read back."""


@dataclass(eq=False)
class OperationJournal:
    """The journal of one durable run: where its operations' results are stored, and the node they belong to."""

    persistence: BaseStatePersistence[Any, Any]
    """The run's (durable) persistence."""
    operations: list[Operation]
    """The run's capabilities' operations."""
    dispatchers: dict[tuple[str, str], Dispatch] = field(init=False)
    """A dispatcher per operation, by (capability id, operation name): what `RunContext._durable_operations` holds."""
    lock: anyio.Lock = field(default_factory=lambda: anyio.Lock())  # (anyio loads its locks on first use)
    """Held by each write of the running node's checkpoint (the tool calls' checkpoints take it too)."""
    _state: GraphAgentState | None = field(default=None, init=False)
    _node: BaseNode[Any, Any, Any] | None = field(default=None, init=False)
    _start: GraphAgentState | None = field(default=None, init=False)
    _snapshot_id: str | None = field(default=None, init=False)
    _counts: dict[str, int] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self.dispatchers = {(op.capability_id, op.name): self._dispatcher(op) for op in self.operations}

    def begin(self, state: GraphAgentState, node: BaseNode[Any, Any, Any]) -> None:
        """Note that `node` starts (or goes on: a streamed node is run after its stream) with `state`.

        The results journaled for an earlier node are dropped; those of this node (from a checkpoint, when it is
        resumed) are kept.
        """
        snapshot_id = node.get_snapshot_id()
        if self._node is node and self._state is state and self._snapshot_id == snapshot_id:
            return
        prefix = f'{snapshot_id}/'
        state.operation_results = {k: v for k, v in state.operation_results.items() if k.startswith(prefix)}
        self._state, self._node, self._snapshot_id, self._counts = state, node, snapshot_id, {}
        self._start = dataclasses.replace(
            state,
            message_history=list(state.message_history),
            usage=dataclasses.replace(state.usage),
            tool_retries=dict(state.tool_retries),
            step_results=list(state.step_results),
            pending_messages=list(state.pending_messages),
        )

    def end(self) -> None:
        """Note that the node journaled for has finished: calls made before the next node starts are not journaled
        (its snapshot is closed)."""
        self._state = self._node = self._start = self._snapshot_id = None

    def _dispatcher(self, operation: Operation) -> Dispatch:
        adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(operation.result_type)

        async def dispatch(ctx: Any, call: Callable[[], Awaitable[Any]]) -> Any:
            state, node = self._state, self._node
            if state is None or node is None:  # called while no node runs (e.g. in a run hook): in place
                return await call()
            identity = f'{self._snapshot_id}/{operation.capability_id}/{operation.name}/{ctx.tool_call_id or ""}'
            count = self._counts.get(identity, 0)
            self._counts[identity] = count + 1
            key = f'{identity}/{count}'
            if key in state.operation_results:
                return adapter.validate_python(state.operation_results[key])
            result = await call()
            async with self.lock:
                state.operation_results[key] = adapter.dump_python(result, mode='json')
                await self.checkpoint()
            return result

        return dispatch

    async def checkpoint(self) -> None:
        """Store the running node's journal (and finished tool calls) in its snapshot, with the state it started
        from. The caller holds `lock`."""
        state, start, node = self._state, self._start, self._node
        assert state is not None
        assert start is not None
        assert node is not None
        stored = dataclasses.replace(
            start, step_results=list(state.step_results), operation_results=dict(state.operation_results)
        )
        await self.persistence.checkpoint(stored, node)

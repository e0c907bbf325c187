"""Durable chats: each turn of a conversation is a durable agent run in an Edgewise store.

The run of turn `n` of chat `c` has the id `chat-<c>-<n>` (four digits); it starts from the whole history of
the turn before (read back from the store, never taken from the client) and the user's new message. A turn
that waits for tool approvals stays stored as waiting, and the answers continue that same run, whenever they
come and from whichever process serves the app. A page reload, or a new app on the same store, shows the
conversation as stored.
"""

from __future__ import annotations as _annotations

import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from edgewise.graph.exceptions import PersistenceError
from edgewise.graph.persistence import RunStatus
from edgewise.graph.persistence.store import DurableStatePersistence, persistence_from_url

from ...exceptions import UserError
from ...messages import ModelMessage
from ...result import AgentRunResultEvent
from ...tools import DeferredToolRequests
from .._event_stream import NativeEvent

__all__ = ('ChatPersistence', 'StoredTurn', 'chat_persistence', 'continue_events', 'latest_turn', 'turn_run_id')

ChatPersistence = Callable[[str], DurableStatePersistence[Any, Any]]
"""Makes the persistence of the run with the given id (e.g. `lambda run_id: SqliteStatePersistence(path, run_id)`)."""

_CHAT_ID = re.compile(r'[A-Za-z0-9_.-]{1,100}')


def chat_persistence(persistence: str | ChatPersistence) -> ChatPersistence:
    """The persistence factory of `persistence`: a store URL (`sqlite:///chats.db`, `postgresql://...`,
    `file:///dir`) or already a factory."""
    if isinstance(persistence, str):
        url = persistence
        return lambda run_id: persistence_from_url(url, run_id)
    return persistence


def turn_run_id(chat_id: str, turn: int) -> str:
    """The run id of a chat's turn.

    Raises:
        UserError: the chat id is not 1 to 100 letters, digits, `_`, `.` or `-`.
    """
    if not _CHAT_ID.fullmatch(chat_id):
        raise UserError(f'Chat id {chat_id[:120]!r}: use 1 to 100 letters, digits, `_`, `.` or `-`.')
    return f'chat-{chat_id}-{turn:04d}'


@dataclass
class StoredTurn:
    """The last stored turn of a chat."""

    number: int
    """Its number, from 1."""
    persistence: DurableStatePersistence[Any, Any]
    """Its run's persistence (open: close it when done)."""
    status: RunStatus
    """Its run's status (`'waiting'`: for approvals, or cut short by a stopped process)."""
    messages: list[ModelMessage]
    """The conversation as the run stored it."""
    approvals: frozenset[str]
    """The ids of the tool calls the run waits to have approved (none unless it is waiting for approvals)."""


async def latest_turn(agent: Any, factory: ChatPersistence, chat_id: str) -> StoredTurn | None:
    """The chat's last stored turn, or `None` for a chat not stored yet."""
    found: tuple[int, DurableStatePersistence[Any, Any], RunStatus] | None = None
    turn = 1
    while True:
        persistence = factory(turn_run_id(chat_id, turn))
        info = await persistence.info()
        if info is None:
            await persistence.aclose()
            break
        if found is not None:
            await found[1].aclose()
        found = (turn, persistence, info.status)
        turn += 1
    if found is None:
        return None
    number, persistence, status = found
    persistence.set_graph_types(agent.graph)
    try:
        snapshots = await persistence.load_all()
    except PersistenceError:
        await persistence.aclose()
        raise UserError(
            f'Run {turn_run_id(chat_id, number)!r} of the store is not a turn of a chat with this agent: '
            'use another chat id.'
        ) from None
    # A run waiting on deferred calls is stored with a node holding them (`DeferredToolRequests`) next.
    requests = getattr(getattr(snapshots[-1], 'node', None), 'requests', None) if snapshots else None
    approvals = (
        frozenset(c.tool_call_id for c in requests.approvals)
        if isinstance(requests, DeferredToolRequests)
        else frozenset()
    )
    return StoredTurn(number, persistence, status, stored_messages(snapshots), approvals)


def stored_messages(snapshots: list[Any]) -> list[ModelMessage]:
    """The whole conversation of a stored agent run.

    Each snapshot of a durable agent run holds the messages after its state's `message_offset`; the model
    response a call-tools step works on is held by its node when the state says `response_in_node`.
    """
    messages: list[ModelMessage] = []
    for snapshot in snapshots:
        state = snapshot.state
        history = getattr(state, 'message_history', None)
        if history is None:
            continue
        del messages[getattr(state, 'message_offset', 0) :]
        messages.extend(history)
        response = getattr(getattr(snapshot, 'node', None), 'model_response', None)
        if getattr(state, 'response_in_node', False) and response is not None:
            messages.append(response)
    return messages


async def continue_events(agent: Any, persistence: Any, **options: Any) -> AsyncIterator[NativeEvent]:
    """The events of a stored run continued (`Agent.iter_from_persistence`), ending with its result."""
    async with agent.iter_from_persistence(persistence, **options) as run:
        async for node in run:
            if agent.is_model_request_node(node) or agent.is_call_tools_node(node):
                async with node.stream(run.ctx) as stream:
                    async for event in stream:
                        yield event
        result = run.result
    yield AgentRunResultEvent(result)

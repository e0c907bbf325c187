"""`Conversation`: what a conversation carries from one run to the next (pydantic-ai 2.68), as one value to continue,
serialize (`ConversationTypeAdapter`) and store (`edgewise.agent.conversation_store`)."""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import Sequence
from copy import deepcopy
from dataclasses import KW_ONLY
from typing import Annotated, Any, cast

import pydantic

from ._messages.ids import uuid7
from ._messages.model_messages import ModelMessage, messages_type_adapter
from ._messages.usage_counts import RunUsage
from ._tools.deferred_calls import DeferredToolRequests
from .exceptions import UserError

__all__ = ('Conversation', 'ConversationTypeAdapter')  # (and the helpers of runs and stores below)


def _messages_as_json(messages: list[ModelMessage], info: pydantic.SerializationInfo) -> Any:
    # Through the messages' own adapter, which writes `bytes` in `Any` fields (a tool's raw return) as base64 as it
    # does for a history alone; the caller's dump options (include/exclude, context, ...) go on to it.
    return messages_type_adapter().dump_python(
        messages,
        mode='json',
        include=cast(Any, info.include),
        exclude=cast(Any, info.exclude),
        by_alias=info.by_alias,
        exclude_unset=info.exclude_unset,
        exclude_defaults=info.exclude_defaults,
        exclude_none=info.exclude_none,
        round_trip=info.round_trip,
        serialize_as_any=info.serialize_as_any,
        context=info.context,
    )


@dataclasses.dataclass
class Conversation:
    """Everything a conversation carries from one run to the next: its messages, its usage so far (so usage limits
    count the whole conversation), its id, and the deferred tool calls a paused run waits on (which the messages
    alone cannot tell).

    `AgentRunResult.conversation` gives one; `Agent.run(conversation=...)` (and the other run entry points) takes
    it back. It serializes as any pydantic value, or with `ConversationTypeAdapter`, as faithfully as
    `ModelMessagesTypeAdapter` does messages.
    """

    __pydantic_config__ = pydantic.ConfigDict(defer_build=True)

    _: KW_ONLY
    messages: Annotated[list[ModelMessage], pydantic.PlainSerializer(_messages_as_json, when_used='json')] = (
        dataclasses.field(default_factory=list[ModelMessage])
    )
    """The conversation so far (what `message_history=` takes)."""
    usage: RunUsage = dataclasses.field(default_factory=RunUsage)
    """The usage of every run of the conversation (tool calls and trimmed turns included, which the messages cannot
    account for)."""
    conversation_id: str = dataclasses.field(default_factory=uuid7)
    """The id every run of the conversation shares, and the key a store keeps it under."""
    deferred_tool_requests: DeferredToolRequests | None = None
    """The tool calls the conversation waits on, when its last run ended with `DeferredToolRequests`: answer them
    with `build_results` and pass the results as `deferred_tool_results=` with the conversation."""
    revision: str | None = None
    """The revision of the stored copy this conversation continues (`None`: not loaded from a store). A store's
    `load` sets it, its `save` checks and advances it, so that a save notices another writer's; a run carries it to
    its result's `conversation`. Compare it for equality only."""
    new_message_index: int | None = dataclasses.field(default=None, compare=False)
    """Where in `messages` those the store does not have yet start (`None`: not known, and a save compares the
    messages with the stored ones). Set by `load` and by a run continuing a loaded conversation; bookkeeping, so
    two conversations compare equal whatever it is."""


ConversationTypeAdapter: pydantic.TypeAdapter[Conversation] = pydantic.TypeAdapter(Conversation)
"""Validates and serializes a `Conversation` (the counterpart of `ModelMessagesTypeAdapter` for a whole
conversation)."""


def resolve_conversation(
    conversation: Conversation | None,
    *,
    message_history: Sequence[ModelMessage] | None,
    usage: RunUsage | None,
    conversation_id: str | None,
) -> tuple[Sequence[ModelMessage] | None, RunUsage | None, str | None, RunConversation | None]:
    """The `message_history`, `usage` and `conversation_id` a run's `conversation=` stands for (its usage copied:
    a run adds to the usage it is given), and what the run's result needs to give the conversation back.

    Raises:
        UserError: one of the three is given too.
    """
    if conversation is None:
        return message_history, usage, conversation_id, None
    given = [name for name, value in (('message_history', message_history), ('usage', usage),
                                      ('conversation_id', conversation_id)) if value is not None]  # fmt: skip
    if given:
        listed = ' and '.join(f'`{name}`' for name in given)
        raise UserError(
            f'`conversation` already carries {listed}, so passing both is ambiguous. '
            'Pass the conversation on its own, or pass its pieces yourself.'
        )
    index = conversation.new_message_index
    carried = RunConversation(
        revision=conversation.revision,
        unsaved=None if index is None else conversation.messages[index:],
        unchecked=index is not None and stored_boundary(conversation) is None,
    )
    return conversation.messages, deepcopy(conversation.usage), conversation.conversation_id, carried


@dataclasses.dataclass
class RunConversation:
    """What a run continuing a `Conversation` keeps for its result's `conversation` (beside the run's state, not
    stored with it)."""

    revision: str | None
    """The revision of the stored copy the run continues."""
    unsaved: list[ModelMessage] | None
    """The messages of the conversation its store did not have yet (`None`: not known)."""
    unchecked: bool = False
    """Whether the messages before those may have changed since they were stored (the store compares them)."""
    saved: bool = False
    """Whether a store saved the result's conversation."""


RUN_CONVERSATION = '_run_conversation'
"""Where a run's state keeps its `RunConversation` (in the instance's `__dict__`: no field, so never stored)."""

_STORED = '_stored_messages'  # kept in the instance's `__dict__`: not a field, so never compared, copied or dumped


def mark_stored(conversation: Conversation, stored: list[ModelMessage]) -> None:
    """Mark `stored`, the first messages of `conversation`, as those its store has (`new_message_index`)."""
    conversation.new_message_index = len(stored)
    conversation.__dict__[_STORED] = tuple(stored)


def stored_boundary(conversation: Conversation) -> int | None:
    """`conversation.new_message_index`, when the messages before it are still the very ones it was set after
    (else `None`: a save then compares the messages with the stored ones)."""
    index = conversation.new_message_index
    if not index:
        return index
    stored: tuple[ModelMessage, ...] = conversation.__dict__.get(_STORED, ())
    if len(stored) != index or index > len(conversation.messages):
        return None
    if any(message is not kept for message, kept in zip(conversation.messages, stored, strict=False)):
        return None
    return index

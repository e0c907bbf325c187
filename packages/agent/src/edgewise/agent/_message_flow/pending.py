"""Messages queued into a running agent's conversation: what `RunContext.enqueue` and `AgentRun.enqueue` accept,
how the items become messages, and how the queue is taken from when the run delivers them.

The queue lives on the run's state (`GraphAgentState.pending_messages`, persisted with it). The run takes the
`'asap'` items before each model request (they follow the request in the history), and, when it would end, the
`'asap'` items left, then the `'when_idle'` ones: the last request among them is sent as one more model request.
"""

from __future__ import annotations as _annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Literal, TypeAlias

from .._messages.ids import uuid7
from .._messages.model_messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    ToolAvailabilityDeltaPart,
    ToolReturnPart,
    UserContent,
    UserPromptPart,
)
from ..exceptions import UserError
from .events import EnqueuedMessagesEvent

__all__ = (
    'EnqueueContent',
    'PendingMessage',
    'PendingMessagePriority',
    'check_priority',
    'delivered_events',
    'remove_pending',
    'reprioritize_pending',
    'take_pending',
)

PendingMessagePriority: TypeAlias = Literal['asap', 'when_idle']
"""When queued content reaches the model.

- `'asap'`: with the next model request (after the request in the history), or, when the run would end
  before making one, in one more request the run makes for it.
- `'when_idle'`: only when the run would end, after the `'asap'` content; it never interrupts the work
  in progress.
"""

EnqueueContent: TypeAlias = (
    UserContent
    | SystemPromptPart
    | UserPromptPart
    | ToolReturnPart
    | RetryPromptPart
    | ToolAvailabilityDeltaPart
    | ModelMessage
)
"""One item given to `enqueue` (each positional argument is one):

- user content (a `str`, an `ImageUrl`, `BinaryContent`, ...): items of it that follow each other make one
  `UserPromptPart` (`enqueue('look at this', image)` is one user turn);
- a request part (`SystemPromptPart`, `UserPromptPart`, `ToolReturnPart`, `RetryPromptPart`,
  `ToolAvailabilityDeltaPart`), kept as it is;
- a whole `ModelRequest` or `ModelResponse`, kept as a message of its own.

Parts and user content that follow each other go into one `ModelRequest`. The content must end with a request
(the model needs something to answer).
"""

_REQUEST_PARTS = (SystemPromptPart, UserPromptPart, ToolReturnPart, RetryPromptPart, ToolAvailabilityDeltaPart)


def _as_messages(items: Sequence[EnqueueContent]) -> list[ModelMessage]:
    """The messages `items` make, in their order (see `EnqueueContent`)."""
    messages: list[ModelMessage] = []
    parts: list[SystemPromptPart | UserPromptPart | ToolReturnPart | RetryPromptPart | ToolAvailabilityDeltaPart] = []
    content: list[UserContent] = []

    def close_prompt() -> None:
        if content:
            # One string stays a string, as a run's own prompt does; anything else is a list of content.
            only = content[0]
            parts.append(UserPromptPart(only if len(content) == 1 and isinstance(only, str) else list(content)))
            content.clear()

    def close_request() -> None:
        close_prompt()
        if parts:
            messages.append(ModelRequest(list(parts)))
            parts.clear()

    for item in items:
        if isinstance(item, ModelRequest | ModelResponse):
            close_request()
            messages.append(item)
        elif isinstance(item, _REQUEST_PARTS):
            close_prompt()
            parts.append(item)
        else:
            content.append(item)
    close_request()
    return messages


@dataclass
class PendingMessage:
    """Content queued by one `enqueue` call, waiting to be delivered to the model."""

    messages: list[ModelMessage]
    """The messages to add to the conversation, in order; `enqueue` makes sure the last one is a request."""
    priority: PendingMessagePriority = 'asap'
    """When the messages are delivered (see `PendingMessagePriority`)."""
    enqueue_id: str = field(default_factory=uuid7)
    """The id of the `enqueue` call (what it returned), given again by the `EnqueuedMessagesEvent` of the delivery."""

    @classmethod
    def from_content(cls, *content: EnqueueContent, priority: PendingMessagePriority = 'asap') -> PendingMessage | None:
        """The pending message the `enqueue` arguments make; `None` when they are none (nothing to deliver).

        Raises:
            UserError: the content does not end with a request (a lone `ModelResponse`, say), or `priority` is not a
                `PendingMessagePriority`.
        """
        check_priority(priority)
        messages = _as_messages(content)
        if not messages:
            return None
        if not isinstance(messages[-1], ModelRequest):
            raise UserError(
                'Enqueued content must end with a `ModelRequest` (or user content / `ModelRequestPart` items that '
                'form one), so the agent has a request to respond to.'
            )
        return cls(messages, priority)


def take_pending(
    queue: list[PendingMessage], priority: PendingMessagePriority, run_id: str, conversation_id: str
) -> list[PendingMessage]:
    """Remove the queued items of `priority` from `queue` (in place: tools and callers hold the same list) and
    return them, in order, their messages given the timestamp, run id and conversation id they lack."""
    taken = [item for item in queue if item.priority == priority]
    if not taken:
        return []
    queue[:] = [item for item in queue if item.priority != priority]
    now = datetime.now(tz=timezone.utc)
    for item in taken:
        for message in item.messages:
            message.timestamp = message.timestamp or now
            message.run_id = message.run_id or run_id
            message.conversation_id = message.conversation_id or conversation_id
    return taken


def remove_pending(queue: list[PendingMessage], enqueue_id: str) -> bool:
    """Remove the item `enqueue_id` from `queue` (in place); `False` when it is not (or no longer) there."""
    for index, item in enumerate(queue):
        if item.enqueue_id == enqueue_id:
            del queue[index]
            return True
    return False


def check_priority(priority: object) -> None:
    """Refuse a priority that is not a `PendingMessagePriority` (content queued with it would never be delivered).

    Raises:
        UserError: `priority` is neither `'asap'` nor `'when_idle'`.
    """
    if priority != 'asap' and priority != 'when_idle':
        raise UserError(
            f"Unknown enqueue priority {priority!r}: use 'asap' (delivered with the next model request) or "
            "'when_idle' (delivered once the agent would otherwise end its run)."
        )


def reprioritize_pending(queue: list[PendingMessage], enqueue_id: str, priority: PendingMessagePriority) -> bool:
    """Give the item `enqueue_id` of `queue` a new priority, keeping its place; `False` when it is not there.

    Raises:
        UserError: `priority` is not a `PendingMessagePriority`.
    """
    check_priority(priority)
    for item in queue:
        if item.enqueue_id == enqueue_id:
            item.priority = priority
            return True
    return False


def delivered_events(delivered: Sequence[PendingMessage]) -> list[EnqueuedMessagesEvent]:
    """The `EnqueuedMessagesEvent` of each delivered item."""
    return [EnqueuedMessagesEvent(enqueue_id=item.enqueue_id, messages=tuple(item.messages)) for item in delivered]

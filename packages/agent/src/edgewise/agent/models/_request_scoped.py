"""Request-scoped system prompts (`SystemPromptPart(scope='request')`) as a model is sent them (a step of
`Model.prepare_messages`, pydantic-ai 2.68).

Such a part counts for the request it is in only. A model whose API clears it itself
(`supports_request_scoped_system_prompts`, Anthropic's `clear_at`) is sent every one of them, always in the same
place, and the API stops showing each once a later user turn exists. Any other model is sent only the ones of the
current request, at the end of that request; the earlier ones are left out. The history keeps them all.
"""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TypeVar

from ..messages import ModelMessage, ModelRequest, ModelRequestPart, ModelResponse, SystemPromptPart

__all__ = ('drop_unanswered', 'dropping_unanswered', 'is_request_scoped', 'scope_system_prompts')

_T = TypeVar('_T')


def is_request_scoped(part: object) -> bool:
    """Whether `part` is a system prompt that counts for its own request only."""
    return isinstance(part, SystemPromptPart) and part.scope == 'request'


def scope_system_prompts(messages: list[ModelMessage], *, cleared_by_api: bool) -> list[ModelMessage]:
    """`messages` with the request-scoped system prompts a model is to see.

    With `cleared_by_api` (the profile's `supports_request_scoped_system_prompts`), only the ones the API would
    never get to clear are left out (see `_unclearable`); else every one before the current request is left out and
    the current request's go to its end. A request left with no part is left out. `messages` itself when nothing
    changes.

    Args:
        messages: The history, with retry feedback and records already rendered as prompts.
        cleared_by_api: Whether the model's API clears such a part itself.
    """
    if not any(is_request_scoped(part) for message in messages for part in message.parts):
        return messages
    start = _current_request_start(messages)
    if cleared_by_api:
        return _without_scoped(messages, _unclearable(messages, start))
    stale = {index for index in range(start) if _holds_scoped(messages[index])}
    return _scoped_last(_without_scoped(messages, stale))


def _holds_scoped(message: ModelMessage) -> bool:
    return isinstance(message, ModelRequest) and any(is_request_scoped(part) for part in message.parts)


def _current_request_start(messages: Sequence[ModelMessage]) -> int:
    """Where the request being sent starts: the trailing requests no response answered yet, and the responses after
    them that continue that request (a suspended response asked to go on). Adjacent requests are sent as one."""
    index = len(messages)
    while index and isinstance(messages[index - 1], ModelResponse):
        index -= 1
    while index and isinstance(messages[index - 1], ModelRequest):
        index -= 1
    return index


def _unclearable(messages: list[ModelMessage], start: int) -> set[int]:
    """The earlier requests whose request-scoped prompts an API clearing them at the next user turn never clears:
    those whose next request holds nothing sent in the user's voice (only system prompts, such as retry feedback
    speaking for the run). They are left out of every later request, so what a request sends of the history does
    not depend on how far the conversation went."""
    unclearable: set[int] = set()
    for index in range(start):
        if not _holds_scoped(messages[index]):
            continue
        following = index + 1
        while following < len(messages) and isinstance(messages[following], ModelResponse):
            following += 1
        user_turn = False
        while following < len(messages) and isinstance(request := messages[following], ModelRequest):
            user_turn = user_turn or any(_in_user_voice(part) for part in request.parts)
            following += 1
        if not user_turn:
            unclearable.add(index)
    return unclearable


def _in_user_voice(part: ModelRequestPart) -> bool:
    """Whether a rendered request part reaches the model in a user turn: all but system prompts."""
    return not isinstance(part, SystemPromptPart)


def _without_scoped(messages: list[ModelMessage], indexes: set[int]) -> list[ModelMessage]:
    if not indexes:
        return messages
    kept: list[ModelMessage] = []
    for index, message in enumerate(messages):
        if index not in indexes or not isinstance(message, ModelRequest):
            kept.append(message)
        elif parts := [part for part in message.parts if not is_request_scoped(part)]:
            kept.append(dataclasses.replace(message, parts=parts))
    return kept


def _scoped_last(messages: list[ModelMessage]) -> list[ModelMessage]:
    """`messages` with the (current) request-scoped prompts moved to the end of the last request, in order: sent
    after everything a later request will send again, so they end the request and the prefix a provider caches."""
    scoped = [part for message in messages if isinstance(message, ModelRequest) for part in message.parts]
    scoped = [part for part in scoped if is_request_scoped(part)]
    if not scoped:
        return messages
    last = max(index for index, message in enumerate(messages) if isinstance(message, ModelRequest))
    moved: list[ModelMessage] = []
    for index, message in enumerate(messages):
        if not isinstance(message, ModelRequest) or not (index == last or _holds_scoped(message)):
            moved.append(message)
            continue
        parts = [part for part in message.parts if not is_request_scoped(part)]
        if index == last:
            moved.append(dataclasses.replace(message, parts=[*parts, *scoped]))
        elif parts:
            moved.append(dataclasses.replace(message, parts=parts))
    return moved


def drop_unanswered(history: list[ModelMessage]) -> None:
    """Take the request-scoped system prompts out of the requests `history` ends with, in place, when the run gives
    up on their step without a response (it failed or was cancelled, or a hook asked for a retry without one): they
    were written for that step, and the next request would otherwise send them beside its own. Each such request is
    replaced by a copy without them (an emptied one stays, so the history keeps its length); a request a response
    answered keeps them."""
    index = len(history)
    while index and isinstance(request := history[index - 1], ModelRequest):
        index -= 1
        if any(is_request_scoped(part) for part in request.parts):
            parts = [part for part in request.parts if not is_request_scoped(part)]
            history[index] = dataclasses.replace(request, parts=parts)


@asynccontextmanager
async def dropping_unanswered(
    context: AbstractAsyncContextManager[_T], history: list[ModelMessage]
) -> AsyncIterator[_T]:
    """`context`, with `drop_unanswered(history)` when it ends in an error or a cancellation (a streamed step)."""
    try:
        async with context as value:
            yield value
    except BaseException:
        drop_unanswered(history)
        raise

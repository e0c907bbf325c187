"""`openai_conversation_id`: continuing a conversation that OpenAI keeps (the Responses API's `conversation`).

OpenAI appends each request and response of a conversation to it on its side, so a request that continues one
sends only what followed the latest response made in it; the response says which conversation it joined
(`provider_details['conversation_id']`). The run's own `conversation_id` (the history's) tells, under `'auto'`,
which responses are this conversation's: a history merging two conversations continues only its own.
"""

from __future__ import annotations as _annotations

from collections.abc import Callable, Mapping
from typing import Any

from .._messages.model_messages import ModelMessage, ModelResponse
from ..exceptions import UserError

__all__ = ('check_one_continuation', 'resolve_conversation')


def check_one_continuation(settings: Mapping[str, Any]) -> None:
    """Refuse `openai_previous_response_id` with `openai_conversation_id`: the API continues one or the other.

    Raises:
        UserError: both are set.
    """
    if settings.get('openai_previous_response_id') is not None and settings.get('openai_conversation_id') is not None:
        raise UserError(
            '`openai_previous_response_id` and `openai_conversation_id` cannot both be set: the OpenAI Responses API '
            'continues a conversation either from a stored response or in a conversation object. Keep one of them.'
        )


def resolve_conversation(
    setting: str, messages: list[ModelMessage], *, ours: Callable[[ModelResponse], bool]
) -> tuple[str | None, list[ModelMessage]]:
    """The OpenAI conversation a request continues under `openai_conversation_id`, and the messages it sends.

    The latest response of this endpoint (`ours`) that joined a conversation is the point continued from: only the
    messages after it are sent. With a concrete id, only a response of that conversation counts, and the id is used
    with every message while the history holds none. With `'auto'`, a response of another run conversation (its
    `conversation_id` differs from the request's) is passed over, and nothing is continued while none is found.
    """
    run_conversation = messages[-1].conversation_id if setting == 'auto' and messages else None
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if not isinstance(message, ModelResponse) or not ours(message):
            continue
        if run_conversation is not None and message.conversation_id not in (None, run_conversation):
            continue  # another conversation's response, in a history that holds several
        found = (message.provider_details or {}).get('conversation_id')
        if isinstance(found, str) and (setting == 'auto' or found == setting):
            return found, messages[index + 1 :]
    return (None if setting == 'auto' else setting), messages

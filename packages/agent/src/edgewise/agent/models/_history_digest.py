"""`ModelResponse.history_digest`: what a stored response was made from, and whether a request may continue from it.

An API that keeps responses on its side (OpenAI Responses, with `previous_response_id`) rebuilds the conversation
from the stored response it is pointed at. That is only right while the messages up to and including that response
are the ones the server got; a history processor, a compaction or an edit of a stored history may have changed them.
So a response made under such a setting records a SHA-256 (an HMAC-SHA256 when the model has a key) of the history
it was made from, followed by its own parts, as 64 lowercase hex digits. A later request continues from it only
when the same digest comes out of the history as it now stands; otherwise (or without a digest) everything is sent.

What is hashed is the history's JSON (`ModelMessagesTypeAdapter`, `None` fields left out so that a field added in a
later release does not change old digests), without what never reaches the model: the `metadata` of messages, of
tool returns and of a user prompt's `TextContent`, and the requests' `instructions` (a request sends its own each
time) unless they went out as an input message. Each of the response's parts follows after a newline, a tool call
as a plain `ToolCallPart` (the run stamps a kind on a call after the request, which is never sent).
"""

from __future__ import annotations as _annotations

import dataclasses
import hashlib
import hmac
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

import pydantic

from .._messages.compaction import CompactionPart
from .._messages.content import TextContent
from .._messages.model_messages import (
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ModelResponsePart,
    UserPromptPart,
    messages_type_adapter,
)
from .._messages.tool_parts import BaseToolReturnPart, ToolCallPart

__all__ = ('HistoryHasher', 'continuation_digest', 'digest_matches', 'history_hasher', 'resolve_previous_response')


class HistoryHasher(Protocol):
    """A running hash: `hashlib`'s SHA-256 or `hmac`'s HMAC, which both copy their state."""

    def update(self, data: bytes, /) -> None:
        """Feed `data` to the hash."""

    def copy(self) -> HistoryHasher:
        """An independent hash of what was fed so far."""
        ...

    def hexdigest(self) -> str:
        """The digest of what was fed so far, in hex."""
        ...


_part_adapter: pydantic.TypeAdapter[ModelResponsePart] | None = None


def _parts_adapter() -> pydantic.TypeAdapter[ModelResponsePart]:
    global _part_adapter
    if _part_adapter is None:
        config = pydantic.ConfigDict(ser_json_bytes='base64', val_json_bytes='base64')
        _part_adapter = pydantic.TypeAdapter(ModelResponsePart, config=config)
    return _part_adapter


def history_hasher(
    history: Sequence[ModelMessage], key: bytes | None, *, with_instructions: bool = False
) -> HistoryHasher:
    """The hash of `history` (the messages a response is made from), keyed with `key` when there is one.

    Args:
        history: The messages, as the model was given them.
        key: The HMAC key (`None`: a plain SHA-256).
        with_instructions: Keep the requests' `instructions` (they went out as an input message).
    """
    cleaned = [_without_metadata(message, with_instructions) for message in history]
    hasher: HistoryHasher = hashlib.sha256() if key is None else hmac.new(key, digestmod=hashlib.sha256)
    hasher.update(messages_type_adapter().dump_json(cleaned, exclude_none=True))
    return hasher


def continuation_digest(history: HistoryHasher, parts: Sequence[ModelResponsePart]) -> str:
    """The digest of a response with `parts`, made from the history hashed in `history` (which is left as it is)."""
    hasher = history.copy()
    adapter = _parts_adapter()
    for part in parts:
        sent = _plain_call(part) if isinstance(part, ToolCallPart) else part
        hasher.update(b'\n')
        hasher.update(adapter.dump_json(_part_without_metadata(sent), exclude_none=True))
    return hasher.hexdigest()


def digest_matches(response: ModelResponse, history: Sequence[ModelMessage], key: bytes | None) -> bool:
    """Whether `response` and `history`, the messages before it, are what the response was made from: its recorded
    digest comes out again (counting the requests' instructions or not). `False` for a response without one."""
    if response.history_digest is None:
        return False
    return any(
        hmac.compare_digest(
            response.history_digest,
            continuation_digest(history_hasher(history, key, with_instructions=instructions), response.parts),
        )
        for instructions in (False, True)
    )


def resolve_previous_response(
    setting: str | None,
    messages: list[ModelMessage],
    *,
    ours: Callable[[ModelResponse], bool],
    provider_name: str,
    key: bytes | None,
    allow_empty: bool = False,
) -> tuple[str | None, list[ModelMessage]]:
    """The stored response a request continues from under the `previous_response_id` setting, and the messages it
    sends: those after that response, or all of them.

    The latest response `ours` accepts (this API's, at this endpoint) is continued from when its digest matches and
    messages follow it (or `allow_empty`). A concrete id in `setting` is used (with every message) while the history
    holds none of ours to continue from; `'auto'` then continues nothing. A response of ours whose digest does not
    match (or is missing), or a compaction, ends the search: nothing is continued, not even a concrete id, and
    everything is sent, since the server's copy would lack the change.

    Args:
        setting: `'auto'`, a response id, or `None` (no continuation).
        messages: The history, ending with the request to send.
        ours: Whether the server holds a response (its provider and endpoint are the model's).
        provider_name: The provider's name, which a compaction part sent to this API carries.
        key: The key of the model's digests.
        allow_empty: Continue even when no message follows the response (a compaction request).
    """
    seed = None if setting in (None, 'auto') else setting
    if setting is None:
        return None, messages
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if not isinstance(message, ModelResponse):
            continue
        mine = ours(message)
        if (mine and (message.provider_details or {}).get('compaction')) or (
            not mine and any(isinstance(p, CompactionPart) and p.provider_name == provider_name for p in message.parts)
        ):
            return None, messages
        if not mine:
            continue
        if not digest_matches(message, messages[:index], key):
            return None, messages
        tail = messages[index + 1 :]
        if message.provider_response_id and (tail or allow_empty):
            return message.provider_response_id, tail
        break
    return seed, messages


def _plain_call(part: ToolCallPart) -> ToolCallPart:
    # The base class without `tool_kind`: what the model sent, before the run narrowed it to its kind's subclass.
    args = dict(part.args) if isinstance(part.args, dict) else part.args
    return ToolCallPart(
        part.tool_name,
        args,
        part.tool_call_id,
        id=part.id,
        provider_name=part.provider_name,
        provider_details=part.provider_details,
    )


def _without_metadata(message: ModelMessage, with_instructions: bool) -> ModelMessage:
    if isinstance(message, ModelRequest):
        request_parts = [_part_without_metadata(part) for part in message.parts]
        if with_instructions:
            return dataclasses.replace(message, parts=request_parts, metadata=None)
        return dataclasses.replace(message, parts=request_parts, metadata=None, instructions=None)
    response_parts = [_part_without_metadata(part) for part in message.parts]
    return dataclasses.replace(message, parts=response_parts, metadata=None)


_PartT = TypeVar('_PartT', ModelRequestPart, ModelResponsePart)


def _part_without_metadata(part: _PartT) -> _PartT:
    if isinstance(part, BaseToolReturnPart):
        return dataclasses.replace(part, metadata=None)
    if isinstance(part, UserPromptPart) and not isinstance(part.content, str):
        content: list[Any] = [
            dataclasses.replace(item, metadata=None) if isinstance(item, TextContent) else item for item in part.content
        ]
        return dataclasses.replace(part, content=content)
    return part

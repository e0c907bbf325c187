"""Tool call ids of a fixed length, for APIs that take no other (the profile's `tool_call_id_length`): `ToolCallIds`
fits them one by one (as an adapter maps a history), `fit_tool_call_ids` a whole history (as `Model.prepare_messages`
does before a request).

An id that already has the length and is all ASCII letters and digits goes out as it is; any other goes out as a
hash of it of that length. The same history always gives the same ids (a provider's prompt cache keeps hitting),
and a call and its result, named by the same id, keep naming the same one.
"""

from __future__ import annotations as _annotations

import dataclasses
import hashlib

from .._messages.model_messages import ModelMessage, RetryPromptPart
from .._messages.tool_parts import ToolCallPart, ToolReturnPart
from ..exceptions import UserError

__all__ = ('ToolCallIds', 'fit_tool_call_ids')

_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'


def _hashed(tool_call_id: str, length: int) -> str:
    number = int.from_bytes(hashlib.sha256(tool_call_id.encode()).digest(), 'big')
    digits: list[str] = []
    for _ in range(length):
        number, remainder = divmod(number, len(_ALPHABET))
        digits.append(_ALPHABET[remainder])
    return ''.join(digits)


class ToolCallIds:
    """The ids a history's tool calls go out with: `ids(tool_call_id)`, in the order the history names them.

    Ids are given in history order and never change once given, so a longer history keeps the ids of its start.
    """

    def __init__(self, length: int | None) -> None:
        """Fit ids to `length` characters; `None` keeps every id as it is.

        Raises:
            UserError: `length` is below 1.
        """
        if length is not None and length < 1:
            raise UserError(f"The profile's `tool_call_id_length` must be at least 1, got {length}.")
        self._length = length
        self._given: dict[str, str] = {}
        self._taken: set[str] = set()

    def __call__(self, tool_call_id: str) -> str:
        """The id `tool_call_id` goes out with.

        Raises:
            UserError: the history names more distinct ids than the length can tell apart.
        """
        length = self._length
        if length is None:
            return tool_call_id
        if (given := self._given.get(tool_call_id)) is not None:
            return given
        if len(self._taken) >= len(_ALPHABET) ** length:
            raise UserError(
                f'The history names more distinct tool call ids than {length} letters and digits can tell apart '
                "(the profile's `tool_call_id_length`)."
            )
        fits = len(tool_call_id) == length and tool_call_id.isascii() and tool_call_id.isalnum()
        candidate = tool_call_id if fits else _hashed(tool_call_id, length)
        attempt = 0
        while candidate in self._taken:  # a collision (or an id that fits and equals another's hash)
            attempt += 1
            candidate = _hashed(f'{tool_call_id}#{attempt}', length)
        self._given[tool_call_id] = candidate
        self._taken.add(candidate)
        return candidate


def fit_tool_call_ids(messages: list[ModelMessage], length: int) -> list[ModelMessage]:
    """`messages` with every function tool call id that is not exactly `length` ASCII letters and digits replaced, as
    `ToolCallIds` replaces them; a call and every part answering it (its return, a retry) get the same id. Native tool
    parts keep theirs: the provider that ran them made them. `messages` itself when nothing changes; the messages given
    are never modified.

    Raises:
        UserError: `length` is below 1, or the history has more distinct ids than `length` characters can hold.
    """
    fit = ToolCallIds(length)
    changed = False
    fitted_messages: list[ModelMessage] = []
    for message in messages:
        parts: list[object] = []
        for part in message.parts:
            if isinstance(part, ToolCallPart | ToolReturnPart) or (
                isinstance(part, RetryPromptPart) and part.tool_name is not None
            ):
                new_id = fit(part.tool_call_id)
                if new_id != part.tool_call_id:
                    part = dataclasses.replace(part, tool_call_id=new_id)
            parts.append(part)
        if any(new is not old for new, old in zip(parts, message.parts, strict=True)):
            changed = True
            message = dataclasses.replace(message, parts=parts)  # type: ignore[arg-type]
        fitted_messages.append(message)
    return fitted_messages if changed else messages

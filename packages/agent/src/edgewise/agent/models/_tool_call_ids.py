"""Tool call ids fitted to a profile's `tool_call_id_length`: for providers that take only ids of an exact number of
ASCII letters and digits (Mistral's nine), ids that do not fit are replaced by a hash of themselves that does."""

from __future__ import annotations as _annotations

import dataclasses
import hashlib

from .._messages.model_messages import ModelMessage, RetryPromptPart
from .._messages.tool_parts import ToolCallPart, ToolReturnPart
from ..exceptions import UserError

__all__ = ('fit_tool_call_ids',)

_DIGITS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'


def _hashed(text: str, length: int) -> str:
    number = int.from_bytes(hashlib.sha256(text.encode()).digest(), 'big')
    digits = []
    for _ in range(length):
        number, digit = divmod(number, len(_DIGITS))
        digits.append(_DIGITS[digit])
    return ''.join(digits)


def fit_tool_call_ids(messages: list[ModelMessage], length: int) -> list[ModelMessage]:
    """`messages` with every function tool call id that is not exactly `length` ASCII letters and digits replaced.

    A replacement depends only on the history before it (ids are mapped in history order; one whose hash is taken
    already, by another id or by an id that fits, is hashed again with a counter), so the same history is always
    sent as the same bytes and a growing history keeps its earlier ids. A call and every part answering it (its
    return, a retry) get the same id. Native tool parts keep theirs: the provider that ran them made them.
    `messages` itself when nothing changes; the messages given are never modified.

    Raises:
        UserError: `length` is below 1, or the history has more distinct ids than `length` characters can hold.
    """
    if length < 1:
        raise UserError(f"The profile's `tool_call_id_length` must be at least 1, got {length}.")
    mapping: dict[str, str] = {}
    taken: set[str] = set()

    def fit(tool_call_id: str) -> str:
        found = mapping.get(tool_call_id)
        if found is not None:
            return found
        if len(taken) >= len(_DIGITS) ** length:
            raise UserError(
                f'The message history holds more distinct tool call ids than {length} letters and digits can tell '
                "apart (the profile's `tool_call_id_length`)."
            )
        fits = len(tool_call_id) == length and tool_call_id.isascii() and tool_call_id.isalnum()
        fitted = tool_call_id if fits else _hashed(tool_call_id, length)
        attempt = 0
        while fitted in taken:
            attempt += 1
            fitted = _hashed(f'{tool_call_id}#{attempt}', length)
        mapping[tool_call_id] = fitted
        taken.add(fitted)
        return fitted

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

"""Notes next to user, file, tool and retry text that copies a framework tag (`Model.prepare_messages`, 2.68).

Each item of a request whose text copies one of the framework's tags (`lookalike_tags`) gets a `LookalikeNote`, a
system prompt in the application's voice saying who wrote that text (`lookalike_note`); the item itself is sent as
written. Only what someone else wrote is checked: the standing and mid-conversation system prompts, instruction
changes and the frame the framework puts around retry feedback are the application's own. A note goes right
before the user prompt or retry feedback it is about, and after the request's tool results for a tool result (the
APIs want those first); in the first request of a model with a system role, a note that would join the standing
system prompt goes after its item instead. Where the model has no system role mid-conversation, a note becomes a
`<system>` block like any other system prompt (`_system_frames`). Only the copy sent holds notes, never the history.
"""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pydantic_core

from .._messages.instructions import InstructionDeltaPart
from .._messages.lookalike import LookalikeSource, lookalike_note, lookalike_tags
from .._messages.retry_feedback import RetryFeedbackPart
from ..messages import (
    BinaryContent,
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    RetryPromptPart,
    SystemPromptPart,
    TextContent,
    ToolReturnPart,
    UserPromptPart,
)
from ..profiles import ModelProfile
from ._mapping import is_text_like

__all__ = ('LookalikeNote', 'holds_lookalike', 'note_lookalikes')


@dataclass(repr=False)
class LookalikeNote(SystemPromptPart):
    """A note the framework adds to the copy of a history it sends, next to an item holding a lookalike frame."""


_Found = list[tuple[LookalikeSource, list[str]]]


def note_lookalikes(messages: list[ModelMessage], profile: ModelProfile) -> list[ModelMessage]:
    """`messages` with a `LookalikeNote` next to each item whose text copies a framework tag; `messages` itself when
    there is none."""
    system_role = bool(profile.get('supports_inline_system_prompts', False))
    sealed = not system_role and bool(profile.get('needs_sealed_system_blocks', False))
    noted: list[ModelMessage] = []
    changed = False
    first = True
    for message in messages:
        if isinstance(message, ModelRequest):
            parts = _noted_parts(message, first_request=first, system_role=system_role, sealed=sealed)
            first = False
            if parts is not None:
                message = dataclasses.replace(message, parts=parts)
                changed = True
        noted.append(message)
    return noted if changed else messages


def holds_lookalike(message: ModelMessage) -> bool:
    """Whether `message` is a request with user, file, tool or retry text copying a framework tag."""
    if not isinstance(message, ModelRequest):
        return False
    for part in message.parts:
        if type(part) is UserPromptPart and type(part.content) is str:  # (most prompts: one text, no files)
            if lookalike_tags(part.content):
                return True
        elif _lookalikes(part):
            return True
    return False


def _noted_parts(
    request: ModelRequest, *, first_request: bool, system_role: bool, sealed: bool
) -> list[ModelRequestPart] | None:
    found = [_lookalikes(part) for part in request.parts]
    if not any(found):
        return None
    leading = _leading_system_prompts(request.parts) if first_request else 0
    has_genuine = any(_is_genuine_change(part) for part in request.parts[leading:])
    # A tool's or a file's note names the application's change, unless the user's own text also copies a tag.
    user_copied = any(source == 'user' for sources in found for source, _ in sources)
    genuine_change = has_genuine and not user_copied
    timestamp = request.timestamp

    def note(source: LookalikeSource, tags: list[str], *, preceding: bool, **tool: str | None) -> LookalikeNote:
        text = lookalike_note(
            source,
            tags,
            preceding=preceding,
            system_role=system_role,
            genuine_change=has_genuine if source == 'user' else genuine_change,
            sealed=sealed and source != 'tool',
            **tool,
        )
        return LookalikeNote(text, timestamp=timestamp) if timestamp is not None else LookalikeNote(text)

    parts: list[ModelRequestPart] = []
    tool_notes: list[ModelRequestPart] = []
    for part, sources in zip(request.parts, found, strict=True):
        if isinstance(part, ToolReturnPart) or (isinstance(part, RetryPromptPart) and part.tool_name is not None):
            tags = list(dict.fromkeys(tag for _, found_tags in sources for tag in found_tags))
            if tags:
                tool_notes.append(
                    note('tool', tags, preceding=True, tool_name=part.tool_name, tool_call_id=part.tool_call_id)
                )
            parts.append(part)
            continue
        # Right ahead of the standing system prompt, a note would become part of it on a model with a system role.
        after = system_role and all(isinstance(p, SystemPromptPart) for p in parts)
        notes = [note(source, tags, preceding=after) for source, tags in sources]
        parts.extend([part, *notes] if after else [*notes, part])
    if tool_notes:
        last_result = max(i for i, p in enumerate(parts) if isinstance(p, ToolReturnPart | RetryPromptPart))
        parts[last_result + 1 : last_result + 1] = tool_notes
    return parts


def _leading_system_prompts(parts: Sequence[ModelRequestPart]) -> int:
    return next((i for i, part in enumerate(parts) if not isinstance(part, SystemPromptPart)), len(parts))


def _is_genuine_change(part: ModelRequestPart) -> bool:
    """Whether `part` is a mid-conversation message of the application that stays for later requests."""
    if isinstance(part, SystemPromptPart):
        return part.scope != 'request'
    return isinstance(part, InstructionDeltaPart)


def _lookalikes(part: ModelRequestPart) -> _Found:
    """Who wrote the lookalike frames in `part`, with the tags each copies; empty when there is none."""
    found: dict[LookalikeSource, list[str]] = {}
    for source, text in _authored_texts(part):
        for tag in lookalike_tags(text):
            tags = found.setdefault(source, [])
            if tag not in tags:
                tags.append(tag)
    return list(found.items())


def _authored_texts(part: ModelRequestPart) -> Iterator[tuple[LookalikeSource, str]]:
    """The texts of `part` that someone other than the application wrote, each with its author."""
    if isinstance(part, UserPromptPart):
        items: list[Any] = [part.content] if isinstance(part.content, str) else list(part.content)
        for item in items:
            if isinstance(item, str):
                yield 'user', item
            elif isinstance(item, TextContent):
                yield 'user', item.content
        for item in items:
            if (text := _file_text(item)) is not None:
                yield 'file', text
    elif isinstance(part, ToolReturnPart):
        for item in part.content_items(mode='str', wrap_if_error=False):
            if isinstance(item, str):
                yield 'tool', item
            elif (text := _file_text(item)) is not None:
                yield 'tool', text
    elif isinstance(part, RetryPromptPart | RetryFeedbackPart):
        # What the feedback quotes (a `ModelRetry` message, validation errors with the model's input), not the
        # frame around it.
        content = part.content
        yield 'retry', content if isinstance(content, str) else pydantic_core.to_json(content, fallback=str).decode()


def _file_text(item: object) -> str | None:
    if isinstance(item, BinaryContent) and is_text_like(item.media_type):
        return item.data.decode(errors='replace')
    return None

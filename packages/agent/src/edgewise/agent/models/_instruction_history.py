"""The records a history keeps of instructions, capability loads and settings changes, as a model is sent them
(a step of `Model.prepare_messages`).

An instruction window opens at an `InstructionBaselinePart` or a compaction: the changes recorded before it are
superseded (the prefix was sent anew there). Each `InstructionDeltaPart` of the current window becomes a system
prompt holding its `<pyai:context>` element, or a diff against the block's text as the model last got it (the
window's baseline folded forward by the changes before it). The statements of a loaded deferred capability's block
(`capability:<id>`) are outside the windows: each one since the last compaction becomes such a system prompt. The
other records are dropped: a model sees a loaded capability through its instructions and tools, and a settings
change through the request's settings.
"""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import Sequence
from datetime import datetime, timezone

from .._messages.capability_loading import LoadedBlocks, loaded_block_capability_id
from .._messages.compaction import CompactionPart
from .._messages.deltas import CapabilityLoadDeltaPart, ModelSettingsDeltaPart
from .._messages.instructions import (
    InstructionBaselinePart,
    InstructionDeltaPart,
    InstructionPart,
    tag_window_prefix,
)
from .._messages.model_messages import ModelMessage, ModelRequest, ModelRequestPart, SystemPromptPart

__all__ = ('RECORD_PARTS', 'project_history_records')

RECORD_PARTS = (InstructionDeltaPart, InstructionBaselinePart, CapabilityLoadDeltaPart, ModelSettingsDeltaPart)
"""The request parts that record a change rather than say something to the model."""


def _window_start(messages: Sequence[ModelMessage]) -> tuple[int, int]:
    """Where the current instruction window opens: the last baseline or compaction part, as (message, part)."""
    for message_index in range(len(messages) - 1, -1, -1):
        parts = messages[message_index].parts
        for part_index in range(len(parts) - 1, -1, -1):
            if isinstance(parts[part_index], InstructionBaselinePart | CompactionPart):
                return message_index, part_index
    return -1, -1


def _last_compaction(messages: Sequence[ModelMessage]) -> tuple[int, int]:
    """Where the last compaction part is, as (message, part); `(-1, -1)` without one."""
    for message_index in range(len(messages) - 1, -1, -1):
        parts = messages[message_index].parts
        for part_index in range(len(parts) - 1, -1, -1):
            if isinstance(parts[part_index], CompactionPart):
                return message_index, part_index
    return -1, -1


def _open_window(messages: Sequence[ModelMessage]) -> InstructionBaselinePart | None:
    """The baseline of the instruction window open at the end of `messages`, if any."""
    start = _window_start(messages)
    if start == (-1, -1):
        return None
    opener = messages[start[0]].parts[start[1]]
    return opener if isinstance(opener, InstructionBaselinePart) else None


def project_history_records(messages: list[ModelMessage], *, inline_system: bool) -> list[ModelMessage]:
    """`messages` with the changes of the current instruction window rendered as system prompts and every other
    record dropped (with a request left with no part), and the last request's instructions, when they are the prefix
    of an open window, with its append-mode blocks tagged (`tag_window_prefix`); `messages` itself when it holds no
    record.

    Args:
        messages: The history.
        inline_system: The profile's `supports_inline_system_prompts` (the wording of a withdrawal depends on it).
    """
    if not any(isinstance(p, RECORD_PARTS) for m in messages if isinstance(m, ModelRequest) for p in m.parts):
        return messages
    start = _window_start(messages)
    compacted = _last_compaction(messages)
    last = len(messages) - 1
    window = _open_window(messages)
    in_effect: dict[str, str] = {}  # a block's id -> its text as the model last got it
    loaded = LoadedBlocks()  # the blocks of loaded capabilities: stated outside the windows, until a compaction
    projected: list[ModelMessage] = []
    for message_index, message in enumerate(messages):
        if not isinstance(message, ModelRequest):
            for response_part in message.parts:
                loaded.fold(response_part)
            if any(isinstance(part, CompactionPart) for part in message.parts):
                in_effect.clear()
            projected.append(message)
            continue
        parts: list[ModelRequestPart] = []
        for part_index, part in enumerate(message.parts):
            delta = part if isinstance(part, InstructionDeltaPart) else None
            before = loaded.values.get(loaded_block_capability_id(delta.id) or '') if delta is not None else None
            if loaded.fold(part):
                assert delta is not None
                if (message_index, part_index) > compacted:
                    text = delta.render(inline_system=inline_system, previous=before)
                    parts.append(SystemPromptPart(text, timestamp=message.timestamp or datetime.now(tz=timezone.utc)))
            elif isinstance(part, InstructionBaselinePart):
                in_effect = {
                    str(block.id): block.content
                    for block in part.instructions
                    if isinstance(block, InstructionPart) and block.on_change == 'append' and block.id is not None
                }
            elif isinstance(part, InstructionDeltaPart):
                if part.id is None:  # written by a newer version, for a key this one cannot address
                    continue
                key = str(part.id)
                if (message_index, part_index) > start:
                    text = part.render(inline_system=inline_system, previous=in_effect.get(key))
                    when = message.timestamp or datetime.now(tz=timezone.utc)
                    parts.append(SystemPromptPart(text, timestamp=when))
                if part.content is None:
                    in_effect.pop(key, None)
                else:
                    in_effect[key] = part.content
            elif not isinstance(part, CapabilityLoadDeltaPart | ModelSettingsDeltaPart):
                parts.append(part)
        instructions = message.instructions
        if message_index == last and window is not None and instructions:
            instructions = tag_window_prefix(instructions, window)  # the window's prefix, as the model reads it
        if not any(isinstance(part, RECORD_PARTS) for part in message.parts) and instructions == message.instructions:
            projected.append(message)
        elif parts:
            projected.append(dataclasses.replace(message, parts=parts, instructions=instructions))
    return projected

"""Instruction windows (pydantic-ai 2.68): the records a request keeps of the instruction blocks it is sent with, so
that a block declared `on_change='append'` changes without changing the instruction prefix (and so without breaking
the provider's prompt cache).

A window opens at a request that records an `InstructionBaselinePart`: the first request with an append-mode block,
and each request whose prefix has to change anyway (a rewrite-mode block changed, a compaction). Every request of the
window is sent the prefix the window opened with; a later value of an append-mode block is recorded on the request
that first sends it, as an `InstructionDeltaPart` (`Model.prepare_messages` renders it). An empty baseline ends a
window whose blocks stopped appending.
"""

from __future__ import annotations as _annotations

import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from .._messages.capability_loading import LoadedBlocks
from .._messages.compaction import CompactionPart
from .._messages.instructions import (
    InstructionBaselinePart,
    InstructionDeltaPart,
    InstructionDigest,
    InstructionId,
    InstructionPart,
    instruction_text_hash,
)
from .._messages.model_messages import ModelMessage, ModelRequest

__all__ = ('update_instruction_history', 'instruction_window')


def instruction_window(messages: Sequence[ModelMessage]) -> InstructionBaselinePart | None:
    """The baseline of the window `messages` end in (`None` when none is open: never opened, or a compaction
    since)."""
    window: InstructionBaselinePart | None = None
    for message in messages:
        for part in message.parts:
            if isinstance(part, InstructionBaselinePart):
                window = part
            elif isinstance(part, CompactionPart):
                window = None
    return window


def _recorded_values(
    messages: Sequence[ModelMessage], baseline: InstructionBaselinePart
) -> dict[InstructionId, str | None]:
    """Each append-mode block's value as the model last got it: the baseline's, then the changes after it."""
    values: dict[InstructionId, str | None] = {
        block.id: block.content or None
        for block in baseline.instructions
        if isinstance(block, InstructionPart) and block.id is not None
    }
    seen = False
    loaded = LoadedBlocks()  # a loaded capability's block is stated in the history, outside every window
    for message in messages:
        for part in message.parts:
            if part is baseline:
                seen = True
            elif loaded.fold(part):
                continue
            elif seen and isinstance(part, InstructionDeltaPart) and part.id is not None:
                values[part.id] = part.content
    return values


def _normalize(parts: Sequence[InstructionPart]) -> list[InstructionPart]:
    """Append-mode blocks that no id addresses (none, or one shared) downgraded to `'rewrite'` with a warning;
    the others stripped (kept when empty, so that a withdrawal is recorded)."""
    counts = Counter(part.id for part in parts)
    normalized: list[InstructionPart] = []
    for part in parts:
        if part.on_change == 'append' and (part.id is None or counts[part.id] > 1):
            warnings.warn(f'{_unaddressable(part)}; rewriting its prefix instead.', UserWarning, stacklevel=3)
            if not part.content.strip():
                continue
            part = replace(part, on_change='rewrite')
        normalized.append(replace(part, content=part.content.strip()) if part.on_change == 'append' else part)
    return normalized


def _unaddressable(part: InstructionPart) -> str:
    if part.id is not None:
        return (
            f"Instruction blocks share the id {str(part.id)!r} and use `on_change='append'`, so a change cannot say "
            'which one it replaces. Give each another `name`'
        )
    return (
        "An instruction block without an id uses `on_change='append'`, so a change cannot say what it replaces. "
        'Name it (`InstructionPart(name=...)` returned by an instructions function, or an `id`)'
    )


def _continues(baseline: InstructionBaselinePart, current: Sequence[InstructionPart]) -> bool:
    """Whether `current` can be sent with the window's prefix: its rewrite-mode blocks are the ones the baseline
    digests, unchanged and in order (and every append-mode block of the baseline has an id)."""
    if any(isinstance(block, InstructionPart) and block.id is None for block in baseline.instructions):
        return False
    digests = [block for block in baseline.instructions if isinstance(block, InstructionDigest)]
    rewritten = [part for part in current if part.on_change != 'append']
    return len(digests) == len(rewritten) and all(map(InstructionDigest.matches, digests, rewritten))


def _prefix(baseline: InstructionBaselinePart, current: Sequence[InstructionPart]) -> list[InstructionPart]:
    """The blocks a request of the window is sent: append-mode ones at their baseline value (empty ones left
    out), rewrite-mode ones from `current`, in the baseline's order."""
    rewritten = iter(part for part in current if part.on_change != 'append')
    return [
        block if isinstance(block, InstructionPart) else next(rewritten)
        for block in baseline.instructions
        if not isinstance(block, InstructionPart) or block.content
    ]


def _record_baseline(request: ModelRequest, parts: Sequence[InstructionPart]) -> InstructionBaselinePart:
    baseline = InstructionBaselinePart(
        instructions=[replace(part) if part.on_change == 'append' else InstructionDigest.of(part) for part in parts]
    )
    request.parts = [*request.parts, baseline]
    return baseline


def update_instruction_history(
    messages: Sequence[ModelMessage], parts: Sequence[InstructionPart], request: ModelRequest
) -> list[InstructionPart]:
    """Record on `request` (the request being sent, last in `messages`) what its instruction blocks `parts` change,
    and return the blocks it is sent: the window's prefix while the window goes on, else `parts` themselves.

    With no append-mode block, nothing is recorded (but a window still open is ended with an empty baseline).
    """
    normalized = _normalize(parts)
    baseline = instruction_window(messages)
    appending = any(part.on_change == 'append' for part in normalized)
    if baseline is not None and appending and _continues(baseline, normalized):
        recorded = _recorded_values(messages, baseline)
        current = {part.id: part.content or None for part in normalized if part.on_change == 'append' and part.id}
        changes = [
            InstructionDeltaPart(
                id=key,
                content=current.get(key),
                base_hash=instruction_text_hash(before)
                if (before := recorded.get(key)) is not None and current.get(key) is not None
                else None,
            )
            for key in dict.fromkeys([*recorded, *current])
            if recorded.get(key) != current.get(key)
        ]
        if changes:
            request.parts = [*request.parts, *changes]
        return _prefix(baseline, normalized)
    if appending:
        return _prefix(_record_baseline(request, normalized), normalized)
    if baseline is not None and baseline.instructions:
        _record_baseline(request, [])  # nothing appends any more: the window's changes stop applying
    return normalized

"""The message side of capabilities loaded on demand (`defer_loading=True`): the typed parts of the
`load_capability` tool and the reading of which capabilities a history has loaded (as pydantic-ai 1.107's module
of this name). The capability side (catalog, tool, gating) is `capabilities._loaded_on_demand`."""

from __future__ import annotations as _annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .compaction import CompactionPart
from .history import post_compaction_window
from .instructions import CapabilityInstructionSource, InstructionDeltaPart, InstructionId
from .model_messages import (
    CapabilityLoadDeltaPart,
    LoadCapabilityArgs,
    LoadCapabilityCallPart,
    LoadCapabilityReturn,
    LoadCapabilityReturnPart,
    ModelMessage,
)
from .tool_parts import CAPABILITY_LOAD_TOOL_KIND

__all__ = (
    'CAPABILITY_LOAD_TOOL_KIND',
    'DEFERRED_CAPABILITY_TOOL_METADATA_KEY',
    'LOAD_CAPABILITY_TOOL_NAME',
    'LoadCapabilityArgs',
    'LoadCapabilityCallPart',
    'LoadCapabilityReturn',
    'LoadCapabilityReturnPart',
    'LoadedBlocks',
    'loaded_block_capability_id',
    'loaded_block_id',
    'owned_by_deferred_capability',
    'parse_loaded_capabilities',
    'refresh_loaded_capabilities',
)

LOAD_CAPABILITY_TOOL_NAME = 'load_capability'
"""The name of the tool the model loads a deferred capability with."""

DEFERRED_CAPABILITY_TOOL_METADATA_KEY = 'pydantic_ai_deferred_capability_tool'
"""The key set to `True` in the metadata of the tool definitions a deferred capability owns."""


def owned_by_deferred_capability(tool_def: Any) -> bool:
    """Whether the tool definition `tool_def` is a deferred capability's (every capability's tools carry its
    `capability_id`; a deferred one's are marked in their metadata too)."""
    return tool_def.capability_id is not None and bool(
        (tool_def.metadata or {}).get(DEFERRED_CAPABILITY_TOOL_METADATA_KEY)
    )


def parse_loaded_capabilities(messages: Sequence[ModelMessage]) -> set[str]:
    """The ids of the capabilities `messages` has loaded: those of each `load_capability` call answered by a
    `LoadCapabilityReturnPart` (a call whose arguments name no id, or left unanswered, loads nothing), and those a
    `CapabilityLoadDeltaPart` names (loaded without a call). Only what follows the latest compaction counts
    (`post_compaction_window`, as in pydantic-ai 2.x): a compaction unloads the capabilities loaded before it."""
    asked: dict[str, str] = {}
    loaded: set[str] = set()
    for message in post_compaction_window(messages):
        for part in message.parts:
            if isinstance(part, LoadCapabilityCallPart):
                if (capability_id := part.capability_id) is not None:
                    asked[part.tool_call_id] = capability_id
            elif isinstance(part, LoadCapabilityReturnPart) and (found := asked.get(part.tool_call_id)) is not None:
                loaded.add(found)
            elif isinstance(part, CapabilityLoadDeltaPart):
                loaded.update(part.loaded)
    return loaded


def refresh_loaded_capabilities(
    capabilities: dict[str, Any], loaded: set[str], messages: Sequence[ModelMessage]
) -> None:
    """Set `loaded` (in place: the run's contexts share it) to the deferred capabilities `messages` has loaded among
    `capabilities` (a history may name capabilities the agent no longer has); a run without deferred capabilities is
    left alone (it has no `load_capability` tool)."""
    if any(capability.defer_loading for capability in capabilities.values()):
        found = parse_loaded_capabilities(messages) & capabilities.keys()
        if found != loaded:
            loaded.clear()
            loaded.update(found)


def loaded_block_id(capability_id: str) -> InstructionId:
    """The id of the block a loaded deferred capability's instructions are stated as: `capability:<id>`."""
    return InstructionId(CapabilityInstructionSource(capability_id))


def loaded_block_capability_id(instruction_id: InstructionId | None) -> str | None:
    """The capability whose loaded block `instruction_id` is (`capability:<id>`, no name), or `None`."""
    if instruction_id is None or instruction_id.name is not None:
        return None
    source = instruction_id.source
    return source.id if isinstance(source, CapabilityInstructionSource) else None


@dataclass
class LoadedBlocks:
    """The blocks of the deferred capabilities a history loaded, as the model last got them (pydantic-ai 2.68): a
    load opens the capability's block (`capability:<id>`), stated by the `InstructionDeltaPart`s of that id after it;
    a `load_capability` return written by an earlier Edgewise carries the instructions itself, which then count as
    stated. A compaction unloads the capabilities (as in pydantic-ai 2.x): the blocks start again after it."""

    values: dict[str, str | None] = field(default_factory=dict[str, str | None])
    """Each loaded capability's block text as the model last got it (`None`: not stated), in load order."""
    by_change: set[str] = field(default_factory=set[str])
    """The capabilities whose text an `InstructionDeltaPart` stated (rather than a load return)."""

    _asked: dict[str, str] = field(default_factory=dict[str, str], repr=False)
    """The capability each `load_capability` call seen so far asks for, by tool call id."""

    @classmethod
    def of(cls, messages: Sequence[ModelMessage]) -> LoadedBlocks:
        """The blocks at the end of `messages`."""
        blocks = cls()
        for message in messages:
            for part in message.parts:
                blocks.fold(part)
        return blocks

    def fold(self, part: Any) -> bool:
        """Take in `part`, the next part of the history; whether it states a loaded block (an `InstructionDeltaPart`
        of a loaded capability's block, which is no change of the instructions' prefix)."""
        if isinstance(part, CompactionPart):
            self.values = {}
            self.by_change.clear()
        elif isinstance(part, LoadCapabilityCallPart):
            if (capability_id := part.capability_id) is not None:
                self._asked[part.tool_call_id] = capability_id
        elif isinstance(part, LoadCapabilityReturnPart) and (found := self._asked.get(part.tool_call_id)):
            self._open(found, part.instructions)
        elif isinstance(part, CapabilityLoadDeltaPart):
            for capability_id in part.loaded:
                self._open(capability_id, None)
        elif isinstance(part, InstructionDeltaPart):
            capability_id = loaded_block_capability_id(part.id)
            if capability_id is not None and capability_id in self.values:
                self.values[capability_id] = part.content
                self.by_change.add(capability_id)
                return True
        return False

    def _open(self, capability_id: str, text: str | None) -> None:
        self.values.pop(capability_id, None)  # moved to the end: load order
        self.values[capability_id] = text
        self.by_change.discard(capability_id)

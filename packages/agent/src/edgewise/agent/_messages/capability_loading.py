"""The message side of capabilities loaded on demand (`defer_loading=True`): the typed parts of the
`load_capability` tool and the reading of which capabilities a history has loaded (as pydantic-ai 1.107's module
of this name). The capability side (catalog, tool, gating) is `capabilities._loaded_on_demand`."""

from __future__ import annotations as _annotations

from collections.abc import Sequence
from typing import Any

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
    'parse_loaded_capabilities',
    'refresh_loaded_capabilities',
)

LOAD_CAPABILITY_TOOL_NAME = 'load_capability'
"""The name of the tool the model loads a deferred capability with."""

DEFERRED_CAPABILITY_TOOL_METADATA_KEY = 'pydantic_ai_deferred_capability_tool'
"""The key set to `True` in the metadata of the tool definitions a deferred capability owns."""


def parse_loaded_capabilities(messages: Sequence[ModelMessage]) -> set[str]:
    """The ids of the capabilities `messages` has loaded: those of each `load_capability` call answered by a
    `LoadCapabilityReturnPart` (a call whose arguments name no id, or left unanswered, loads nothing), and those a
    `CapabilityLoadDeltaPart` names (loaded without a call)."""
    asked: dict[str, str] = {}
    loaded: set[str] = set()
    for message in messages:
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
    """Set `loaded` (in place: the run's contexts share it) to the deferred capabilities `messages` has loaded; a
    run without deferred capabilities is left alone (it has no `load_capability` tool)."""
    if any(capability.defer_loading for capability in capabilities.values()):
        found = parse_loaded_capabilities(messages)
        if found != loaded:
            loaded.clear()
            loaded.update(found)

"""Tools revealed mid-run, as the model is told of them: each `ToolAvailabilityDeltaPart` of a history becomes a
short system prompt naming the tools (a step of `Model.prepare_messages`), unless the model takes them natively
(`tool_addition_mode`: the part then stays for its request mapping, see `_tool_additions`)."""

from __future__ import annotations as _annotations

import dataclasses

from .._messages.capability_loading import owned_by_deferred_capability
from .._messages.model_messages import (
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    RetryPromptPart,
    SystemPromptPart,
    ToolAvailabilityDeltaPart,
    ToolReturnPart,
)
from .._messages.tool_parts import TOOL_SEARCH_NATIVE_KIND
from ._request_parameters import ModelRequestParameters

__all__ = ('TOOL_AVAILABILITY_ANNOUNCEMENT', 'announce_tool_availability')


TOOL_AVAILABILITY_ANNOUNCEMENT = 'The following tool(s) are now available: {names}'
"""What the model is told where a `ToolAvailabilityDeltaPart` stands (the wording of pydantic-ai 2.x: the fact only,
since the tools' definitions are in the request)."""


def announce_tool_availability(
    messages: list[ModelMessage], parameters: ModelRequestParameters | None, *, native: bool = False
) -> list[ModelMessage]:
    """`messages` with each `ToolAvailabilityDeltaPart` as a system prompt (see `Model.prepare_messages`); with
    `native` (the model has a `tool_addition_mode`), each part is kept where it stands. Either way the tool results
    of a request holding one go first."""
    served: set[str] | None = None
    if parameters is not None:
        tools = parameters.function_tools
        served = {
            t.name
            for t in tools
            if t.defer_loading or t.with_native == TOOL_SEARCH_NATIVE_KIND or owned_by_deferred_capability(t)
        }
    prepared: list[ModelMessage] = []
    changed = False
    for message in messages:
        if not isinstance(message, ModelRequest) or not any(
            isinstance(part, ToolAvailabilityDeltaPart) for part in message.parts
        ):
            prepared.append(message)
            continue
        changed = True
        parts: list[ModelRequestPart] = []
        for part in message.parts:
            if not isinstance(part, ToolAvailabilityDeltaPart) or native:
                parts.append(part)
            elif added := [name for name in part.tools_added if served is None or name in served]:
                names = ', '.join(f'`{name}`' for name in added)
                parts.append(SystemPromptPart(TOOL_AVAILABILITY_ANNOUNCEMENT.format(names=names)))
        if parts:
            # Tool results first (some APIs want them to open the message), except a first request's system prompts.
            keep = 0
            if not prepared:
                while keep < len(parts) and isinstance(parts[keep], SystemPromptPart):
                    keep += 1
            tail = sorted(parts[keep:], key=lambda p: not isinstance(p, ToolReturnPart | RetryPromptPart))
            prepared.append(dataclasses.replace(message, parts=[*parts[:keep], *tail]))
    return prepared if changed else messages

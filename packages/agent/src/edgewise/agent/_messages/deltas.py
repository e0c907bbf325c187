"""Records of what changed mid-conversation besides tools (pydantic-ai 2.68): capabilities loaded without a
`load_capability` call (`CapabilityLoadDeltaPart`) and model settings that change from a point on
(`ModelSettingsDeltaPart`, with the settings it records, `RecordedModelSettings`). Both are request parts of the
history, kept for the run and its readers; a model is sent what they mean, not the parts.
"""

from __future__ import annotations as _annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from typing_extensions import TypedDict

from .tool_parts import _repr

if TYPE_CHECKING:
    from .otel import OtelMessagePart, TraceContentOptions

__all__ = ('RecordedModelSettings', 'RecordedThinkingEffort', 'CapabilityLoadDeltaPart', 'ModelSettingsDeltaPart')

RecordedThinkingEffort = Literal['minimal', 'low', 'medium', 'high', 'xhigh', 'max']
"""The effort levels a recorded `thinking` setting holds (pydantic-ai 2.68's, `'max'` included, so its histories
load)."""


class RecordedModelSettings(TypedDict, total=False):
    """The settings a `ModelSettingsDeltaPart` records, under their unified `ModelSettings` keys, as JSON values."""

    thinking: RecordedThinkingEffort | None
    """The effort level in effect, or `None` when `thinking` names no level (`True`, `False` or unset)."""


@dataclass(repr=False, kw_only=True)
class CapabilityLoadDeltaPart:
    """On-demand capabilities loaded at this point of the conversation without a `load_capability` call (additions
    only); they apply from the next request on. Never sent to a model: it sees their instructions and tools."""

    loaded: list[str] = field(default_factory=list)
    """The ids of the capabilities loaded here, in load order."""
    tool_call_id: str | None = None
    """The tool call being handled when they were loaded, if any."""
    part_kind: Literal['capability-load-delta'] = 'capability-load-delta'
    """Tag of this part kind in serialized messages."""

    def otel_message_parts(self, settings: TraceContentOptions) -> list[OtelMessagePart]:
        """The change as trace text: capability ids are no user content, so they are always recorded."""
        from .otel import OtelTextPart  # (loaded by the first traced run)

        changes = ', '.join(f'+{capability_id}' for capability_id in self.loaded)
        return [OtelTextPart(type='text', content=f'Loaded capabilities changed: {changes}')]

    def __repr__(self) -> str:
        return _repr(self, ('loaded', 'tool_call_id'))


@dataclass(repr=False, kw_only=True)
class ModelSettingsDeltaPart:
    """Model settings that change from this point of the conversation on (today the effort level of `thinking`).
    A model with no way to take the change mid-conversation gets the current value as its request setting."""

    settings: RecordedModelSettings
    """The settings that changed, with their value from here on."""
    top_level: bool = False
    """Whether the request sent `settings` as request-level settings, opening a new window (the first request
    naming an effort, or a change no mid-conversation channel expresses)."""
    part_kind: Literal['model-settings-delta'] = 'model-settings-delta'
    """Tag of this part kind in serialized messages."""

    def otel_message_parts(self, settings: TraceContentOptions) -> list[OtelMessagePart]:
        """The change as trace text: settings are configuration, no user content, so they are always recorded."""
        from .otel import OtelTextPart  # (loaded by the first traced run)

        changes = ', '.join(f'{key}={value!r}' for key, value in self.settings.items())
        return [OtelTextPart(type='text', content=f'Model settings changed: {changes}')]

    def __repr__(self) -> str:
        shown = _repr(self, ('settings',))
        return shown if not self.top_level else f'{shown[:-1]}, top_level=True)'

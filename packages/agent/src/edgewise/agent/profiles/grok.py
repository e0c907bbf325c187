"""The profile of xAI's Grok models."""

from __future__ import annotations as _annotations

from typing import Literal, TypeAlias

from . import ModelProfile

__all__ = ('GrokModelProfile', 'GrokReasoningEffort', 'grok_model_profile')

GrokReasoningEffort: TypeAlias = Literal['none', 'low', 'medium', 'high']
"""xAI's `reasoning_effort` values."""

# Grok 4.3, its aliases, and the retired names xAI now serves with it.
_GROK_4_3_NAMES = frozenset(
    (
        'grok-4.3',
        'grok-4.3-latest',
        'grok-latest',
        'grok-4-0709',
        'grok-4-1-fast-reasoning',
        'grok-4-1-fast-non-reasoning',
        'grok-4-fast-reasoning',
        'grok-4-fast-non-reasoning',
        'grok-3',
    )
)


class GrokModelProfile(ModelProfile, total=False):
    """A profile with xAI's own fields (all prefixed `grok_`, so that profiles merge)."""

    grok_supports_builtin_tools: bool
    """Whether the model has xAI's server-side tools (web search, code execution, ...) (default `False`)."""
    grok_supports_tool_choice_required: bool
    """Deprecated: use `supports_forced_tool_choice` (read under that name, with a deprecation warning)."""
    grok_reasoning_efforts: frozenset[GrokReasoningEffort]
    """The `reasoning_effort` values the model accepts (empty: it does not take one) (default `frozenset()`)."""


def grok_model_profile(model_name: str) -> ModelProfile | None:
    """The profile of a Grok model: native and JSON output, and its reasoning efforts."""
    efforts: frozenset[GrokReasoningEffort]
    if model_name in _GROK_4_3_NAMES:
        efforts = frozenset(('none', 'low', 'medium', 'high'))
    elif model_name.startswith('grok-3-mini'):
        efforts = frozenset(('low', 'high'))
    else:
        efforts = frozenset()
    return GrokModelProfile(
        supports_json_schema_output=True,
        supports_json_object_output=True,
        supports_thinking=bool(efforts),
        # A model that reasons but has no 'none' effort cannot stop reasoning.
        thinking_always_enabled=bool(efforts) and 'none' not in efforts,
        grok_supports_builtin_tools=model_name.startswith('grok-4')
        or 'code' in model_name
        or 'build' in model_name
        or model_name in _GROK_4_3_NAMES,
        grok_reasoning_efforts=efforts,
    )

"""The profile of Anthropic's Claude models."""

from __future__ import annotations as _annotations

from typing import Literal, TypeAlias

from ..native_tools import SUPPORTED_NATIVE_TOOLS
from ..native_tools._tool_search import ToolSearchTool
from . import ModelProfile

__all__ = (
    'AnthropicModelProfile',
    'AnthropicEffort',
    'ANTHROPIC_THINKING_BUDGET_MAP',
    'ANTHROPIC_THINKING_EFFORT_MAP',
    'anthropic_model_profile',
    'resolve_anthropic_effort',
)

AnthropicEffort: TypeAlias = Literal['low', 'medium', 'high', 'xhigh', 'max']
"""The values of `output_config.effort`."""

ANTHROPIC_THINKING_BUDGET_MAP: dict[bool | str, int] = {
    True: 10000,
    'minimal': 1024,
    'low': 2048,
    'medium': 10000,
    'high': 16384,
    'xhigh': 32768,
    'max': 32768,
}
"""Provider-neutral thinking levels and the `budget_tokens` for each, on models with budget-based thinking."""

ANTHROPIC_THINKING_EFFORT_MAP: dict[str, AnthropicEffort] = {
    'minimal': 'low',
    'low': 'low',
    'medium': 'medium',
    'high': 'high',
    'xhigh': 'max',
    'max': 'max',
}
"""Provider-neutral thinking levels and the `output_config.effort` for each (`xhigh` where the model takes it:
`resolve_anthropic_effort`)."""

_STRUCTURED_OUTPUT_MODELS = (
    'claude-fable-5',
    'claude-mythos-5',
    'claude-haiku-4-5',
    'claude-sonnet-4-5',
    'claude-sonnet-4-6',
    'claude-opus-4-1',
    'claude-opus-4-5',
    'claude-opus-4-6',
    'claude-opus-4-7',
    'claude-opus-4-8',
)
_ADAPTIVE_THINKING_MODELS = (
    'claude-fable-5',
    'claude-mythos-5',
    'claude-sonnet-4-6',
    'claude-opus-4-6',
    'claude-opus-4-7',
    'claude-opus-4-8',
)
_EFFORT_MODELS = (*_ADAPTIVE_THINKING_MODELS, 'claude-opus-4-5')
_LATEST_MODELS = ('claude-fable-5', 'claude-mythos-5', 'claude-opus-4-7', 'claude-opus-4-8')
# The models taking Anthropic's tool search tools (`tool_search_tool_bm25` / `_regex`), as pydantic-ai 2.68 has it.
_TOOL_SEARCH_MODELS = (
    'claude-fable-5',
    'claude-mythos-5',
    'claude-sonnet-4-5',
    'claude-sonnet-4-6',
    'claude-sonnet-5',
    'claude-opus-4-5',
    'claude-opus-4-6',
    'claude-opus-4-7',
    'claude-opus-4-8',
    'claude-opus-5',
    'claude-haiku-4-5',
    'claude-haiku-5-5',
)
_NO_FORCED_TOOL_MODELS = ('claude-fable-5', 'claude-mythos-5', 'claude-mythos-preview')


class AnthropicModelProfile(ModelProfile, total=False):
    """A profile with the fields of Anthropic's Messages API (all prefixed `anthropic_`, so that profiles merge)."""

    anthropic_supports_fast_speed: bool
    """Whether `anthropic_speed='fast'` is accepted (default `False`)."""
    anthropic_supports_adaptive_thinking: bool
    """Whether thinking is `{'type': 'adaptive'}` (else `{'type': 'enabled', 'budget_tokens': n}`) (default `False`)."""
    anthropic_supports_effort: bool
    """Whether `output_config.effort` is accepted (default `False`)."""
    anthropic_supports_xhigh_effort: bool
    """Whether the `xhigh` effort is accepted (else `max` is used) (default `False`)."""
    anthropic_supports_max_effort: bool
    """Whether the `max` effort is accepted (default `True`; not on Claude Opus 4.5, which takes `low` to `high`).
    Where it is not, `thinking='max'` (and `'xhigh'` where it would be `max`) asks for the highest effort the model
    takes; an explicit `anthropic_effort='max'` is sent as given."""
    anthropic_disallows_budget_thinking: bool
    """Whether budget-based thinking is rejected (default `False`)."""
    anthropic_disallows_sampling_settings: bool
    """Whether `temperature` and `top_p` are rejected (and so left out of requests) (default `False`)."""
    anthropic_supports_task_budgets: bool
    """Whether `output_config.task_budget` is accepted (default `False`)."""
    anthropic_supports_message_batches: bool
    """Whether the endpoint serves Message Batches (default: only the `anthropic` provider does)."""
    anthropic_supports_forced_tool_choice: bool
    """Deprecated: use `supports_forced_tool_choice` (read under that name, with a deprecation warning)."""


_THINKING_BY_DEFAULT_MODELS = (
    'claude-fable-5',
    'claude-mythos-5',
    'claude-mythos-preview',
    'claude-opus-5',
    'claude-sonnet-5',
    'claude-haiku-5-5',
)
"""The Claude models that think when the request sets no `thinking` (as pydantic-ai 2.68 lists them)."""


def resolve_anthropic_effort(level: str, *, supports_xhigh: bool, supports_max: bool = True) -> AnthropicEffort:
    """The `output_config.effort` for a provider-neutral thinking level, on a model that takes `xhigh`
    (`supports_xhigh`) and `max` (`supports_max`) or not: a level it lacks becomes the highest it takes."""
    if level == 'xhigh' and supports_xhigh:
        return 'xhigh'
    effort = ANTHROPIC_THINKING_EFFORT_MAP[level]
    if effort == 'max' and not supports_max:
        return 'xhigh' if supports_xhigh else 'high'
    return effort


def anthropic_model_profile(model_name: str) -> ModelProfile | None:
    """The profile of a Claude model.

    Claude reasons in `thinking` blocks (signed, sent back only to Anthropic). Reasoning from other models goes
    back as text: Claude copies tags from its earlier turns into its answers (`mimics_assistant_message_formatting`),
    so it is framed as `<assistant_thinking>` in a user turn ahead of the reply (an adapter that splits Claude's
    text uses the `<thinking>` tags). Recent models take native structured output. The models
    with Anthropic's tool search take `ToolSearchTool` and a deferred tool on its own (`tool_deferral_mode=
    'standalone'`); the others neither.
    """
    latest = model_name.startswith(_LATEST_MODELS)
    tool_search = model_name.startswith(_TOOL_SEARCH_MODELS)
    profile = AnthropicModelProfile(
        thinking_tags=('<thinking>', '</thinking>'),
        mimics_assistant_message_formatting=True,
        supports_json_schema_output=model_name.startswith(_STRUCTURED_OUTPUT_MODELS),
        supports_thinking=True,
        anthropic_supports_fast_speed=model_name.startswith(('claude-opus-4-6', 'claude-opus-4-7', 'claude-opus-4-8')),
        anthropic_supports_adaptive_thinking=model_name.startswith(_ADAPTIVE_THINKING_MODELS),
        anthropic_supports_effort=model_name.startswith(_EFFORT_MODELS),
        anthropic_supports_xhigh_effort=latest,
        anthropic_supports_max_effort=not model_name.startswith('claude-opus-4-5'),
        anthropic_disallows_budget_thinking=latest,
        anthropic_disallows_sampling_settings=latest,
        anthropic_supports_task_budgets=latest,
        supports_forced_tool_choice=not model_name.startswith(_NO_FORCED_TOOL_MODELS),
        forced_tool_choice_disables_thinking=True,
        thinking_enabled_by_default=model_name.startswith(_THINKING_BY_DEFAULT_MODELS),
    )
    if tool_search:
        profile['tool_deferral_mode'] = 'standalone'
    else:
        profile['supported_native_tools'] = SUPPORTED_NATIVE_TOOLS - {ToolSearchTool}
    return profile

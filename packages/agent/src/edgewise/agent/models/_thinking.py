"""The unified `thinking` and `service_tier` settings, resolved for a request and mapped to each API's own settings.

`resolve_thinking` moves `thinking` into `ModelRequestParameters.thinking` when the model's profile can reason.
Each API then gets its settings with its own keys filled in from the unified values (`openai_settings`,
`anthropic_settings`, `google_settings`): a key the user set is never replaced, so a provider's own setting
wins, and the mapping modules read only their own keys.
"""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast, get_args

from ..exceptions import UserError
from ..profiles import ModelProfile
from ..settings import ServiceTier, ThinkingEffort
from ._request_parameters import ModelRequestParameters

if TYPE_CHECKING:
    from ..profiles.anthropic import AnthropicModelProfile
    from ..profiles.google import GoogleModelProfile
    from ..profiles.openai import OpenAIModelProfile, OpenAIReasoningEffort

__all__ = (
    'GOOGLE_THINKING_BUDGETS',
    'GOOGLE_THINKING_LEVELS',
    'anthropic_settings',
    'google_service_tier',
    'google_settings',
    'openai_effort',
    'takes_effort_none',
    'openai_settings',
    'resolve_thinking',
)

GOOGLE_THINKING_LEVELS: dict[ThinkingEffort, str] = {
    'minimal': 'MINIMAL',
    'low': 'LOW',
    'medium': 'MEDIUM',
    'high': 'HIGH',
    'xhigh': 'HIGH',
    'max': 'HIGH',
}
"""`thinkingConfig.thinkingLevel` for each effort, on Gemini 3 and later (`xhigh` and `max` have no level of their
own)."""

GOOGLE_THINKING_BUDGETS: dict[ThinkingEffort, int] = {
    'minimal': 128,
    'low': 2048,
    'medium': 8192,
    'high': 24576,
    'xhigh': 24576,
    'max': 24576,
}
"""`thinkingConfig.thinkingBudget` for each effort, on Gemini 2.5 (128 is the least 2.5 Pro takes; 24576 the
most that 2.5 Flash takes)."""

_SettingsT = TypeVar('_SettingsT', bound=Mapping[str, Any])

_THINKING_LEVELS: tuple[bool | str, ...] = (True, False, *get_args(ThinkingEffort))
_SERVICE_TIERS: tuple[str, ...] = get_args(ServiceTier)
_ANTHROPIC_SERVICE_TIERS: dict[str, Literal['auto', 'standard_only']] = {
    'auto': 'auto',
    'default': 'standard_only',
}
_GOOGLE_SERVICE_TIERS: dict[str, str] = {'default': 'standard', 'flex': 'flex', 'priority': 'priority'}


def resolve_thinking(
    settings: Mapping[str, Any], params: ModelRequestParameters, profile: ModelProfile
) -> ModelRequestParameters:
    """`params` with `thinking` set from the settings' `thinking`, if the model can reason.

    A model whose profile neither supports thinking nor always thinks ignores the setting, and one that always
    thinks ignores `thinking=False` (OpenAI's mappings may still ask it for its least reasoning: `openai_settings`).

    Raises:
        UserError: `thinking` or `service_tier` is not one of the values they take.
    """
    tier = settings.get('service_tier')
    if tier is not None and not any(tier == value for value in _SERVICE_TIERS):
        raise UserError(f'`service_tier` must be one of {", ".join(map(repr, _SERVICE_TIERS))}, not {tier!r}.')
    if 'thinking' not in settings:
        return params
    thinking = settings['thinking']
    if not any(thinking is value or (isinstance(value, str) and thinking == value) for value in _THINKING_LEVELS):
        raise UserError(
            f'`thinking` must be True, False or one of {", ".join(map(repr, _THINKING_LEVELS[2:]))}, not {thinking!r}.'
        )
    if not (profile.get('supports_thinking', False) or profile.get('thinking_always_enabled', False)):
        return params
    if thinking is False and profile.get('thinking_always_enabled', False):
        return params
    return dataclasses.replace(params, thinking=thinking)


def _asks_for_least(profile: ModelProfile, api: Literal['chat', 'responses']) -> bool:
    """Whether `thinking=False` asks a model that always reasons for its least reasoning on `api`: its profile pins
    the efforts it takes, or (on Chat Completions) names the body fields that do it."""
    if not profile.get('thinking_always_enabled', False):
        return False
    return bool(profile.get('openai_reasoning_efforts')) or (
        api == 'chat' and 'openai_chat_thinking_false_body' in profile
    )


def takes_effort_none(profile: ModelProfile) -> bool:
    """Whether the model takes `reasoning_effort='none'` (and then sampling settings): `'none'` among the efforts its
    profile pins (`openai_reasoning_efforts`), else `openai_supports_reasoning_effort_none`."""
    efforts = cast('OpenAIModelProfile', profile).get('openai_reasoning_efforts')
    if efforts is not None:
        return 'none' in efforts
    return bool(profile.get('openai_supports_reasoning_effort_none', False))


def openai_settings(
    settings: _SettingsT, params: ModelRequestParameters, profile: ModelProfile, api: Literal['chat', 'responses']
) -> _SettingsT:
    """The settings with `openai_reasoning_effort` and `openai_service_tier` taken from the unified ones when unset.

    Chat Completions and the Responses API take the same values: `thinking=True` is `'medium'`, `False` is
    `'none'`, and the service tiers are OpenAI's own. The profile narrows the effort to what the model takes
    (`openai_reasoning_efforts`, `openai_supports_minimal_reasoning_effort`, and `'max'` where `api` takes it), and
    on Chat Completions `thinking=False` may be sent as other body fields (`openai_chat_thinking_false_body`). A
    model that always reasons, whose `thinking=False` `resolve_thinking` set aside, is asked for its least reasoning
    where the profile says how (its pinned efforts, or those body fields).
    """
    filled: dict[str, Any] = dict(settings)
    thinking = params.thinking
    if thinking is None and settings.get('thinking') is False and _asks_for_least(profile, api):
        thinking = False
    if not filled.get('openai_reasoning_effort') and thinking is not None:
        openai_profile = cast('OpenAIModelProfile', profile)
        off_body = openai_profile.get('openai_chat_thinking_false_body') if api == 'chat' else None
        if thinking is False and off_body is not None:
            extra = filled.get('extra_body')
            filled['extra_body'] = {**off_body, **(extra if isinstance(extra, Mapping) else {})}
        elif (effort := openai_effort(thinking, openai_profile, api)) is not None:
            filled['openai_reasoning_effort'] = effort
    if not filled.get('openai_service_tier') and (tier := filled.get('service_tier')):
        filled['openai_service_tier'] = tier
    return cast(_SettingsT, filled)


def openai_effort(
    thinking: bool | ThinkingEffort, profile: OpenAIModelProfile, api: Literal['chat', 'responses']
) -> OpenAIReasoningEffort | None:
    """The reasoning effort sent for a unified thinking level, on `api` (`None`: none is sent)."""
    from ..profiles.openai import OPENAI_REASONING_EFFORT_MAP, OpenAIReasoningEffort

    key = (
        'openai_chat_supports_max_reasoning_effort'
        if api == 'chat'
        else 'openai_responses_supports_max_reasoning_effort'
    )
    takes_max = bool(profile.get(key, False))
    wanted: OpenAIReasoningEffort = 'max' if thinking == 'max' and takes_max else OPENAI_REASONING_EFFORT_MAP[thinking]
    accepted = profile.get('openai_reasoning_efforts')
    if accepted is None:
        if thinking is False and profile.get('thinking_always_enabled', False):
            return None  # no effort is known to be its least: the model reasons as it does by default
        if wanted == 'minimal' and not profile.get('openai_supports_minimal_reasoning_effort', True):
            return 'low'
        return wanted
    order: tuple[OpenAIReasoningEffort, ...] = get_args(OpenAIReasoningEffort)
    ranked = sorted((e for e in accepted if e != 'max' or takes_max), key=order.index)
    if thinking is False:
        return ranked[0] if ranked else None  # `'none'` where accepted, else the least reasoning the model does
    levels = [e for e in ranked if e != 'none']
    at_or_above = [e for e in levels if order.index(e) >= order.index(wanted)]
    return at_or_above[0] if at_or_above else (levels[-1] if levels else None)


def anthropic_settings(
    settings: _SettingsT, params: ModelRequestParameters, profile: ModelProfile, model_name: str
) -> _SettingsT:
    """The settings with `anthropic_thinking`, `anthropic_effort` and `anthropic_service_tier` taken from the
    unified ones when unset.

    Thinking is adaptive on the models that have it and a token budget on the others (`thinking=False` sends
    nothing); an effort level also becomes `output_config.effort` on the models that take one.

    Raises:
        UserError: budget-based `anthropic_thinking` for a model that accepts only adaptive thinking.
    """
    from ..profiles.anthropic import ANTHROPIC_THINKING_BUDGET_MAP, resolve_anthropic_effort

    anthropic_profile = cast('AnthropicModelProfile', profile)
    filled: dict[str, Any] = dict(settings)
    given = filled.get('anthropic_thinking')
    if given and given.get('type') == 'enabled' and anthropic_profile.get('anthropic_disallows_budget_thinking', False):
        raise UserError(
            f'{model_name!r} does not support '
            "`anthropic_thinking={'type': 'enabled', 'budget_tokens': ...}`. "
            "Use `anthropic_thinking={'type': 'adaptive'}` and `anthropic_effort=...` instead."
        )
    thinking = params.thinking
    if not given and thinking is not None and thinking is not False:
        if anthropic_profile.get('anthropic_supports_adaptive_thinking', False):
            filled['anthropic_thinking'] = {'type': 'adaptive'}
        else:
            filled['anthropic_thinking'] = {'type': 'enabled', 'budget_tokens': ANTHROPIC_THINKING_BUDGET_MAP[thinking]}
    if (
        filled.get('anthropic_effort') is None
        and isinstance(thinking, str)
        and anthropic_profile.get('anthropic_supports_effort', False)
    ):
        filled['anthropic_effort'] = resolve_anthropic_effort(
            thinking,
            supports_xhigh=anthropic_profile.get('anthropic_supports_xhigh_effort', False),
            supports_max=anthropic_profile.get('anthropic_supports_max_effort', True),
        )
    tier = _ANTHROPIC_SERVICE_TIERS.get(filled.get('service_tier', ''))
    if not filled.get('anthropic_service_tier') and tier:
        filled['anthropic_service_tier'] = tier
    return cast(_SettingsT, filled)


def google_settings(settings: _SettingsT, params: ModelRequestParameters, profile: ModelProfile) -> _SettingsT:
    """The settings with `google_thinking_config` taken from the unified `thinking` when unset.

    Gemini 3 and later are given a `thinking_level`, Gemini 2.5 a `thinking_budget`; thinking that is on asks
    for the thoughts too (`include_thoughts`), and `thinking=False` asks for the least reasoning the model has.
    """
    filled: dict[str, Any] = dict(settings)
    thinking = params.thinking
    if filled.get('google_thinking_config') or thinking is None:
        return cast(_SettingsT, filled)
    by_level = cast('GoogleModelProfile', profile).get('google_supports_thinking_level', False)
    config: dict[str, Any]
    if thinking is False:
        config = {'thinking_level': 'MINIMAL'} if by_level else {'thinking_budget': 0}
    elif thinking is True:
        config = {'include_thoughts': True}
    elif by_level:
        config = {'include_thoughts': True, 'thinking_level': GOOGLE_THINKING_LEVELS[thinking]}
    else:
        config = {'include_thoughts': True, 'thinking_budget': GOOGLE_THINKING_BUDGETS[thinking]}
    filled['google_thinking_config'] = config
    return cast(_SettingsT, filled)


def google_service_tier(settings: Mapping[str, Any]) -> str | None:
    """The Gemini API's `serviceTier` for the unified `service_tier` (`None` for `'auto'`: the server decides)."""
    tier = settings.get('service_tier')
    return _GOOGLE_SERVICE_TIERS.get(tier) if tier else None

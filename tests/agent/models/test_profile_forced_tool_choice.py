"""pydantic-ai 2.x's `supports_forced_tool_choice` family of profile keys: one spelling for every provider, the
provider-named spellings of before read under it with a deprecation warning, and forcing while thinking."""

from __future__ import annotations

import warnings
from typing import Any, cast

import pytest

from edgewise.agent._warnings import PydanticAIDeprecationWarning
from edgewise.agent.exceptions import UserError
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models._anthropic_mapping import _tool_choice as anthropic_tool_choice
from edgewise.agent.models._openai_chat import build_body
from edgewise.agent.models._openai_responses_mapping import responses_request_body
from edgewise.agent.models.openai import OpenAIChatModel
from edgewise.agent.profiles import DEFAULT_PROFILE, ModelProfile, merge_profile
from edgewise.agent.profiles.anthropic import AnthropicModelProfile
from edgewise.agent.profiles.openai import OpenAIModelProfile
from edgewise.agent.providers.openai import OpenAIProvider
from edgewise.agent.tools import ToolDefinition

TOOL = ToolDefinition(name='weather', parameters_json_schema={'type': 'object', 'properties': {}})
PARAMS = ModelRequestParameters(function_tools=[TOOL])
OUTPUT = ToolDefinition(name='final_result', parameters_json_schema={'type': 'object', 'properties': {}}, kind='output')


def _legacy(**keys: Any) -> ModelProfile:
    return cast(ModelProfile, keys)


def test_the_new_keys_have_defaults() -> None:
    assert (
        DEFAULT_PROFILE['supports_forced_tool_choice'],
        DEFAULT_PROFILE['supports_forced_tool_choice_with_thinking'],
        DEFAULT_PROFILE['forced_tool_choice_disables_thinking'],
    ) == (True, True, False)


@pytest.mark.parametrize(
    ('old', 'new'),
    [
        ('openai_supports_tool_choice_required', 'supports_forced_tool_choice'),
        ('grok_supports_tool_choice_required', 'supports_forced_tool_choice'),
        ('anthropic_supports_forced_tool_choice', 'supports_forced_tool_choice'),
        ('openai_supports_forced_tool_choice_with_thinking', 'supports_forced_tool_choice_with_thinking'),
        ('openrouter_supports_forced_tool_choice_with_thinking', 'supports_forced_tool_choice_with_thinking'),
    ],
)
def test_an_old_spelling_is_read_under_the_new_one_with_a_warning(old: str, new: str) -> None:
    with pytest.warns(PydanticAIDeprecationWarning, match=f'`{old}` is deprecated, use `{new}` instead'):
        merged = merge_profile(ModelProfile(supports_tools=True), _legacy(**{old: False}))
    assert merged == {'supports_tools': True, new: False}
    # A later layer's old spelling still replaces an earlier layer's new one.
    with pytest.warns(PydanticAIDeprecationWarning):
        assert merge_profile(_legacy(**{new: True}), _legacy(**{old: False}))[new] is False  # type: ignore[literal-required]


def test_two_old_spellings_must_both_allow_and_a_new_one_in_the_same_layer_wins() -> None:
    with pytest.warns(PydanticAIDeprecationWarning):
        both = merge_profile(
            _legacy(openai_supports_tool_choice_required=True, anthropic_supports_forced_tool_choice=False)
        )
    assert both == {'supports_forced_tool_choice': False}
    with pytest.warns(PydanticAIDeprecationWarning):
        explicit = merge_profile(_legacy(openai_supports_tool_choice_required=False, supports_forced_tool_choice=True))
    assert explicit == {'supports_forced_tool_choice': True}


def test_profiles_without_old_spellings_do_not_warn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        assert merge_profile(ModelProfile(supports_forced_tool_choice=False), None) == {
            'supports_forced_tool_choice': False
        }


def test_a_models_profile_argument_in_the_old_spelling_still_works() -> None:
    provider = OpenAIProvider(api_key='k')
    model = OpenAIChatModel('gpt-4o', provider=provider, profile=_legacy(openai_supports_tool_choice_required=False))
    with pytest.warns(PydanticAIDeprecationWarning):
        profile = model.profile  # resolved on first use
    assert profile['supports_forced_tool_choice'] is False
    # A callable `profile=` that keeps the resolved default but adds an old spelling: the old spelling counts.
    derived = OpenAIChatModel(
        'gpt-4o',
        provider=provider,
        profile=lambda resolved: cast(ModelProfile, {**resolved, 'openai_supports_tool_choice_required': False}),
    )
    with pytest.warns(PydanticAIDeprecationWarning):
        profile = derived.profile
    assert profile['supports_forced_tool_choice'] is False


def _chat(settings: dict[str, Any], profile: OpenAIModelProfile) -> Any:
    return build_body(model_name='m', messages=[], settings=settings, params=PARAMS, profile=profile, stream=False).get(
        'tool_choice'
    )


def _responses(settings: dict[str, Any], profile: OpenAIModelProfile) -> Any:
    return responses_request_body('m', [], settings, PARAMS, profile)['tool_choice']  # type: ignore[arg-type]


@pytest.mark.parametrize('body', [_chat, _responses])
def test_forcing_while_thinking(body: Any) -> None:
    no_forcing_while_thinking = OpenAIModelProfile(supports_forced_tool_choice_with_thinking=False)
    assert body({'tool_choice': 'required'}, no_forcing_while_thinking) == 'required'  # not thinking: sent
    for thinking in ({'thinking': True}, {'thinking': 'high'}, {'openai_reasoning_effort': 'low'}):
        with pytest.raises(UserError, match='does not support forcing tool use while thinking is enabled'):
            body({'tool_choice': 'required', **thinking}, no_forcing_while_thinking)
    for not_thinking in ({'thinking': False}, {'openai_reasoning_effort': 'none'}):
        assert body({'tool_choice': 'required', **not_thinking}, no_forcing_while_thinking) == 'required'
    always = OpenAIModelProfile(supports_forced_tool_choice_with_thinking=False, thinking_always_enabled=True)
    with pytest.raises(UserError, match='while thinking is enabled'):
        body({'tool_choice': 'required'}, always)
    with pytest.raises(UserError, match=r"Use `tool_choice='auto'` instead"):
        body({'tool_choice': 'required'}, OpenAIModelProfile(supports_forced_tool_choice=False))


def test_anthropic_reads_the_new_key() -> None:
    refuses = AnthropicModelProfile(supports_forced_tool_choice=False)
    _, choice = anthropic_tool_choice(
        {}, ModelRequestParameters(function_tools=[TOOL], output_tools=[OUTPUT], allow_text_output=False), refuses
    )
    assert choice == {'type': 'auto'}
    with pytest.raises(UserError, match='Anthropic does not support'):
        anthropic_tool_choice({'tool_choice': 'required'}, PARAMS, refuses)
    _, forced = anthropic_tool_choice({'tool_choice': 'required'}, PARAMS, AnthropicModelProfile())
    assert forced == {'type': 'any'}


def test_anthropic_adaptive_thinking_takes_only_an_explicitly_forced_call() -> None:
    output_only = ModelRequestParameters(function_tools=[TOOL], output_tools=[OUTPUT], allow_text_output=False)
    adaptive: Any = {'anthropic_thinking': {'type': 'adaptive'}}
    forced_adaptive: Any = {**adaptive, 'tool_choice': 'required'}
    claude = AnthropicModelProfile(forced_tool_choice_disables_thinking=True)
    # The output's forcing would stop the model from thinking: the model is told to use a tool instead.
    assert anthropic_tool_choice(adaptive, output_only, claude)[1] == {'type': 'auto'}
    # Asked for explicitly, the call is forced (and that answer is given without thinking).
    assert anthropic_tool_choice(forced_adaptive, PARAMS, claude)[1] == {'type': 'any'}
    # A model whose forcing keeps it thinking is forced either way.
    assert anthropic_tool_choice(adaptive, output_only, AnthropicModelProfile())[1] == {'type': 'any'}
    # Extended thinking takes no forcing at all.
    enabled: Any = {'anthropic_thinking': {'type': 'enabled', 'budget_tokens': 1024}}
    forced_enabled: Any = {**enabled, 'tool_choice': 'required'}
    assert anthropic_tool_choice(enabled, output_only, claude)[1] == {'type': 'auto'}
    with pytest.raises(UserError, match='with thinking mode'):
        anthropic_tool_choice(forced_enabled, PARAMS, claude)
